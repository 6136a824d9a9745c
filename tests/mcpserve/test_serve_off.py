"""``/mcp off`` is final: a call that is waiting when the person stops serving never runs after the stop
message; its agent is told in one sentence that the person stopped serving; nothing else reaches the
bridge's error output (no traceback)."""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from serve_helpers import Served, http_client, text

pytestmark = pytest.mark.e2e

WAIT = 60.0
STOPPED = "the person stopped serving this session"


def _waiting_call(served: Served, call) -> tuple[threading.Thread, dict]:  # type: ignore[no-untyped-def]
    """The person's input is running (the gate is held); an agent's call arrives and waits for it."""
    box: dict = {}

    def agent() -> None:
        try:
            box["result"] = anyio.run(call)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not served.service.backend or not served.service.backend.clients.records():
        assert time.monotonic() < deadline and thread.is_alive(), box
        time.sleep(0.02)
    time.sleep(0.3)  # it waits at the gate now: the person's input is running
    return thread, box


def _off_while_it_waits(served: Served) -> str:
    """The person types ``/mcp off`` while the call waits; the input ends after it."""
    served.frontend.events.clear()
    served.ctrl.handle("/mcp off")
    served.ctrl.gate.leave()
    return "\n".join(served.frontend.notices())


def test_a_stdio_call_waiting_when_the_person_types_mcp_off_never_runs(tmp_path: Path) -> None:
    served = Served(tmp_path / "state", "plan = 'x'")
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - the bridge's stderr, read at the end

    async def call() -> tuple[str, bool]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pyaichat", "mcp"], env=served.env()
        )
        info = types.Implementation(name="claude-code", version="1")
        async with Client(stdio_client(params, errlog=errlog), client_info=info) as client:
            await client.list_tools()
            result = await client.call_tool("eval_expr", {"expr": "plan"})
            return text(result), bool(result.is_error)

    served.ctrl.gate.enter()  # the person's own input starts
    thread, box = _waiting_call(served, call)
    said = _off_while_it_waits(served)
    thread.join(WAIT)
    time.sleep(0.5)  # a call that would run after the stop message has run by now
    errlog.seek(0)
    stderr = errlog.read()
    assert "Stopped serving" in said
    assert "error" not in box, (box.get("error"), stderr)
    assert served.lines == [], "the call ran after the stop message"
    answer, is_error = box["result"]
    assert is_error and STOPPED in answer.lower(), answer
    assert "Traceback" not in stderr, stderr


def test_an_http_call_waiting_when_the_person_types_mcp_off_never_runs(tmp_path: Path) -> None:
    served = Served(tmp_path / "state", "plan = 'x'")
    url, token = served.url, served.token

    async def call() -> tuple[str, bool]:
        async with http_client(url, token, "codex") as client:
            result = await client.call_tool("eval_expr", {"expr": "plan"})
            return text(result), bool(result.is_error)

    served.ctrl.gate.enter()
    thread, box = _waiting_call(served, call)
    said = _off_while_it_waits(served)
    thread.join(WAIT)
    time.sleep(0.5)
    assert "Stopped serving" in said
    assert served.lines == [], "the call ran after the stop message"
    assert "error" not in box, box.get("error")
    answer, is_error = box["result"]
    assert is_error and STOPPED in answer.lower(), answer
