"""``/mcp`` as typed: status by default, one sentence for anything it does not know, off when not serving."""

from __future__ import annotations

from serve_helpers import RecordingFrontEnd, Served, controller_over

from pyaichat.commands.mcp import USAGE
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


def test_the_command_without_a_server() -> None:
    front = RecordingFrontEnd()
    ctrl = controller_over(LocalRuntime(Session()), front)
    for line in ("/mcp", "/mcp status", "/mcp off", "/mcp token", "/mcp frobnicate", "/mcp on a b"):
        ctrl.handle(line)
    assert front.notices() == [
        "Not serving over MCP. /mcp on starts it.",
        "Not serving over MCP. /mcp on starts it.",
        "Not serving over MCP.",
        "Not serving over MCP: there is no token.",
        USAGE,
        USAGE,
    ]


def test_status_and_token_while_serving(tmp_path) -> None:
    served = Served(tmp_path / "state", "x = 1")
    try:
        served.ctrl.handle("/mcp")
        served.ctrl.handle("/mcp token")
        served.ctrl.handle("/mcp on")
        status, token, again = served.frontend.notices()[-3:]
        assert (
            status.startswith(f"Serving at {served.url} since ") and "No client has connected yet." in status
        )
        assert token.startswith(f"Authorization: Bearer {served.token}\n")
        assert again == f"Already serving this session at {served.url}."
    finally:
        served.stop()
