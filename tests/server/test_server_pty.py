"""The issue's "Done when", in a real terminal: a person with only a server URL and a token attaches to a
notebook's kernel on a Jupyter Server (the token asked without echo, the kernel chosen in the menu) and the
assistant answers about a DataFrame only that kernel holds."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from server_process import JupyterServer  # noqa: E402

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import NEW_AI, NEW_PY, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def test_token_prompt_menu_and_a_question_about_the_remote_kernel(
    jupyter: JupyterServer, tmp_path: Path
) -> None:
    for other in jupyter.kernel_ids():
        jupyter.rest("DELETE", f"api/kernels/{other}")
    scratch = jupyter.start_kernel()
    notebook = jupyter.open_notebook("reports/orders.ipynb")
    time.sleep(0.2)  # the notebook's kernel is the most recently active one
    with ScriptedServer() as srv:
        srv.tool("get_repr", {"expr": "orders"}).text("Lima has the most orders: 11.")
        env = dict(PYAICHAT_MODEL="openai/test", PYAICHAT_API_BASE=srv.base_url, OPENAI_API_KEY="sk-test")
        child = spawn(tmp_path, "--server", jupyter.url, wait=False, **env)
        child.timeout = 60
        try:
            child.expect_exact(f"Token for {jupyter.url} (not shown): ")
            child.send(jupyter.token + "\r")
            child.expect_exact(f"Kernels on {jupyter.url}:")
            child.expect(r"Attach to \[1-2, n\] \(Enter: 1\): ")
            menu = child.before
            row = next(line for line in menu.splitlines() if notebook[:8] in line)
            choice = row.split()[0]
            child.send(choice + "\r")
            child.expect(rf"pyaichat: attached to kernel {notebook[:8]} \(python3, python 3[.\d]*, notebook ")
            child.expect(NEW_PY)
            child.send(
                "import pandas as pd; "
                "orders = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'qty': [4, 11, 7]})\r"
            )
            child.expect(NEW_PY)
            child.send("int(orders.qty.max())\r")
            child.expect(r"(?<![0-9])11\r\n")
            child.expect(NEW_PY)
            child.send("/status\r")
            child.expect(r"Link: websocket \(v1\.kernel\.websocket\.jupyter\.org\), \d+ ms a round trip")
            child.expect(NEW_PY)
            child.send("\t")  # TAB on an empty line: Assistant mode
            child.expect_exact("ai> ")
            child.send("which city has the most orders?\r")
            child.expect("Lima has the most orders: 11.")
            child.expect(NEW_AI)
            screen = child.before
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        picture = [m for m in srv.bodies[0]["messages"] if m["role"] == "user"][-1]["content"]
        assert "orders: DataFrame 3×2" in picture
        assert "Pune" in srv.bodies[1]["messages"][-1]["content"]  # the tool ran in the remote kernel
    assert child.exitstatus == 0
    assert jupyter.token not in menu and jupyter.token not in screen  # never echoed
    assert {scratch, notebook} <= jupyter.kernel_ids()  # detaching leaves both running
