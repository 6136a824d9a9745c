"""The serving settings, as the person sets them: where ``/mcp on`` listens, how long a call waits while their
input runs, how long a proposal waits for them, and whether calls show as quiet lines."""

from __future__ import annotations

import threading
from pathlib import Path

from serve_helpers import Served

from pyaichat.mcpserve.gate import BUSY


def test_the_settings_reach_the_server(tmp_path: Path) -> None:
    served = Served(
        tmp_path / "state",
        "x = 1",
        mcp_serve_host="localhost",
        mcp_serve_busy_wait=0.05,
        mcp_serve_proposal_wait=0.2,
        mcp_serve_show_calls=False,
    )
    try:
        assert served.url.startswith("http://localhost:")  # mcp_serve_host
        backend = served.service.backend
        assert backend is not None
        me = backend.clients.seen("k", "agent", "test")
        assert backend.call("eval_expr", {"expr": "x"}, me).ok
        assert served.lines == []  # mcp_serve_show_calls = false: no quiet line

        assert backend._busy_wait() == 0.05  # mcp_serve_busy_wait, read at each call
        served.ctrl.gate.enter()  # the person's input runs: the call waits that long, then is told so
        try:
            busy: list = []
            call = lambda: busy.append(backend.call("eval_expr", {"expr": "x"}, me))  # noqa: E731
            caller = threading.Thread(target=call)
            caller.start()
            caller.join(60)
        finally:
            served.ctrl.gate.leave()
        assert busy and busy[0].error == BUSY

        # the agent asks to wait 600 s; the person's setting caps it
        answer = backend.call("propose_code", {"code": "y = 2", "wait_seconds": 600}, me)
        assert not answer.ok and "No one answered within 0.2 s" in answer.error
        assert "y" not in served.session.namespace
    finally:
        served.stop()
