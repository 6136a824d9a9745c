"""The issue's "Done when", in a real terminal: ``pyaichat --existing`` against a kernel started by
``jupyter kernel`` answers a question about a DataFrame that only the kernel holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import NEW_AI, NEW_PY, leave  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

TIMEOUT = 30


@pytest.fixture
def jupyter_kernel(tmp_path: Path):
    """``jupyter kernel`` (jupyter_client's KernelApp) in its own runtime directory; yields dir and file."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    app = subprocess.Popen(
        [sys.executable, "-c", "from jupyter_client.kernelapp import main; main()"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    files: list[Path] = []
    while time.monotonic() < deadline and not files:
        files = [f for f in runtime.glob("kernel-*.json") if f.stat().st_size and _complete(f)]
        time.sleep(0.05)
    assert files, "jupyter kernel wrote no connection file"
    try:
        yield runtime, files[0]
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        try:
            app.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(app.pid, signal.SIGKILL)


def _complete(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text()).get("shell_port"))
    except ValueError:
        return False


def _as_another_client(connection_file: Path, code: str) -> None:
    """Run ``code`` in the kernel the way a notebook would (pyaichat's process never sees the data)."""
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=30)
        reply = client.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()


def test_existing_kernel_answers_about_a_kernel_only_dataframe(tmp_path, jupyter_kernel):
    runtime, connection_file = jupyter_kernel
    _as_another_client(
        connection_file,
        "import pandas as pd\norders = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'qty': [4, 11, 7]})",
    )
    with ScriptedServer() as srv:
        srv.tool("get_repr", {"expr": "orders"}).text("Lima has the most orders: 11.")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_", "NO_COLOR"))}
        env.update(
            JUPYTER_RUNTIME_DIR=str(runtime),
            XDG_STATE_HOME=str(tmp_path / "state"),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            TERM="xterm",
            PROMPT_TOOLKIT_NO_CPR="1",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PYAICHAT_MODEL="openai/test",
            PYAICHAT_API_BASE=srv.base_url,
            OPENAI_API_KEY="sk-test",
        )
        child = pexpect.spawn(
            sys.executable,
            ["-m", "pyaichat", "--existing"],  # no file: the newest kernel in the runtime directory
            env=env,
            dimensions=(30, 100),
            encoding="utf-8",
            timeout=TIMEOUT,
        )
        try:
            child.expect(r"pyaichat: attached to kernel-\S+\.json \(python 3[.\d]*\); Ctrl-D detaches")
            child.expect(NEW_PY)
            child.send("int(orders.qty.max())\r")
            child.expect(r"(?<![0-9])11\r\n")
            child.expect(NEW_PY)
            child.send("orde\t")  # completion from the kernel
            child.expect("orders")
            child.send(".city.tolist()\r")
            child.expect(r"\['Oslo', 'Lima', 'Pune'\]")
            child.expect(NEW_PY)

            child.send("\t")  # TAB on an empty line: Assistant mode
            child.expect_exact("ai> ")
            child.send("which city has the most orders?\r")
            child.expect("Lima has the most orders: 11.")
            child.expect(NEW_AI)
            picture = [m for m in srv.bodies[0]["messages"] if m["role"] == "user"][-1]["content"]
            assert "orders: DataFrame 3×2" in picture
            assert "Pune" in srv.bodies[1]["messages"][-1]["content"]

            # Ctrl-C interrupts the kernel's sleep, not pyaichat
            child.send("/py\r")
            child.expect(NEW_PY)
            child.send("import time; time.sleep(60)\r")
            time.sleep(1.5)
            child.sendcontrol("c")
            child.expect("KeyboardInterrupt", timeout=15)
            child.expect(NEW_PY)
            child.send("int(orders.qty.sum())\r")
            child.expect(r"(?<![0-9])22\r\n")
            child.expect(NEW_PY)
            assert "Traceback (most recent call last)" not in child.before

            leave(child)
        finally:
            child.close()
    assert child.exitstatus == 0
    # detaching leaves the kernel (and its data) running
    _as_another_client(connection_file, "assert orders.qty.sum() == 22")


def test_the_preview_in_pyaichat_kernel_shows_only_what_the_proposal_does(tmp_path):
    """``pyaichat --kernel``: the kernel's own ``exit`` and ``quit`` (``ZMQExitAutocall``, holding the shell,
    which holds the namespace) are not changed in place by a proposal that creates ``total``."""
    from pty_terminal import spawn
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    with ScriptedServer() as srv:
        srv.tool("propose_code", {"code": "total = df.price.sum()", "explanation": "Sum them."})
        srv.text("Not run.")
        env = dict(PYAICHAT_MODEL="openai/test", PYAICHAT_API_BASE=srv.base_url, OPENAI_API_KEY="sk-test")
        child = spawn(tmp_path, "--kernel", wait=False, **env)
        child.timeout = 60  # the kernel's start, then litellm's import
        try:
            child.expect("started a python3 kernel")
            child.expect(NEW_PY)
            child.send("import pandas as pd; df = pd.DataFrame({'price': [1.5, 2.5]})\r")
            child.expect(NEW_PY)
            child.send("/ask sum the prices\r")
            child.expect_exact("Sum them.")
            child.expect(r"Run it\?.*\[r\]un / \[e\]dit / \[n\]o")
            screen = child.before
            child.send("n")
            child.expect_exact("Not run.")
            child.expect(NEW_PY)
            leave(child)
        finally:
            child.close(force=True)
    assert "new total: float64" in screen, screen
    assert "in place" not in screen and "cannot take this back" not in screen, screen
