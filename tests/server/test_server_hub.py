"""A real JupyterHub (the dummy authenticator, local single-user servers, configurable-http-proxy — the PyPI
port from the test extra, or npm's): ``pyaichat --server https://hub/user/NAME/`` with a hub API token, and
what a hub answers when the token is wrong or the user's server is not running."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub")
from hub_process import Hub, proxy_command, start_hub

from pyaichat.configuration.config import Config
from pyaichat.runtime.jupyter_server.kernels import attach, running, start
from pyaichat.runtime.jupyter_server.rest import ServerAPI, ServerError, TokenRefused, parse_address

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(proxy_command() is None, reason="configurable-http-proxy is not installed"),
]


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    hub = start_hub(tmp_path_factory.mktemp("hub"))
    yield hub
    hub.stop()


def test_a_hub_users_server_with_a_hub_api_token(hub: Hub, tmp_path: Path) -> None:
    hub.start_server("ada")
    token = hub.user_token("ada")
    address, _ = parse_address(f"{hub.url}user/ada/lab/tree/analysis.ipynb")  # as the browser shows it
    assert address.base == f"{hub.url}user/ada/" and address.hub_user == "ada"
    api = ServerAPI(address, token)
    runtime = start(api, "python3", Config(audit=False, color=False))  # a kernel on ada's server
    try:
        assert runtime.run("rows = [2, 3]\nsum(rows)").output.strip() == "5"
        assert runtime.call("get_type", {"expr": "rows"}).text.startswith("rows: list")
        assert f"on {hub.url}user/ada/" in runtime.describe()
        (entry,) = running(api)
        second = attach(api, entry, Config(audit=False, color=False))  # as /mcp on's second connection
        try:
            assert second.call("eval_expr", {"expr": "len(rows)"}).text.strip().endswith("2")
        finally:
            second.close()
    finally:
        runtime.close()
    assert running(api) == []  # the kernel pyaichat started went with it

    # the command line, with the token from the environment
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(JUPYTER_TOKEN=token, XDG_STATE_HOME=str(tmp_path / "state"))
    done = subprocess.run(
        [sys.executable, "-m", "pyaichat", "--server", f"{hub.url}user/ada/", "--kernel"],
        input="import sys\nsys.version_info[0]\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0 and done.stdout == "3\n", done.stderr


def test_what_a_hub_answers_is_one_sentence(hub: Hub) -> None:
    hub.start_server("ada")
    address, _ = parse_address(f"{hub.url}user/ada/")
    with pytest.raises(TokenRefused) as wrong:
        ServerAPI(address, "not-a-token").kernels()
    assert str(wrong.value) == (
        f"The hub refused the token for {hub.url}user/ada/ (wrong or expired): make a new one at "
        f"{hub.url}hub/token and pass it in JUPYTER_TOKEN."
    )
    with pytest.raises(TokenRefused) as none:
        ServerAPI(address, None).kernels()
    assert "token" in str(none.value)
    token = hub.user_token("ada")
    with pytest.raises(ServerError) as root:
        ServerAPI(parse_address(f"{hub.url}hub/home")[0], token).version()  # the hub's own page, not a server
    assert str(root.value) == (
        f"{hub.url} is a JupyterHub: give the address of your own server on it, {hub.url}user/NAME/ (as your "
        "browser shows it once your server runs)."
    )
    hub.stop_server("ada")
    with pytest.raises(ServerError) as stopped:
        ServerAPI(address, token).kernels()
    assert (
        str(stopped.value)
        == f"Your server on the hub is not running: start it from {hub.url}hub/home and try again."
    )
