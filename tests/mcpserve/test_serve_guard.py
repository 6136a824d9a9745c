"""The HTTP guard, request by request: each check refuses what it must before the MCP SDK sees anything."""

from __future__ import annotations

import asyncio
from typing import Any

from pyaichat.mcpserve.guard import Guard
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
) -> tuple[int, dict[str, str]]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
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
