"""A served session through the official MCP Python SDK's client over Streamable HTTP, and the same endpoint
attacked with raw HTTP: no token, a wrong one, a dead one, a web page, a rebound DNS name, a huge body, an
address beyond loopback."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from serve_helpers import Served, http_client, text

from pyaichat.capabilities import secret_values

pytestmark = pytest.mark.e2e

SOURCE = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'] * 10, 'temp': range(30)})\n"
    "db_password = 'hunter2-Zq8vN3xL0pR7'\n"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = Served(tmp_path_factory.mktemp("mcp") / "state", SOURCE)
    yield served
    served.stop()


def test_an_agent_lists_the_tools_reads_a_frame_evaluates_and_changes_nothing(served: Served) -> None:
    before = served.session.namespace["df"].copy()
    served.lines.clear()

    async def agent() -> dict[str, str]:
        out: dict[str, str] = {}
        async with http_client(served.url, served.token, "cursor") as client:
            tools = (await client.list_tools()).tools
            out["tools"] = " ".join(t.name for t in tools)
            assert all(t.annotations.read_only_hint for t in tools if t.name != "propose_code")
            out["picture"] = text(await client.call_tool("get_session_picture", {}))
            out["repr"] = text(await client.call_tool("get_repr", {"expr": "df"}))
            means = await client.call_tool("eval_expr", {"expr": "df.groupby('city').temp.mean()"})
            out["shape"] = text(means)
            write = await client.call_tool("run_python", {"code": "df['temp'] = 0\ndf2 = df\nprint('done')"})
            out["write"] = text(write)
            # a write through eval_expr runs on the walled copy too: the session's frame keeps its column
            await client.call_tool("eval_expr", {"expr": "df.drop(columns=['temp'], inplace=True)"})
            refused = await client.call_tool("eval_expr", {"expr": "__import__('os').system('true')"})
            assert refused.is_error
            out["refused"] = text(refused)
            secret = await client.call_tool("get_repr", {"expr": "db_password"})
            out["secret"] = text(secret)
        return out

    out = anyio.run(agent)
    names = out["tools"].split()
    assert names[0] == "get_session_picture"
    assert {"get_repr", "eval_expr", "run_python", "query_sql"} <= set(names)
    assert (
        names[-1] == "propose_code"
    )  # a person at this terminal decides (tests/mcpserve/test_serve_propose)
    assert "df: DataFrame 30×2" in out["picture"] and "pyaichat REPL" in out["picture"]
    assert "Oslo" in out["repr"] and "30 rows" in out["repr"]
    assert "Lima" in out["shape"]
    assert "done" in out["write"]  # it ran in the walled copy ...
    namespace = served.session.namespace
    assert "df2" not in namespace and namespace["df"].equals(before)  # ... and nothing reached the session
    assert "hunter2" not in str(out)
    assert served.lines[0].startswith("⇄ cursor get_session_picture() ")
    assert [line.split()[2].split("(")[0] for line in served.lines] == [
        "get_session_picture",
        "get_repr",
        "eval_expr",
        "run_python",
        "eval_expr",
        "eval_expr",
        "get_repr",
    ]


def post(url: str, headers: dict[str, str], body: bytes = b"{}") -> httpx.Response:
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    return httpx.post(url, headers={**base, **headers}, content=body, timeout=30)


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
)


def test_without_the_right_token_from_a_page_or_for_another_host_nothing_is_answered(served: Served) -> None:
    url, token = served.url, served.token
    good = {"authorization": f"Bearer {token}"}
    assert post(url, good, INITIALIZE).status_code == 200
    assert post(url, {}, INITIALIZE).status_code == 401
    assert post(url, {"authorization": "Bearer " + token[::-1]}, INITIALIZE).status_code == 401
    assert post(url, {**good, "origin": "https://attacker.example"}, INITIALIZE).status_code == 403
    assert post(url, {**good, "origin": "http://127.0.0.1"}, INITIALIZE).status_code == 403
    assert post(url, {**good, "sec-fetch-site": "same-origin"}, INITIALIZE).status_code == 403
    port = url.rsplit(":", 1)[1].split("/")[0]
    assert post(url, {**good, "host": f"rebound.attacker.example:{port}"}, INITIALIZE).status_code == 403
    assert post(url, good, b"[" + b'"x",' * 400_000 + b'"x"]').status_code == 413


def test_a_request_without_the_token_after_a_client_was_served_is_a_quiet_line(served: Served) -> None:
    """A client that was served sends requests without the token (it lost it, or someone else uses its
    connection): the person sees it once, named as that client's calls are; a stranger's refusals stay
    silent."""
    served.lines.clear()
    kept: list[Any] = []

    async def agent() -> None:
        async with http_client(served.url, served.token, "claude-code", kept) as client:
            await client.call_tool("get_type", {"expr": "df"})
            wrong = {"authorization": "Bearer " + served.token[::-1], "content-type": "application/json"}
            for _ in range(3):  # on the connection the call went over (kept alive by the client)
                assert (await kept[0].post(served.url, headers=wrong, content=INITIALIZE)).status_code == 401
            stranger = {"authorization": "Bearer nope", "mcp-session-id": "0123456789abcdef"}
            assert (await anyio.to_thread.run_sync(post, served.url, stranger)).status_code == 401

    anyio.run(agent)
    deadline = time.monotonic() + 10
    while not any("refused" in line for line in served.lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second line, were one coming, would be here by now
    refused = [line for line in served.lines if "refused" in line]
    assert refused == ["⇄ claude-code refused · a request without the serving token after it was served"]


def test_a_chunked_body_over_the_limit_is_413_not_an_internal_error(served: Served) -> None:
    """No length given (chunked transfer): the guard counts the body as it streams in."""

    def chunks():  # type: ignore[no-untyped-def]
        yield b"["
        for _ in range(300):
            yield b'"x",' * 1000  # 1.2 MB in all
        yield b'"x"]'

    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    headers = {**base, "authorization": f"Bearer {served.token}"}
    response = httpx.post(served.url, headers=headers, content=chunks(), timeout=30)
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.status_code == 413, response.text


def non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (where another machine would reach it)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET: nothing is sent, the kernel picks the outgoing address
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_it_listens_on_loopback_only(served: Served) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address beyond loopback")
    port = int(served.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(OSError):
        socket.create_connection((address, port), timeout=5).close()


def test_a_named_host_listens_there_and_still_wants_the_token(tmp_path: Path) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address beyond loopback")
    served = Served(tmp_path / "state", "x = 1", host="0.0.0.0")
    try:
        said = served.frontend.notices()[-1]
        assert "reachable beyond this machine" in said
        port = served.url.rsplit(":", 1)[1].split("/")[0]
        remote = f"http://{address}:{port}/mcp"
        # the addresses other machines use, not 0.0.0.0; the token in clear HTTP, said (issue 36)
        assert f"Other machines use http://{address}:{port}/mcp" in said or f"{address}:{port}/mcp" in said
        assert "the token travels in clear HTTP" in said and f"ssh -L {port}:127.0.0.1:{port}" in said
        assert post(remote, {}, INITIALIZE).status_code == 401
        assert post(remote, {"authorization": f"Bearer {served.token}"}, INITIALIZE).status_code == 200
        page = {"authorization": f"Bearer {served.token}", "origin": "http://x"}
        assert post(remote, page, INITIALIZE).status_code == 403
    finally:
        served.stop()


def test_off_closes_every_connection_and_the_token_dies_with_it(tmp_path: Path) -> None:
    served = Served(tmp_path / "state", "x = 1")
    url, token = served.url, served.token
    record = served.service.record_path
    assert record is not None and Path(record).exists()

    async def open_then_off() -> str:
        outcome = "nothing"
        try:
            async with http_client(url, token) as client:
                assert "int" in text(await client.call_tool("eval_expr", {"expr": "x"}))
                served.stop()
                try:
                    result = await client.call_tool("eval_expr", {"expr": "x"})
                except Exception as exc:  # the connection is gone: the SDK raises
                    outcome = type(exc).__name__
                else:
                    outcome = "answered: " + text(result)
        except Exception as exc:  # the dropped connection ends the client's task group (or its goodbye)
            if outcome == "nothing":
                outcome = type(exc).__name__
        return outcome

    outcome = anyio.run(open_then_off)
    assert outcome != "nothing" and not outcome.startswith("answered"), outcome
    assert not Path(record).exists()
    assert "Stopped serving" in served.frontend.notices()[-1]
    with pytest.raises(httpx.ConnectError):
        post(url, {"authorization": f"Bearer {token}"}, INITIALIZE)
    # serving again: a new token; the old one is worth nothing
    with_new = Served(tmp_path / "state2", "x = 1")
    try:
        new_url = with_new.url
        assert with_new.token != token
        assert post(new_url, {"authorization": f"Bearer {token}"}, INITIALIZE).status_code == 401
    finally:
        with_new.stop()


def test_calls_at_once_from_one_client_count_as_that_client(served: Served) -> None:
    async def agent() -> None:
        async with (
            http_client(served.url, served.token, "parallel-agent") as client,
            anyio.create_task_group() as group,
        ):
            for _ in range(6):
                group.start_soon(client.call_tool, "eval_expr", {"expr": "1 + 1"})

    anyio.run(agent)
    rows = [line for line in served.service.status().splitlines() if "parallel-agent" in line]
    assert len(rows) == 1 and "6 calls" in rows[0], rows
    # over Streamable HTTP there is no connection to watch: status claims none, it says when it last called
    assert rows[0].startswith("  parallel-agent (http): 6 calls, last ") and "connected" not in rows[0]


def test_a_secret_assigned_between_two_calls_is_masked_by_value_on_the_very_next_one(served: Served) -> None:
    """The session's secret values are found again only when its namespace may have changed (an input ran),
    not on every call: a secret the person assigns right after an agent's call — well within the walk's
    time-to-live — is masked by value in the agent's very next call, read under another name."""
    value = "Zq8vN3xL0pR7-wKe5"

    async def agent() -> tuple[str, str]:
        async with http_client(served.url, served.token, "next-call") as client:
            served.ctrl.handle("plain_note = 'nothing secret here'")
            before = text(await client.call_tool("get_repr", {"expr": "plain_note"}))
            # the person, at their prompt, between two calls of the agent
            served.ctrl.handle(f"stripe_api_key = {value!r}\nplain_note = 'key: ' + stripe_api_key[:]")
            after = text(await client.call_tool("get_repr", {"expr": "plain_note"}))
        return before, after

    started = time.monotonic()
    before, after = anyio.run(agent)
    assert time.monotonic() - started < secret_values.TTL  # the time-to-live did not bring it
    assert "nothing secret here" in before
    assert value not in after and "<redacted secret value>" in after, after
