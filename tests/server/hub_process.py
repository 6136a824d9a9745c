"""A real JupyterHub on 127.0.0.1 for the hub tests: the dummy authenticator, single-user servers as local
processes, and configurable-http-proxy (``proxy_command``). A service token starts a user's server and makes
the user an API token, as the hub's Token page does."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from server_process import free_port

SERVICE_TOKEN = "hub-service-token-8c1d"


def proxy_command() -> str | None:
    """configurable-http-proxy: ``$PYAICHAT_TEST_CHP``, the one beside this Python (the PyPI port, in the
    test extra), or npm's on PATH."""
    beside = Path(sys.executable).with_name("configurable-http-proxy")
    found = os.environ.get("PYAICHAT_TEST_CHP") or (str(beside) if beside.exists() else None)
    return found or shutil.which("configurable-http-proxy")


@dataclass
class Hub:
    proc: subprocess.Popen
    port: int
    root: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def api(self, method: str, path: str, body: object = None, token: str = SERVICE_TOKEN) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}hub/api/{path}", data=data, method=method)
        request.add_header("Authorization", f"token {token}")
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def start_server(self, user: str, timeout: float = 120) -> None:
        try:
            self.api("POST", f"users/{user}/server")
        except urllib.error.HTTPError as exc:
            if exc.code != 400:  # 400: already running
                raise
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            model = self.api("GET", f"users/{user}")
            server = (model.get("servers") or {}).get("")
            if server and server.get("ready"):
                return
            time.sleep(0.3)
        raise RuntimeError(f"{user}'s server did not start: {(self.root / 'hub.log').read_text()[-3000:]}")

    def stop_server(self, user: str) -> None:
        try:
            self.api("DELETE", f"users/{user}/server")
        except urllib.error.HTTPError:
            pass
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not (self.api("GET", f"users/{user}").get("servers") or {}):
                return
            time.sleep(0.3)

    def user_token(self, user: str) -> str:
        """An API token of ``user`` (what the hub's Token page makes)."""
        return str(self.api("POST", f"users/{user}/tokens", {"note": "pyaichat test"})["token"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def start_hub(directory: Path, users: tuple[str, ...] = ("ada",)) -> Hub:
    chp = proxy_command()
    assert chp, "configurable-http-proxy is not installed"
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = directory / "jupyterhub_config.py"
    config.write_text(
        f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.auth_token = "proxy-token-for-tests"
c.JupyterHub.db_url = "sqlite:///{directory / "hub.sqlite"}"
c.JupyterHub.cookie_secret_file = "{directory / "cookie_secret"}"
c.JupyterHub.pid_file = "{directory / "hub.pid"}"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set({list(users)!r})
c.JupyterHub.spawner_class = "simple"
c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.args = ["--allow-root", "--ServerApp.log_level=WARN"]
c.Spawner.notebook_dir = "{directory}"
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120
c.SimpleLocalProcessSpawner.home_dir_template = "{directory}/home/{{username}}"
c.Spawner.environment = {{
    "XDG_STATE_HOME": "{directory}/kernel-state", "XDG_CONFIG_HOME": "{directory}/kernel-config"
}}
c.JupyterHub.services = [{{"name": "tests", "api_token": "{SERVICE_TOKEN}"}}]
c.JupyterHub.load_roles = [
    {{"name": "tests", "scopes": ["admin:users", "admin:servers", "tokens"], "services": ["tests"]}}
]
"""
    )
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    log = open(directory / "hub.log", "wb")  # noqa: SIM115 - the hub writes it for its whole life
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterhub", "-f", str(config)],
        cwd=directory,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env=env,
        start_new_session=True,
    )
    hub = Hub(proc, port, directory)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyterhub exited: {(directory / 'hub.log').read_text()[-3000:]}")
        try:
            hub.api("GET", "")
            return hub
        except (OSError, urllib.error.URLError):
            time.sleep(0.3)
    hub.stop()
    raise RuntimeError("jupyterhub did not answer")
