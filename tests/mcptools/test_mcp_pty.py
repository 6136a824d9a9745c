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

from fakes.sent import observed

pexpect = pytest.importorskip("pexpect")

from mcp_helpers import fault, real  # noqa: E402

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import AI_PROMPT, NEW_AI, NEW_PY, leave, spawn_scripted  # noqa: E402

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
        child = spawn_scripted(
            tmp_path, server.base_url, "--mcp-config", str(mcp_json), bound=90
        )  # the first question pays litellm's and the SDK's imports in the child
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
            leave(child, from_assistant=True)
        finally:
            child.close()
    assert child.exitstatus == 0
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    body = server.bodies[0]
    assert "time__get_current_time" in [t["function"]["name"] for t in body["tools"]]


def test_the_servers_requests_and_a_write_wait_for_the_person_at_the_terminal(tmp_path: Path, notes) -> None:
    """In a real terminal: a sampling request waits in the approval panel (r sends it to the model), a
    server's question is answered field by field, a write tool's arguments are edited before it runs (e)."""
    fault_entry = fault()
    (tmp_path / "config" / "pyaichat").mkdir(parents=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text(
        "[mcp_servers.fault]\n"
        f"command = {json.dumps(fault_entry['command'])}\n"
        f"args = {json.dumps(fault_entry['args'])}\n"
        'trust = "read-only"\nsampling = true\nelicitation = true\n'
        f"env = {{ FAULT_NOTE_FILE = {json.dumps(notes['FAULT_NOTE_FILE'])} }}\n"
    )
    with ScriptedServer() as server:
        server.tool("fault__ask_sampling", {"text": "Name the weekly report."})
        server.text("Weekly stock.")  # the server's sampling request
        server.text("The server named it **Weekly stock**.")
        server.tool("fault__ask_elicitation", {})
        server.text("The report is on its way.")
        server.tool("fault__write_note", {"text": "from the model"})
        server.text("Noted.")
        child = spawn_scripted(tmp_path, server.base_url, bound=90)
        try:
            child.send("\t")
            child.expect_exact(AI_PROMPT)
            child.send("Name the report\r")
            child.expect_exact("The MCP server 'fault' asks your model openai/scripted to write a reply")
            child.expect_exact("Name the weekly report.")
            child.expect_exact("Run it?")
            assert len(server.bodies) == 1  # nothing went to the model for the server yet
            child.send("r")
            child.expect_exact("Your model answered the MCP server 'fault' (")
            child.expect(r"The server named it.*Weekly stock")
            child.expect(NEW_AI)
            child.send("/sent\r")
            child.expect_exact("Request 2 of 3 (for the MCP server 'fault')")
            child.expect(NEW_AI)

            child.send("Make the report\r")
            child.expect_exact("The MCP server 'fault' asks you")
            child.expect_exact("Which warehouse should the report cover?")
            child.expect_exact("Answer it?")
            child.send("a")
            child.expect_exact("Warehouse:")
            child.send("Leeds\r")
            child.expect_exact("days (optional):")
            child.send("\r")
            child.expect_exact("format:")
            child.send("2\r")
            child.expect_exact("email_me (optional):")
            child.send("\r")
            child.expect_exact("Send them?")
            child.send("s")
            child.expect_exact("The report is on its way.")
            child.expect(NEW_AI)

            child.send("Note it\r")
            child.expect_exact("Tool call proposed: fault__write_note (not called yet)")
            child.expect_exact("Run it?")
            child.send("e")
            child.expect_exact("fault__write_note arguments (JSON)>")
            child.send("\x01\x0b" + '{"text": "from the person"}\r')
            child.expect_exact("Noted.")
            child.expect(NEW_AI)
            leave(child, from_assistant=True)
        finally:
            child.close()
    sampled = server.bodies[1]
    assert sampled["messages"][1]["content"].startswith("Name the weekly report.") and "tools" not in sampled
    told = [observed(m["content"]) for m in server.bodies[4]["messages"] if m.get("role") == "tool"][-1]
    assert json.loads(told.removeprefix("client answered: ")) == {
        "action": "accept",
        "content": {"warehouse": "Leeds", "days": 7, "format": "xlsx"},
    }
    assert Path(notes["FAULT_NOTE_FILE"]).read_text() == 'write_note: {"text": "from the person"}\n'
