"""The reviews' breaks (``tests/readonly_breaks.py``) sent by an outside agent, over ``pyaichat mcp`` (stdio)
and Streamable HTTP: the same refusals as the built-in assistant gets, nothing written, no secret back — nor a
transformation of one the walled child computed."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from serve_helpers import Served, http_client, stdio_client, text

from readonly_breaks import (
    CHILD_ORACLES,
    CHILD_ROADS,
    CHILD_SETUP,
    EXPR_TOOLS,
    FAILING_INPUT,
    ISSUE_44_CALLS,
    SECRET_ROADS,
    WRITES,
    answered_false,
    issue_44_refusals,
    leaked,
    leaked_transformed,
    one_sentence,
    setup_source,
    state_source,
)

pytestmark = pytest.mark.e2e

CALLS = [(tool, {"expr": expr}) for expr in WRITES for tool in EXPR_TOOLS[:2]] + SECRET_ROADS + ISSUE_44_CALLS
CALL_BOUND = 6.0  # seconds: the tool deadline (2 s) and the loaded machine's slack; the freezes took 7 s+


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("readonly")
    watch = base / "watched"
    watch.mkdir()
    served = Served(base / "state", setup_source(str(watch)) + FAILING_INPUT + "\n")
    yield served
    served.stop()


def _state(served: Served) -> str:
    return eval(state_source(), served.session.namespace)


def _check(served: Served, before: str, results: list[tuple[str, dict, bool, str]]) -> None:
    gc.collect()  # a copy of the session's object made in its process would be finalised by now
    assert _state(served) == before
    assert list(Path(served.session.namespace["WATCH"]).iterdir()) == []
    for name, args, is_error, said in results:
        assert leaked(said) is None, (name, args, said)
        if args.get("expr") in WRITES:
            assert is_error and one_sentence(said), (name, args, said)
            assert "would change the session's" in said or "cannot write to a file" in said, said
    said = [result[3] for result in results if (result[0], result[1]) in ISSUE_44_CALLS]
    assert issue_44_refusals(said), said


def test_breaks_over_pyaichat_mcp(served: Served) -> None:
    before = _state(served)

    async def agent() -> list[tuple[str, dict, bool, str]]:
        out = []
        async with stdio_client(served.env(), "attacker") as client:
            for name, args in [*CALLS, ("get_last_exception", {}), ("get_session_picture", {})]:
                started = time.perf_counter()
                result = await client.call_tool(name, args)
                assert time.perf_counter() - started <= CALL_BOUND, (name, args)  # nothing froze it
                out.append((name, args, bool(result.is_error), text(result)))
        return out

    results = anyio.run(agent)
    _check(served, before, results)
    exception, picture = results[-2][3], results[-1][3]
    assert "invalid literal for int()" in exception and "invalid literal for int()" in picture


def test_breaks_over_streamable_http(served: Served) -> None:
    before = _state(served)

    async def agent() -> list[tuple[str, dict, bool, str]]:
        out = []
        async with http_client(served.url, served.token, "http-attacker") as client:
            for name, args in CALLS:
                started = time.perf_counter()
                result = await client.call_tool(name, args)
                assert time.perf_counter() - started <= CALL_BOUND, (name, args)  # nothing froze it
                out.append((name, args, bool(result.is_error), text(result)))
        return out

    _check(served, before, anyio.run(agent))


@pytest.fixture(scope="module")
def served_secrets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("child")
    served = Served(base / "state", setup_source(str(base)) + CHILD_SETUP)
    yield served
    served.stop()


def _check_child(results: list[tuple[str, dict, bool, str]]) -> None:
    for name, args, _, said in results:
        assert leaked_transformed(said) is None, (name, args, said)
    for name, args, is_error, said in results[len(CHILD_ROADS) :]:
        assert not is_error and answered_false(said), (name, args, said)


def test_the_child_holds_no_secret_over_pyaichat_mcp(served_secrets: Served) -> None:
    async def agent() -> list[tuple[str, dict, bool, str]]:
        out = []
        async with stdio_client(served_secrets.env(), "attacker") as client:
            for name, args in [*CHILD_ROADS, *CHILD_ORACLES]:
                result = await client.call_tool(name, args)
                out.append((name, args, bool(result.is_error), text(result)))
        return out

    _check_child(anyio.run(agent))


def test_the_child_holds_no_secret_over_streamable_http(served_secrets: Served) -> None:
    async def agent() -> list[tuple[str, dict, bool, str]]:
        out = []
        async with http_client(served_secrets.url, served_secrets.token, "http-attacker") as client:
            for name, args in [*CHILD_ROADS, *CHILD_ORACLES]:
                result = await client.call_tool(name, args)
                out.append((name, args, bool(result.is_error), text(result)))
        return out

    _check_child(anyio.run(agent))
