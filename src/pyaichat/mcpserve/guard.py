"""The guard in front of the Streamable HTTP endpoint: every request is checked before the MCP SDK sees it.

In order, each a cheap look at the headers:

1. **Host** must name this listener (``127.0.0.1:<port>``, ``localhost:<port>``, ``[::1]:<port>``, or the host
   the person named; any, when they named every address): a web page that rebinds its own DNS name to
   127.0.0.1 still sends its own name.
2. **No browser**: a request with an ``Origin``, ``Sec-Fetch-Site``, ``-Dest`` or ``-User`` header comes
   from a web page; MCP clients (Claude Code, Codex, Cursor, VS Code, the SDKs) send none of them. Refused,
   whatever the origin.
3. **Bearer token**: ``Authorization: Bearer <token>``, compared in constant time. The token is random per
   ``/mcp on`` and dies with ``/mcp off``. A request refused here after one with the token was served — in
   the same MCP session (``Mcp-Session-Id``, which only the server's answer opens) or on the same connection
   (clients of the 2026 wire have no session) — is told to the person (``on_refused``), naming the client the
   face saw there: a client lost its token, or someone holds a live session's id without it. At most one
   word per session or connection every ``REPORT_EVERY`` seconds, with how many were refused.
4. **Rate**: a token bucket per kind — requests that passed the token, and those that did not — so a flood
   gets ``429`` at once and cannot starve the person's session (which has its own bound per call too).
5. **Size**: a body over ``MAX_BODY`` is refused (``413``): by its ``Content-Length`` before it is read, and
   one sent without a length (chunked) as it streams in, before the SDK sees any of it.

A pure ASGI middleware: no framework, so the checks cost microseconds and cannot be bypassed by a route.
"""

from __future__ import annotations

import hmac
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .clients import safe_name
from .rate import RateBound

MAX_BODY = 1 << 20  # 1 MiB: a tool call's arguments; proposals are code, not data
# Headers only a browser sends. Not ``Sec-Fetch-Mode``: Node's fetch (the TypeScript SDK, Claude Code,
# VS Code) sends ``Sec-Fetch-Mode: cors`` on every request, but never these or ``Origin``.
BROWSER_ONLY = frozenset({"sec-fetch-site", "sec-fetch-dest", "sec-fetch-user"})
SESSION_HEADER = "mcp-session-id"
CLIENT_KEY = "pyaichat.client"  # the face writes the key of the client a request served into its scope
REPORT_EVERY = 10.0  # seconds between two words to the person about one session's refused requests
KEPT = 4096  # sessions and connections remembered (the oldest forgotten first)

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
        on_refused: Callable[[str | None, int], None] | None = None,
    ) -> None:
        self.app = app
        self._token = token.encode()
        self.hosts = frozenset(h.lower() for h in hosts)
        self.max_body = max_body
        self.rate = rate or RateBound(burst=400, per_second=200.0)
        self.strangers = strangers or RateBound(burst=50, per_second=20.0)
        self.refused: dict[int, int] = {}  # status → count, for tests and the log
        # (the client's key, if the face named one; requests refused since the last word): must not block
        self.on_refused = on_refused
        self._sessions: OrderedDict[str, None] = OrderedDict()  # ids this server opened for the token
        self._connections: OrderedDict[tuple[Any, ...], str | None] = OrderedDict()  # served → client key
        self._reported: dict[Any, tuple[float, int]] = {}  # session or connection → (last word, refused)

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
            self._refused_after_served(scope, headers.get(SESSION_HEADER))
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
        if SESSION_HEADER not in headers:  # an initialize: the session id the server opens is in its answer
            send = self._noting_session(send)
        try:
            await self.app(scope, receive, send)
        finally:
            self._noting_connection(scope)

    def _noting_session(self, send: Send) -> Send:
        async def noted(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                for raw_name, raw_value in message.get("headers") or ():
                    if raw_name.decode("latin-1").lower() == SESSION_HEADER:
                        _keep(self._sessions, raw_value.decode("latin-1"), None)
            await send(message)

        return noted

    def _noting_connection(self, scope: Scope) -> None:
        """A request with the token was served on this connection, for the client the face wrote down."""
        peer = tuple(scope.get("client") or ())
        if peer:
            key = scope.get(CLIENT_KEY)
            _keep(self._connections, peer, key if isinstance(key, str) else self._connections.get(peer))

    def _refused_after_served(self, scope: Scope, session_id: str | None) -> None:
        """A request without the token came in a session or on a connection served with it: a word to the
        person, kept rare."""
        if self.on_refused is None:
            return
        peer = tuple(scope.get("client") or ())
        if session_id is not None and session_id in self._sessions:
            where: Any = session_id
            key: str | None = safe_name(session_id)  # the face's key for a client with a session
        elif peer and peer in self._connections:
            where, key = peer, self._connections[peer]
        else:
            return  # a stranger: refused without a word (the strangers' rate bound holds them)
        now = time.monotonic()
        last, count = self._reported.get(where, (float("-inf"), 0))
        count += 1
        if now - last < REPORT_EVERY:
            self._reported[where] = (last, count)
            return
        self._reported[where] = (now, 0)
        if len(self._reported) > 2 * KEPT:
            known = set(self._sessions) | set(self._connections)
            self._reported = {k: v for k, v in self._reported.items() if k in known}
        try:
            self.on_refused(key, count)
        except Exception:
            pass  # a word that cannot be said never changes the answer

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


def _keep(kept: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    """Remember ``key`` as the newest, forgetting the oldest beyond ``KEPT``."""
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > KEPT:
        kept.popitem(last=False)
