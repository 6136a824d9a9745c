"""The HTTP guard, request by request: each check refuses what it must before the MCP SDK sees anything."""

from __future__ import annotations

import asyncio
from typing import Any

from pyaichat.mcpserve.guard import CLIENT_KEY, Guard
from pyaichat.mcpserve.rate import RateBound

TOKEN = "t0k3n-right"
HOSTS = ["127.0.0.1:5000", "localhost:5000", "[::1]:5000"]


class App:
    def __init__(self) -> None:
        self.seen: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.seen.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def request(
    guard: Guard,
    headers: dict[str, str],
    chunks: tuple[bytes, ...] = (b"{}",),
    peer: tuple[str, int] = ("127.0.0.1", 50000),
) -> tuple[int, dict[str, str]]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "client": peer,
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    pending = list(chunks)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        chunk = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], {k.decode(): v.decode() for k, v in start.get("headers", [])}


def good(**extra: str) -> dict[str, str]:
    return {"host": "127.0.0.1:5000", "authorization": f"Bearer {TOKEN}", **extra}


def test_a_request_with_the_token_from_an_mcp_client_passes() -> None:
    app = App()
    guard = Guard(app, token=TOKEN, hosts=HOSTS)
    assert request(guard, good())[0] == 200
    assert request(guard, good(host="localhost:5000", authorization=f"bearer   {TOKEN}"))[0] == 200
    assert app.seen == [b"{}", b"{}"]


def test_no_token_a_wrong_one_or_another_scheme_is_401_with_a_challenge() -> None:
    app = App()
    guard = Guard(app, token=TOKEN, hosts=HOSTS)
    for auth in (None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer ", TOKEN):
        headers = good()
        if auth is None:
            del headers["authorization"]
        else:
            headers["authorization"] = auth
        status, response = request(guard, headers)
        assert status == 401, auth
        assert response["www-authenticate"].startswith("Bearer")
    assert app.seen == []


def test_a_web_page_is_refused_whatever_its_origin_even_with_the_token() -> None:
    app = App()
    guard = Guard(app, token=TOKEN, hosts=HOSTS)
    for extra in (
        {"origin": "https://evil.example"},
        {"origin": "http://127.0.0.1:5000"},
        {"origin": "null"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-dest": "empty"},
        {"sec-fetch-user": "?1"},
    ):
        assert request(guard, good(**extra))[0] == 403, extra
    assert app.seen == []
    # Node's fetch (the TypeScript SDK, Claude Code, VS Code) sends this one on every request
    assert request(guard, good(**{"sec-fetch-mode": "cors", "user-agent": "node"}))[0] == 200


def test_a_rebound_dns_name_or_another_port_is_refused() -> None:
    app = App()
    guard = Guard(app, token=TOKEN, hosts=HOSTS)
    for host in ("evil.example:5000", "127.0.0.1:5001", "127.0.0.1", "", "localhost.evil.example:5000"):
        assert request(guard, good(host=host))[0] == 403, host
    assert app.seen == []


def test_an_oversized_body_is_refused_by_its_length_or_as_it_streams_in() -> None:
    app = App()
    guard = Guard(app, token=TOKEN, hosts=HOSTS, max_body=100)
    assert request(guard, good(**{"content-length": "101"}))[0] == 413
    assert request(guard, good(**{"content-length": "junk"}))[0] == 413
    assert request(guard, good(), chunks=(b"x" * 60, b"y" * 60))[0] == 413  # chunked: no length given
    assert request(guard, good(), chunks=(b"x" * 50, b"y" * 50))[0] == 200
    assert app.seen == [b"x" * 50 + b"y" * 50]


def test_a_flood_is_429_past_the_burst_for_clients_and_strangers_alike() -> None:
    app = App()
    guard = Guard(
        app,
        token=TOKEN,
        hosts=HOSTS,
        rate=RateBound(burst=3, per_second=0.0),
        strangers=RateBound(burst=2, per_second=0.0),
    )
    assert [request(guard, good())[0] for _ in range(4)] == [200, 200, 200, 429]
    wrong = good(authorization="Bearer nope")
    statuses = [request(guard, wrong)[0] for _ in range(3)]
    assert statuses == [401, 401, 429]
    assert request(guard, good())[1].get("retry-after") == "1"


class Opening(App):
    """An app that opens an MCP session on each initialize (a request without a session id), as the SDK does,
    and names the client it served in the scope, as the face does."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await receive()
        opened = not any(name == b"mcp-session-id" for name, _ in scope["headers"])
        headers = [(b"mcp-session-id", f"s{len(self.seen)}".encode())] if opened else []
        scope[CLIENT_KEY] = "claude-code"
        self.seen.append(b"")
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok"})


def test_a_refused_request_after_one_was_served_is_told_rarely_with_a_count(monkeypatch) -> None:
    import pyaichat.mcpserve.guard as guard_module

    told: list[tuple[str | None, int]] = []
    guard = Guard(Opening(), token=TOKEN, hosts=HOSTS, on_refused=lambda key, n: told.append((key, n)))
    assert request(guard, good())[0] == 200  # opens s0 on 127.0.0.1:50000
    other = ("127.0.0.1", 50001)  # not a connection that was served
    stolen = {**good(), "authorization": "Bearer guessed", "mcp-session-id": "s0"}
    assert [request(guard, stolen, peer=other)[0] for _ in range(3)] == [401, 401, 401]
    assert told == [("s0", 1)]  # the session's key, at once; the next ones wait for REPORT_EVERY
    monkeypatch.setattr(guard_module, "REPORT_EVERY", 0.0)
    assert request(guard, stolen, peer=other)[0] == 401
    assert told == [("s0", 1), ("s0", 3)]  # the two held back and this one
    # on the connection that was served (no session: the 2026 wire), named by the client the face wrote down
    assert request(guard, {**good(), "authorization": "Bearer old"})[0] == 401
    assert told[-1] == ("claude-code", 1)
    # a session id nobody opened here, on a connection never served, or none at all: a stranger, no word
    told.clear()
    assert request(guard, {**stolen, "mcp-session-id": "made-up"}, peer=other)[0] == 401
    assert request(guard, {**good(), "authorization": "Bearer guessed"}, peer=other)[0] == 401
    # a session id sent with the token is not taken as opened: only the server's own answer opens one
    assert request(guard, good(**{"mcp-session-id": "claimed"}), peer=("127.0.0.1", 50002))[0] == 200
    assert request(guard, {**stolen, "mcp-session-id": "claimed"}, peer=other)[0] == 401
    assert told == []
