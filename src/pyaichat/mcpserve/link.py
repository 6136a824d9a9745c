"""A face's end of the link to a session's endpoint: many calls at once over one connection.

``SessionLink.connect`` opens the endpoint named in a discovery record, proves the token and receives the
session's tool table and identity. ``request`` may be called from any thread; a reader thread hands each
answer to the caller waiting for its ``id``. When the link drops (the session stopped serving or exited),
every waiting caller gets ``LinkClosed`` at once.
"""

from __future__ import annotations

import itertools
import socket
import threading
from typing import Any

from .wire import MAX_REPLY, PROTOCOL, Channel, LinkClosed

CONNECT_TIMEOUT = 5.0


class SessionLink:
    def __init__(self, channel: Channel, welcome: dict[str, Any]) -> None:
        self.channel = channel
        self.tools: list[dict[str, Any]] = list(welcome.get("tools") or [])
        self.info: dict[str, Any] = dict(welcome.get("info") or {})
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._ended = threading.Event()
        threading.Thread(target=self._read, name="pyaichat-mcp-link", daemon=True).start()

    @classmethod
    def connect(cls, address: dict[str, Any], token: str, *, face: str) -> SessionLink:
        """Connect and say hello; ``LinkClosed`` (one sentence) when the session does not answer."""
        try:
            if "unix" in address:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                target: Any = address["unix"]
            else:
                host, port = address["tcp"]
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                target = (host, int(port))
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(target)
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise LinkClosed(f"The session's endpoint does not answer ({exc}).") from None
        channel = Channel(sock, MAX_REPLY)
        channel.send({"op": "hello", "token": token, "face": face, "protocol": PROTOCOL})
        welcome = channel.receive()
        if welcome.get("op") != "welcome":
            channel.close()
            raise LinkClosed("The session refused the connection.")
        sock.settimeout(None)
        return cls(channel, welcome)

    @property
    def closed(self) -> bool:
        return self._closed

    def wait_closed(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    def request(self, op: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its answer (``LinkClosed`` if the link drops or ``timeout`` ends)."""
        rid = next(self._ids)
        done = threading.Event()
        box: list[dict[str, Any]] = []
        with self._lock:
            if self._closed:
                raise LinkClosed("The session stopped serving.")
            self._waiting[rid] = (done, box)
        try:
            self.channel.send({"id": rid, "op": op, **fields})
            if not done.wait(timeout) or not box:
                raise LinkClosed("The session stopped serving." if self._closed else "No answer in time.")
            return box[0]
        finally:
            with self._lock:
                self._waiting.pop(rid, None)

    def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        reply = self.request("call", key=key, client=client, transport=transport, name=name, args=args)
        result = reply.get("result")
        if not isinstance(result, dict):
            raise LinkClosed(str(reply.get("error") or "The session sent no result."))
        return result

    def close(self) -> None:
        self.channel.close()
        self._fail_all()

    def _read(self) -> None:
        try:
            while True:
                message = self.channel.receive()
                with self._lock:
                    waiter = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
                if waiter is not None:
                    waiter[1].append(message)
                    waiter[0].set()
        except LinkClosed:
            pass
        self._fail_all()

    def _fail_all(self) -> None:
        with self._lock:
            self._closed = True
            waiting = list(self._waiting.values())
        self._ended.set()
        for done, _ in waiting:
            done.set()


class LinkBackend:
    """A face's backend over one session's link (the HTTP face): a dropped link is a failed call that says
    so, never an exception in the face."""

    def __init__(self, link: SessionLink) -> None:
        self.link = link

    def tools(self) -> list[dict[str, Any]]:
        return self.link.tools

    def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        try:
            return self.link.call(key, client, transport, name, args)
        except LinkClosed as exc:
            return {"ok": False, "text": "", "error": f"The session stopped serving: {exc}", "images": []}
