"""The REPL in a real pseudo-terminal with MCP servers configured as a user would: servers start when the user
enters Assistant mode, a trusted read-only tool answers a question, ``/tools`` shows them, and Ctrl-D ends
them."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from mcp_helpers import fault, real  # noqa: E402

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import AI_PROMPT, NEW_AI, NEW_PY, PY_PROMPT, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_a_trusted_server_tool_answers_in_the_repl_and_exit_closes_the_servers(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    mcp_json = tmp_path / "mcp.json"
    servers = {"time": real("mcp-server-time"), "fault": fault(env={"FAULT_PID_FILE": str(pids)})}
    mcp_json.write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / "config" / "pyaichat").mkdir(parents=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text('[mcp_servers.time]\ntrust = "read-only"\n')
    with ScriptedServer() as server:
        server.tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
        server.text("It is evening in **Tokyo**.")
        child = spawn(
            tmp_path,
            "--mcp-config",
            str(mcp_json),
            PYAICHAT_MODEL="openai/scripted",
            PYAICHAT_API_BASE=server.base_url,
            OPENAI_API_KEY="sk-t",
        )
        child.timeout = 90  # the first question pays litellm's and the SDK's imports in the child
        try:
            child.send("x = 1\r")
            child.expect(NEW_PY)
            assert not pids.exists()  # nothing started with the REPL, nor with Python inputs
            child.send("\t")
            child.expect_exact(AI_PROMPT)
            child.send("What time is it in Tokyo?\r")
            child.expect(r"✓ time__get_current_time\(Asia/Tokyo\) \d+ ms")
            child.expect(r"It is evening in.*Tokyo")
            child.expect(NEW_AI)
            child.send("/tools\r")
            child.expect_exact("time: ready, trust read-only, 2 tools, 1 call")
            child.expect_exact("fault: ready, trust ask, 16 tools, 0 calls")
            child.expect(NEW_AI)
            (pid,) = map(int, pids.read_text().split())
            assert alive(pid)
            child.send("\t")
            child.expect_exact(PY_PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close()
    assert child.exitstatus == 0
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    body = server.bodies[0]
    assert "time__get_current_time" in [t["function"]["name"] for t in body["tools"]]
