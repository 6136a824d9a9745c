"""The suggestion engine: one request per pause, aborted on the next key, answers kept per position, failures
quiet. The model call is a scripted coroutine and the engine's clock a fake one, so no test waits on timing:
each waits on an event, with a timeout only as the bound of a failure."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from fakes.suggest_model import WAIT, Clock, Model, Screen
from pyaichat.agent.suggest import Suggester
from pyaichat.configuration.config import Config
from pyaichat.errors import LLMAuthError, LLMBadRequest, LLMServerError
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


@pytest.fixture
def session() -> Session:
    s = Session(config=Config(suggest_model="openai/x", suggest_api_base="http://127.0.0.1:9/v1"))
    s.run("import types\nsales = types.SimpleNamespace(net_revenue_eur=1.0)")
    return s


def engine(session: Session, model: Model, clock: Clock | None = None) -> Suggester:
    """``clock``: a fake one the test moves; without it the real one (the pause is then 10 ms)."""
    return Suggester(
        lambda: session.config, LocalRuntime(session), ask=model, pause=0.01, clock=clock or time.monotonic
    )


def test_a_pause_asks_once_and_the_answer_reaches_the_screen(session: Session) -> None:
    model, screen = Model("net_revenue_eur * 2"), Screen()
    eng = engine(session, model)
    try:
        assert eng.edit("total = sales.", "", screen) is None
        assert screen.arrived.wait(WAIT)
        assert screen.shown == [("total = sales.", "", "net_revenue_eur * 2")]
        assert "sales" in model.requests[0].prompt  # the facts went along
        # the same position is known now, and typing along the answer needs no request
        assert eng.edit("total = sales.", "", screen) == "net_revenue_eur * 2"
        assert eng.edit("total = sales.net_", "", screen) == "revenue_eur * 2"
        assert len(model.requests) == 1
        assert eng.stats.requests == 1 and eng.stats.prompt_tokens == 30 and eng.stats.delivered == 1
        assert "1 request(s), 30 prompt + 5 completion tokens" in (eng.usage_line() or "")
    finally:
        eng.close()


def test_keys_typed_without_a_pause_make_one_request(session: Session) -> None:
    clock = Clock()
    model, screen = Model("x"), Screen()
    eng = engine(session, model, clock)
    try:
        text = "sales.net_revenue_eur.round("
        for n in range(1, len(text) + 1):  # every key within the same instant of the fake clock
            eng.edit(text[:n], "", screen)
        clock.now = 1.0  # the user pauses
        model.wait_asked()
        assert screen.arrived.wait(WAIT)
        assert len(model.requests) == 1
        assert model.requests[0].prompt.endswith(text)
    finally:
        eng.close()


def test_typing_again_aborts_the_request_in_flight_and_drops_its_answer(session: Session) -> None:
    clock = Clock()
    model, screen = Model(Model.HOLD, "2)"), Screen()
    eng = engine(session, model, clock)
    try:
        eng.edit("round(sales.net_revenue_eur, ", "", screen)
        clock.now = 1.0
        model.wait_asked()
        eng.edit("round(sales.net_revenue_eur, n", "", screen)  # the next key
        assert model.cancelled.wait(WAIT)
        model.release.set()
        clock.now = 2.0
        model.wait_asked()
        assert screen.arrived.wait(WAIT)
        assert screen.shown == [("round(sales.net_revenue_eur, n", "", "2)")]
        assert len(model.requests) == 2 and eng.stats.cancelled == 1
    finally:
        eng.close()


def test_a_failure_shows_nothing_is_kept_for_trace_and_asking_waits_a_while(session: Session) -> None:
    clock = Clock()
    model, screen = (
        Model(LLMServerError("The provider at x failed (HTTP 500); try again in a moment."), "ok"),
        Screen(),
    )
    eng = engine(session, model, clock)
    try:
        eng.edit("sales.", "", screen)
        clock.now = 1.0
        model.wait_asked()
        _settle(eng)
        assert screen.shown == [] and eng.stats.failed == 1
        assert "HTTP 500" in (eng.trace_line() or "")
        eng.edit("sales.n", "", screen)  # within the quiet time: no request
        clock.now = 2.0
        _settle(eng)
        assert len(model.requests) == 1
        clock.now = 60.0  # after it
        eng.edit("sales.ne", "", screen)
        clock.now = 61.0
        assert screen.arrived.wait(WAIT)
        assert len(model.requests) == 2
    finally:
        eng.close()


def test_an_error_only_the_user_can_fix_stops_suggestions_until_the_model_changes(session: Session) -> None:
    clock = Clock()
    model, screen = Model(LLMAuthError("The provider rejected the API key."), "ok"), Screen()
    eng = engine(session, model, clock)
    try:
        eng.edit("sales.", "", screen)
        clock.now = 1.0
        model.wait_asked()
        _settle(eng)
        assert not eng.active() and eng.stopped_by == "The provider rejected the API key."
        session.settings.replace(session.config.replace(suggest_model="openai/y"))
        assert eng.active()
    finally:
        eng.close()


def test_a_server_that_refuses_fill_in_the_middle_gets_chat_next_time(session: Session) -> None:
    clock = Clock()
    model, screen = (
        Model(LLMBadRequest("The provider refused the request: suffix not supported."), "x"),
        Screen(),
    )
    eng = engine(session, model, clock)
    try:
        eng.edit("sales.", "", screen)
        clock.now = 1.0
        model.wait_asked()
        _settle(eng)
        eng.edit("sales.n", "", screen)
        clock.now = 2.0
        model.wait_asked()
        assert [r.kind for r in model.requests] == ["fim", "chat"]
    finally:
        eng.close()


def test_no_secret_of_the_session_reaches_the_request(session: Session) -> None:
    session.run('api_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"')
    session.run("vault = {'db_password': 'hunter2hunter2', 'host': 'db'}")
    model, screen = Model("x"), Screen()
    eng = engine(session, model)
    try:
        eng.edit('client = connect(api_key, vault["', "", screen)
        assert screen.arrived.wait(WAIT)
        sent = str(model.requests[0].body())
        assert "sk-proj-abcdefghijklmnop" not in sent and "hunter2hunter2" not in sent
        assert "vault" in sent
    finally:
        eng.close()


def test_user_code_waits_until_the_session_is_no_longer_being_read(session: Session) -> None:
    reading, release = threading.Event(), threading.Event()

    class SlowRuntime(LocalRuntime):
        def suggestion_facts(self, before: str, after: str = "") -> dict[str, list[str]]:
            reading.set()
            release.wait(WAIT)
            return super().suggestion_facts(before, after)

    model, screen = Model("x"), Screen()
    eng = Suggester(lambda: session.config, SlowRuntime(session), ask=model, pause=0.01)
    try:
        eng.edit("sales.", "", screen)
        assert reading.wait(WAIT)
        done = threading.Event()
        threading.Thread(target=lambda: (eng.quiet(timeout=WAIT), done.set()), daemon=True).start()
        assert not done.wait(0.2)  # still reading: quiet() has not returned (a pass needs no timing)
        release.set()
        assert done.wait(WAIT)
        assert screen.shown == []  # quiet() cancelled the position: the answer is dropped
    finally:
        release.set()
        eng.close()


def test_off_until_a_model_is_set(session: Session) -> None:
    session.settings.replace(session.config.replace(suggest_model=None))
    model, screen = Model("x"), Screen()
    eng = engine(session, model)
    assert eng.edit("sales.", "", screen) is None
    assert eng.background.thread is None and model.requests == []
    assert eng.usage_line() is None and eng.trace_line() is None


def _settle(eng: Suggester) -> None:
    """Wait until the engine's loop has run everything queued so far (its request finished)."""
    assert eng.background.loop is not None
    for _ in range(3):
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0), eng.background.loop).result(WAIT)
    deadline = threading.Event()
    while eng._flight is not None and not deadline.wait(0.005):
        pass


def test_nothing_from_the_engines_loop_is_printed_over_the_prompt(session: Session, capfd) -> None:
    model, screen = Model("x"), Screen()
    eng = engine(session, model)
    try:
        eng.edit("sales.", "", screen)
        assert screen.arrived.wait(WAIT)
        assert eng.background.loop is not None
        complaint = {"message": "Unclosed client session", "client_session": object()}
        loop = eng.background.loop
        asyncio.run_coroutine_threadsafe(_complain(loop, complaint), loop).result(WAIT)
        assert eng.background.complaints == 1
        assert "Unclosed" not in capfd.readouterr().err
    finally:
        eng.close()


async def _complain(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    loop.call_exception_handler(context)  # what aiohttp does for a session dropped unclosed
