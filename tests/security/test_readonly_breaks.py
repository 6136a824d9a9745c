"""Each break of the read-only promise the reviews found (issue 40's first two bullets; issue 44's reads that
ran the session's code in its process, and its child that held the secrets), through the public door
(``capabilities.call``) as the REPL's own assistant reaches it: every write refused in one sentence with
nothing changed, none of the session's code run in its process, no call holding it frozen, no piece of a
secret — nor of its reversal, hex or characters — in any answer. The same lists go through ``pyaichat mcp``
and Streamable HTTP (``tests/mcpserve``), IPython (``tests/ipython``) and a kernel (``tests/kernel``)."""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import pytest

import pyaichat
from pyaichat.capabilities import call
from pyaichat.capabilities.catalog import CapabilityContext
from pyaichat.capabilities.expression import Level, level_of
from pyaichat.capabilities.picture import session_picture
from pyaichat.capabilities.redact import masker_for
from pyaichat.configuration.config import Config
from readonly_breaks import (
    CHILD_ORACLES,
    CHILD_ROADS,
    CHILD_SETUP,
    CODE_READS,
    DB_PASSWORD,
    EXPR_TOOLS,
    FAILING_INPUT,
    FREEZES,
    GIL_BOUND,
    HELD_SECRET_LEGIT,
    HELD_SECRET_ORACLES,
    HELD_SECRET_SETUP,
    ISSUE_44_CALLS,
    LEGIT,
    MODULE_ROADS,
    PYLONG_WORK,
    SECRET_ROADS,
    SMALL_WORK,
    TOTAL_WORK_FREEZES,
    TOTAL_WORK_SETUP,
    TRANSFORMED,
    WRITES,
    GilTicker,
    answered_false,
    issue_44_refusals,
    leaked,
    leaked_transformed,
    one_sentence,
    setup_source,
    state_source,
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> pyaichat.Session:
    watch = tmp_path_factory.mktemp("watched")
    s = pyaichat.Session(config=Config(audit=False))
    result = s.run(setup_source(str(watch)))
    assert result.ok, result.error and result.error.formatted
    return s


def _state(session: pyaichat.Session) -> str:
    return eval(state_source(), session.namespace)


@pytest.mark.parametrize("tool", EXPR_TOOLS)
@pytest.mark.parametrize("expr", WRITES)
def test_a_write_is_refused_in_one_sentence_and_changes_nothing(session, expr: str, tool: str) -> None:
    before = _state(session)
    result = call(session, tool, {"expr": expr})
    assert _state(session) == before
    assert not result.ok, result.text
    assert one_sentence(result.error), result.error
    assert "would change the session's" in result.error or "cannot write to a file" in result.error


@pytest.mark.parametrize(("tool", "args"), SECRET_ROADS, ids=[str(a) for _, a in SECRET_ROADS])
def test_no_road_shows_a_secret(session, tool: str, args: dict[str, str]) -> None:
    result = call(session, tool, args)
    shown = (result.text or "") + (result.error or "")
    assert leaked(shown) is None, shown
    names = [n for n in session.namespace["env"] if len(n) >= 8 and n not in str(args)]
    assert not [n for n in names if n in shown], shown  # a copy of the environment: not even its names
    assert result.ok or one_sentence(result.error), result.error


def test_an_error_that_quotes_a_secret_is_masked_by_value(session) -> None:
    session.run(FAILING_INPUT)
    assert DB_PASSWORD in session.last_error.message  # the person's own traceback is theirs to see
    text = call(session, "get_last_exception", {}).text
    assert "invalid literal for int()" in text and leaked(text) is None, text
    picture = session_picture(session, session.config)
    assert "invalid literal for int()" in picture and DB_PASSWORD[:10] not in picture, picture
    sent = masker_for(session.config).mask_text(picture)  # as it leaves for the model
    assert leaked(sent) is None, sent


def test_what_is_not_secret_still_reads(session) -> None:
    assert call(session, "eval_expr", {"expr": "settings.get('host')"}).text.endswith("'db.local'")
    assert "ann" in call(session, "eval_expr", {"expr": "users.name.tolist()"}).text
    assert "'n'" in call(session, "eval_expr", {"expr": "list(df.columns)"}).text
    assert "2 rows" in call(session, "eval_expr", {"expr": "users.T"}).text  # read, its column redacted
    result = call(session, "eval_expr", {"expr": "len(env) > 3"})
    assert result.ok and "True" in result.text


def test_the_folder_stays_empty(session) -> None:
    for expr in WRITES:
        call(session, "eval_expr", {"expr": expr})
    assert list(Path(session.namespace["WATCH"]).iterdir()) == []


# -- issue 44 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tool", EXPR_TOOLS)
@pytest.mark.parametrize("expr", CODE_READS)
def test_a_read_runs_no_session_code_here_and_changes_nothing(session, expr: str, tool: str) -> None:
    before = _state(session)
    result = call(session, tool, {"expr": expr})
    gc.collect()  # a copy of the session's object made here would be finalised by now
    assert _state(session) == before, result
    assert result.ok or one_sentence(result.error), result.error
    assert leaked((result.text or "") + (result.error or "")) is None


@pytest.mark.parametrize("expr", FREEZES, ids=lambda e: e[:30])
def test_c_work_is_sized_first_or_done_in_the_walled_child(session, expr: str) -> None:
    started = time.perf_counter()
    with GilTicker() as ticker:
        result = call(session, "eval_expr", {"expr": expr})
    took = time.perf_counter() - started
    assert ticker.longest <= GIL_BOUND, f"the REPL's process was held {ticker.longest:.2f} s"
    assert took <= session.config.tool_timeout + 1.0
    assert result.ok or one_sentence(result.error), result.error


@pytest.fixture(scope="module")
def big_session():
    """Big integers and a session that lifted Python's digit limit (process-wide: put back after)."""
    previous = sys.get_int_max_str_digits()
    try:
        s = pyaichat.Session(config=Config(audit=False))
        assert s.run(TOTAL_WORK_SETUP).ok
        yield s
    finally:
        sys.set_int_max_str_digits(previous)


@pytest.mark.parametrize("expr", TOTAL_WORK_FREEZES, ids=lambda e: e[:30])
def test_the_whole_work_is_sized_not_each_item(big_session, expr: str) -> None:
    """Red team B6: every item fit, the whole held the process for 0.1-10 s; now the walled child does it."""
    with GilTicker() as ticker:
        result = call(big_session, "eval_expr", {"expr": expr})
    assert ticker.longest <= GIL_BOUND, f"the REPL's process was held {ticker.longest:.2f} s"
    assert result.ok or one_sentence(result.error), result.error
    assert level_of(CapabilityContext(big_session, big_session.config), expr) is Level.CHILD


@pytest.mark.parametrize("expr", PYLONG_WORK)
def test_integer_work_in_process_stays_below_pylong(big_session, expr: str) -> None:
    """Past these sizes Python 3.12+ runs ``_pylong``, which the session may have replaced: the child does."""
    assert level_of(CapabilityContext(big_session, big_session.config), expr) is Level.CHILD


@pytest.mark.parametrize("expr", SMALL_WORK)
def test_small_work_still_reads_in_process(big_session, expr: str) -> None:
    assert level_of(CapabilityContext(big_session, big_session.config), expr) is Level.PURE


@pytest.fixture(scope="module")
def held_session() -> pyaichat.Session:
    s = pyaichat.Session(config=Config(audit=False))
    assert s.run(HELD_SECRET_SETUP).ok
    return s


@pytest.mark.parametrize("expr", HELD_SECRET_ORACLES)
def test_a_secret_held_in_a_container_or_key_answers_nothing(held_session, expr: str) -> None:
    """Red team B7, B8, B8b: a comparison, a sum, a format, a look-up or a length through a secret held in
    a container (a dict key too: the walled child does not hide keys) is refused in one sentence."""
    result = call(held_session, "eval_expr", {"expr": expr})
    assert not result.ok and one_sentence(result.error) and "secret" in result.error, result
    for piece in ("48291357", "48291358", "ghp_R8sT", "Zq8pLmN4", "Tr0ub4dor", "AKIAIOSF"):
        assert piece not in result.error


@pytest.mark.parametrize(("expr", "expected"), HELD_SECRET_LEGIT)
def test_what_holds_no_secret_still_computes(held_session, expr: str, expected: str) -> None:
    result = call(held_session, "eval_expr", {"expr": expr})
    assert result.ok and result.text.endswith(expected), result


@pytest.mark.parametrize("expr", TRANSFORMED)
def test_a_secret_of_any_type_is_never_computed_with(session, expr: str) -> None:
    result = call(session, "eval_expr", {"expr": expr})
    assert not result.ok and one_sentence(result.error) and "secret" in result.error, result
    assert leaked(result.error) is None


@pytest.mark.parametrize(("tool", "expr", "expected"), LEGIT)
def test_the_reads_that_broke_answer(session, tool: str, expr: str, expected: str) -> None:
    result = call(session, tool, {"expr": expr})
    assert result.ok and expected in result.text, result


@pytest.mark.parametrize("expr", MODULE_ROADS)
def test_the_interpreters_modules_stay_out_of_reach(session, expr: str) -> None:
    result = call(session, "eval_expr", {"expr": expr})
    assert not result.ok and "module is not available" in result.error, result


def test_the_picture_and_list_globals_ask_no_repr_here(session) -> None:
    before = _state(session)
    listed = call(session, "list_globals", {})
    picture = session_picture(session, session.config)
    gc.collect()
    assert _state(session) == before  # Loud's __repr__ writes a file and counts: it did neither here
    assert listed.ok and "loud: " in listed.text and "loud: " in picture


def test_the_repls_assistant_gets_the_same_refusals_over_http(tmp_path, srv) -> None:
    """The REPL's built-in assistant (its controller over the local runtime, the real litellm client against
    the scripted server): the model asks for each break; what it is sent back refuses or hides."""
    from fakes.recorder import Recorder
    from pyaichat.agent.llm import LiteLLMClient
    from pyaichat.assemble import assemble
    from pyaichat.runtime import LocalRuntime

    watch = tmp_path / "watched"
    watch.mkdir()
    config = Config(model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4)
    session = pyaichat.Session(config=config)
    assert session.run(setup_source(str(watch))).ok
    session.run(FAILING_INPUT)
    runtime = LocalRuntime(session)
    ctrl = assemble(runtime, Recorder("no"), llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    before = _state(session)
    calls = [("eval_expr", {"expr": expr}) for expr in WRITES] + SECRET_ROADS + [("get_last_exception", {})]
    calls += ISSUE_44_CALLS
    srv.tools(*calls).text("Nothing could be changed or read there.")
    ctrl.ask("try them all")  # (how long a call may hold the process: the direct calls above measure it)
    gc.collect()
    assert _state(session) == before and list(watch.iterdir()) == []
    first, second = srv.bodies
    assert leaked(json.dumps(first)) is None  # the picture, with the failing input's message
    replies = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert len(replies) == len(calls) and all(leaked(r) is None for r in replies), replies
    assert issue_44_refusals(replies[-len(ISSUE_44_CALLS) :]), replies
    refusals = replies[: len(WRITES)]
    assert all("would change the session's" in r or "cannot write to a file" in r for r in refusals), refusals


# -- issue 44: the walled child holds no secret --------------------------------------------------------------
@pytest.fixture(scope="module")
def child_session(tmp_path_factory: pytest.TempPathFactory) -> pyaichat.Session:
    watch = tmp_path_factory.mktemp("watched")
    s = pyaichat.Session(config=Config(audit=False, tool_timeout=5.0))
    result = s.run(setup_source(str(watch)) + CHILD_SETUP)
    assert result.ok, result.error and result.error.formatted
    return s


@pytest.mark.parametrize(("tool", "args"), CHILD_ROADS, ids=[str(a) for _, a in CHILD_ROADS])
def test_no_transformation_carries_a_secret_out_of_the_child(child_session, tool: str, args: dict) -> None:
    """Reversed, hex, joined, ``ord`` per character, a closure or a default returned by the person's own
    function: the child replaced every secret it can reach before it evaluated, so none is in the answer."""
    result = call(child_session, tool, args)
    shown = (result.text or "") + (result.error or "")
    assert leaked_transformed(shown) is None, shown
    assert result.ok or one_sentence(result.error), result.error


@pytest.mark.parametrize(("tool", "args"), CHILD_ORACLES, ids=[str(a) for _, a in CHILD_ORACLES])
def test_a_comparison_with_a_right_guess_answers_false(child_session, tool: str, args: dict) -> None:
    result = call(child_session, tool, args)
    assert result.ok and answered_false(result.text), result


def test_the_person_keeps_their_secrets_and_plain_values_still_read(child_session) -> None:
    ns = child_session.namespace
    assert ns["vault"]["primary"] == ns["api_key"] and ns["reveal"]().startswith("closure-pw")
    assert ns["meta"].attrs["token"].startswith("attrs-token") and ns["conn"].api_key.startswith("dc-secret")
    assert call(child_session, "eval_expr", {"expr": "(lambda c: c.host)(conn)"}).text.endswith("'db.local'")
    assert "2" in call(child_session, "eval_expr", {"expr": "(lambda m: len(m))(meta)"}).text


def test_the_repls_assistant_gets_no_secret_from_the_child_over_http(tmp_path, srv) -> None:
    """The same roads asked by the model of the REPL's own assistant (the real litellm client against the
    scripted server): what it is sent back holds no secret nor a transformation of one."""
    from fakes.recorder import Recorder
    from pyaichat.agent.llm import LiteLLMClient
    from pyaichat.assemble import assemble
    from pyaichat.runtime import LocalRuntime

    config = Config(model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4)
    session = pyaichat.Session(config=config)
    assert session.run(setup_source(str(tmp_path)) + CHILD_SETUP).ok
    runtime = LocalRuntime(session)
    ctrl = assemble(runtime, Recorder("no"), llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    srv.tools(*CHILD_ROADS, *CHILD_ORACLES).text("Nothing of the secrets came back.")
    ctrl.ask("read them all")
    replies = [m["content"] for m in srv.bodies[1]["messages"] if m["role"] == "tool"]
    assert len(replies) == len(CHILD_ROADS) + len(CHILD_ORACLES)
    assert all(leaked_transformed(r) is None for r in replies), replies
    assert all(answered_false(r) for r in replies[len(CHILD_ROADS) :]), replies
