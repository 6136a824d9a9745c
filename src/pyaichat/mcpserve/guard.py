"""The guard in front of the Streamable HTTP endpoint: every request is checked before the MCP SDK sees it.

In order, each a cheap look at the headers:

1. **Host** must name this listener (``127.0.0.1:<port>``, ``localhost:<port>``, ``[::1]:<port>``, or the host
   the person named; any, when they named every address): a web page that rebinds its own DNS name to
   127.0.0.1 still sends its own name.
2. **No browser**: a request with an ``Origin``, ``Sec-Fetch-Site``, ``-Dest`` or ``-User`` header comes
   from a web page; MCP clients (Claude Code, Codex, Cursor, VS Code, the SDKs) send none of them. Refused,
   whatever the origin.
3. **Bearer token**: ``Authorization: Bearer <token>``, compared in constant time. The token is random per
   ``/mcp on`` and dies with ``/mcp off``.
4. **Rate**: a token bucket per kind — requests that passed the token, and those that did not — so a flood
   gets ``429`` at once and cannot starve the person's session (which has its own bound per call too).
5. **Size**: a body over ``MAX_BODY`` is refused (``413``): by its ``Content-Length`` before it is read, and
   one sent without a length (chunked) as it streams in, before the SDK sees any of it.

A pure ASGI middleware: no framework, so the checks cost microseconds and cannot be bypassed by a route.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .rate import RateBound

MAX_BODY = 1 << 20  # 1 MiB: a tool call's arguments; proposals are code, not data
# Headers only a browser sends. Not ``Sec-Fetch-Mode``: Node's fetch (the TypeScript SDK, Claude Code,
# VS Code) sends ``Sec-Fetch-Mode: cors`` on every request, but never these or ``Origin``.
BROWSER_ONLY = frozenset({"sec-fetch-site", "sec-fetch-dest", "sec-fetch-user"})

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    def __init__(
        self,
        app: App,
        *,
        token: str,
        hosts: Iterable[str],
        max_body: int = MAX_BODY,
        rate: RateBound | None = None,
        strangers: RateBound | None = None,
    ) -> None:
        self.app = app
        self._token = token.encode()
        self.hosts = frozenset(h.lower() for h in hosts)
        self.max_body = max_body
        self.rate = rate or RateBound(burst=400, per_second=200.0)
        self.strangers = strangers or RateBound(burst=50, per_second=20.0)
        self.refused: dict[int, int] = {}  # status → count, for tests and the log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers") or ():
            name = raw_name.decode("latin-1").lower()
            headers[name] = (
                headers[name] + "," + raw_value.decode("latin-1")
                if name in headers
                else (raw_value.decode("latin-1"))
            )
        if "*" not in self.hosts and headers.get("host", "").lower() not in self.hosts:
            await self._refuse(send, 403, "This server answers only at its own address.")
            return
        if "origin" in headers or any(name in BROWSER_ONLY for name in headers):
            await self._refuse(send, 403, "Requests from web pages are refused.")
            return
        if not self._authorized(headers.get("authorization", "")):
            if not self.strangers.take():
                await self._refuse(send, 429, "Too many requests.", retry=True)
                return
            await self._refuse(send, 401, "A valid bearer token is required.", challenge=True)
            return
        if not self.rate.take():
            await self._refuse(send, 429, "Too many requests: slow down.", retry=True)
            return
        length = headers.get("content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_body
            except ValueError:
                too_big = True
            if too_big:
                await self._refuse(send, 413, "The request is too large.")
                return
        elif scope.get("method") not in ("GET", "HEAD", "DELETE"):
            gathered = await self._gather(receive, send)
            if gathered is None:
                return
            receive = gathered
        await self.app(scope, receive, send)

    def _authorized(self, value: str) -> bool:
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(token.strip().encode(), self._token)

    async def _gather(self, receive: Receive, send: Send) -> Receive | None:
        """A body sent without a length (chunked), read whole before the app sees any of it: ``None`` once it
        has been refused as too large (the app would have turned the error into a 500 of its own)."""
        body = bytearray()
        while True:
            message = await receive()
            if message.get("type") != "http.request":  # the client went away
                return None
            body += message.get("body") or b""
            if len(body) > self.max_body:
                await self._refuse(send, 413, "The request is too large.")
                return None
            if not message.get("more_body"):
                break
        first: list[dict[str, Any]] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> dict[str, Any]:
            return first.pop() if first else await receive()

        return replay

    async def _refuse(
        self, send: Send, status: int, message: str, *, challenge: bool = False, retry: bool = False
    ) -> None:
        self.refused[status] = self.refused.get(status, 0) + 1
        body = json.dumps({"error": message}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if challenge:
            headers.append((b"www-authenticate", b'Bearer realm="pyaichat"'))
        if retry:
            headers.append((b"retry-after", b"1"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
