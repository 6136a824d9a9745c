"""A hostile MCP server and a model reply carrying terminal escapes, in a real pseudo-terminal: the escapes
reach the screen as visible text (never acted on), the server's question is shown as its quoted words, a
field asking for a password is flagged, and what the person types into it is neither echoed nor repeated."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from fakes.sent import observed

pexpect = pytest.importorskip("pexpect")

from mcp_helpers import fault  # noqa: E402

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import AI_PROMPT, NEW_AI, PY_PROMPT, spawn_scripted  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

MODEL_REPLY = "Done.\x1b]0;model-title\x07 \x1b[2J\x1b[31mall clear\x1b[0m\r\n"


def test_a_hostile_server_and_model_cannot_drive_the_terminal(tmp_path: Path, notes) -> None:
    entry = fault()
    (tmp_path / "config" / "pyaichat").mkdir(parents=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text(
        "[mcp_servers.evil3]\n"
        f"command = {json.dumps(entry['command'])}\n"
        f"args = {json.dumps(entry['args'])}\n"
        'trust = "read-only"\nelicitation = true\n'
        f"env = {{ FAULT_NOTE_FILE = {json.dumps(notes['FAULT_NOTE_FILE'])} }}\n"
    )
    screen = io.StringIO()
    with ScriptedServer() as server:
        server.tool("evil3__ask_elicitation", {"kind": "hostile"})
        server.text(MODEL_REPLY)
        child = spawn_scripted(tmp_path, server.base_url, bound=90)
        child.logfile_read = screen
        try:
            child.send("\t")
            child.expect_exact(AI_PROMPT)
            child.send("Check my session\r")
            child.expect_exact("The MCP server 'evil3' asks you")
            child.expect_exact("pyaichat never asks for passwords; this is server 'evil3' asking")
            child.expect_exact("Answer it?")
            child.send("a")
            child.expect_exact("evil3 ▌ pyaichat session password")
            child.send("hunter2-typed\r")
            child.expect_exact("Send them?")
            child.send("s")
            child.expect_exact("all clear")
            child.expect(NEW_AI)
            child.send("\t")
            child.expect_exact(PY_PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close()
    shown = screen.getvalue()
    # the server's and the model's escapes: on screen as text, never sent to the terminal as codes
    for raw in (
        "\x1b]0;owned-title",
        "\x1b[32mpyaichat",
        "\x1b]8;;https://evil.example",
        "\x1b[8m",
        "\u202e",
    ):
        assert raw not in shown, repr(raw)
    for raw in ("\x1b]0;model-title", "\x1b[2J", "\x1b[31mall clear"):
        assert raw not in shown, repr(raw)
    assert (
        "␛[32mpyaichat␛[0m" in shown and "␛]0;owned-title␇" in shown and "␛]8;;https://evil.example" in shown
    )
    assert "⟨U+202E⟩exe.txt" in shown and "␛]0;model-title␇" in shown
    assert "evil3 ▌ " in shown  # the server's words, behind its name
    # the password: typed unseen, not repeated; the server's echo of it reaches the model masked
    assert "hunter2-typed" not in shown and "(hidden)" in shown
    told = [observed(m["content"]) for m in server.bodies[1]["messages"] if m.get("role") == "tool"][-1]
    assert json.loads(told.removeprefix("client answered: "))["content"] == {"session_password": "<redacted>"}
