"""The suggestion engine with its real helper process against the scripted server: the key that makes a
request stale aborts it at the helper from the key's own thread — the engine's thread need not wake, nor
does the helper answer — and a helper that dies is replaced by the next suggestion, without a failure.

Waits are for events (a request at the server, its abort, an answer on the screen), bounded."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from fakes.openai_server import ScriptedServer
from fakes.suggest_model import WAIT, Clock, Screen
from pyaichat.agent.suggest import Suggester
from pyaichat.configuration.config import Config
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX processes")

BOUND = 90.0  # seconds: the helper's first answer pays litellm's import there
ABORT_BOUND = 15.0  # seconds for an abort to reach the server: half the suggestion request's own timeout


@pytest.fixture(autouse=True)
def provider_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the helper's litellm reads it, as the REPL's would


def engine(server: ScriptedServer, clock: Clock | None = None) -> Suggester:
    """``clock``: a fake one the test moves (else the real one; the pause is then 10 ms)."""
    config = Config(suggest_model="openai/fim", suggest_api_base=server.base_url)
    session = Session(config=config)
    session.run("import types\nsales = types.SimpleNamespace(net_revenue_eur=1.0)")
    return Suggester(lambda: config, LocalRuntime(session), pause=0.01, clock=clock or time.monotonic)


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_the_next_key_aborts_the_request_at_the_helper_while_the_engines_thread_sleeps() -> None:
    with ScriptedServer() as server:
        server.fault("slow", delay=BOUND)
        server.text("2)")
        eng, screen = engine(server), Screen()
        try:
            eng.edit("round(sales.net_revenue_eur, ", "", screen)
            wait_until(lambda: len(server.requests) == 1, "the first request never reached the server")
            # Hold the engine's thread: only the key's own thread can abort the request now.
            held, release = threading.Event(), threading.Event()
            assert eng.background.loop is not None
            eng.background.loop.call_soon_threadsafe(lambda: (held.set(), release.wait(BOUND)))
            assert held.wait(WAIT)
            try:
                eng.edit("round(sales.net_revenue_eur, n", "", screen)  # the next key
                # bounded well inside the request's own timeout (30 s), which would close it too
                assert server.aborted.wait(ABORT_BOUND), "the helper did not abort the stale request"
            finally:
                release.set()
            assert screen.arrived.wait(BOUND)  # the pause after it asks again
            assert screen.shown == [("round(sales.net_revenue_eur, n", "", "2)")]
            assert len(server.requests) == 2 and server.requests[0].aborted
            assert eng.stats.failed == 0, eng.stats.last_failure
        finally:
            eng.close()


def test_a_helper_that_dies_is_replaced_by_the_next_suggestion() -> None:
    with ScriptedServer() as server:
        server.text("_eur")
        server.text(" * 2")
        eng, screen = engine(server), Screen()
        try:
            eng.edit("x = sales.net_revenue", "", screen)
            assert screen.arrived.wait(BOUND)
            helper = eng.helper
            assert helper is not None and helper.pid is not None
            os.kill(helper.pid, signal.SIGKILL)
            wait_until(lambda: helper.pid is None, "the helper's death went unnoticed")
            screen.arrived.clear()
            eng.edit("y = sales.net_revenue_eur", "", screen)  # a new line: nothing known for it
            assert screen.arrived.wait(BOUND)
            assert screen.shown[-1] == ("y = sales.net_revenue_eur", "", " * 2")
            assert helper.starts == 2 and eng.stats.failed == 0, eng.stats.last_failure
        finally:
            eng.close()
        assert helper.pid is None


def test_a_request_aborted_before_the_helper_went_away_is_cancelled_not_failed() -> None:
    with ScriptedServer() as server:
        server.fault("slow", delay=BOUND)
        eng, screen = engine(server), Screen()
        try:
            eng.edit("total = sales.", "", screen)
            wait_until(lambda: len(server.requests) == 1, "the request never reached the server")
            eng.edit("total = sales.n", "", screen, ask=False)  # the next key makes it stale: aborted
            eng.stop_helper()  # /suggest off: the helper goes before the engine's thread tidied up
            wait_until(lambda: eng.stats.cancelled == 1, "the aborted request was not counted as cancelled")
            assert eng.stats.failed == 0 and eng.trace_line() is None
        finally:
            eng.close()


def test_the_helpers_errors_keep_their_kind_quiet_in_trace_and_a_refused_key_stops_suggestions() -> None:
    with ScriptedServer() as server:
        server.fault("500")
        server.fault("401")
        clock = Clock()
        eng, screen = engine(server, clock), Screen()
        try:
            eng.edit("a = sales.", "", screen)
            clock.now = 1.0  # the user pauses
            wait_until(lambda: eng.stats.failed == 1, "the server's error never came back")
            assert "HTTP 500" in (eng.trace_line() or "") and eng.active()  # retried after a quiet while
            clock.now = 60.0  # after it
            eng.edit("b = sales.", "", screen)
            clock.now = 61.0
            wait_until(lambda: eng.stats.failed == 2, "the second error never came back")
            assert not eng.active() and "API key" in (eng.stopped_by or "")  # only the user can fix that
            assert screen.shown == []
        finally:
            eng.close()
