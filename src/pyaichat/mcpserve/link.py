"""A face's end of the link to a session's endpoint: each call on a connection of its own, reused.

``SessionLink.connect`` opens the endpoint named in a discovery record, proves the token and receives the
session's tool table and identity. A request takes an idle connection (or opens one), sends, and reads its
answer on the same thread — no reader thread to hand the answer over, which would cost a wake-up per call —
then gives the connection back. Calls at once use connections at once (a proposal holds one while the person
decides); the session bounds how many it accepts. The first connection stays idle as a watch: when the
session stops serving or exits, it ends, and ``wait_closed`` returns.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import threading
from typing import Any

from .wire import MAX_REPLY, PROTOCOL, Channel, LinkClosed

CONNECT_TIMEOUT = 5.0
IDLE_KEPT = 8  # idle connections kept for the next calls


def _open(address: dict[str, Any], token: str, face: str, face_id: str) -> tuple[Channel, dict[str, Any]]:
    """Connect and say hello; ``LinkClosed`` (one sentence) when the session does not answer or refuses."""
    try:
        if "unix" in address:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: Any = address["unix"]
        else:
            host, port = address["tcp"]
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            target = (host, int(port))
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(target)
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise LinkClosed(f"The session's endpoint does not answer ({exc}).") from None
    channel = Channel(sock, MAX_REPLY)
    channel.send({"op": "hello", "token": token, "face": face, "face_id": face_id, "protocol": PROTOCOL})
    welcome = channel.receive()
    if welcome.get("op") != "welcome":
        channel.close()
        raise LinkClosed("The session refused the connection.")
    sock.settimeout(None)
    return channel, welcome


class SessionLink:
    def __init__(
        self,
        address: dict[str, Any],
        token: str,
        face: str,
        face_id: str,
        watch: Channel,
        welcome: dict[str, Any],
    ) -> None:
        self._address, self._token, self._face, self._face_id = address, token, face, face_id
        self.tools: list[dict[str, Any]] = list(welcome.get("tools") or [])
        self.info: dict[str, Any] = dict(welcome.get("info") or {})
        self._ids = itertools.count(1)
        self._idle: list[Channel] = []
        self._aidle: list[Any] = []  # the event loop's idle connections (acall), (stream, reader) pairs
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._watch = watch
        threading.Thread(target=self._watch_until_closed, name="pyaichat-mcp-watch", daemon=True).start()

    @classmethod
    def connect(cls, address: dict[str, Any], token: str, *, face: str) -> SessionLink:
        face_id = os.urandom(8).hex()  # the same on every connection of this link: one face to the session
        watch, welcome = _open(address, token, face, face_id)
        return cls(address, token, face, face_id, watch, welcome)

    @property
    def closed(self) -> bool:
        return self._ended.is_set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and read its answer (``LinkClosed`` when the session is gone)."""
        if self._ended.is_set():
            raise LinkClosed("The session stopped serving.")
        channel = self._take()
        rid = next(self._ids)
        try:
            channel.send({"id": rid, "op": op, **fields})
            reply = channel.receive()
        except LinkClosed:
            channel.close()
            raise LinkClosed("The session stopped serving.") from None
        if reply.get("id") != rid:
            channel.close()
            raise LinkClosed("The session answered out of turn.")
        self._give_back(channel)
        return reply

    def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        reply = self.request("call", key=key, client=client, transport=transport, name=name, args=args)
        result = reply.get("result")
        if not isinstance(result, dict):
            raise LinkClosed(str(reply.get("error") or "The session sent no result."))
        return result

    async def acall(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        """``call`` from a face's event loop, on connections of the loop's own: no worker thread is woken to
        make the call and none to hand its answer back (each wake-up is a scheduling delay on a busy machine).
        Calls at once use connections at once, as ``request`` does."""
        import anyio  # the faces' event loop: only in their processes
        from anyio.streams.buffered import BufferedByteReceiveStream

        if self._ended.is_set():
            raise LinkClosed("The session stopped serving.")
        rid = next(self._ids)
        message = {"id": rid, "op": "call", "key": key, "client": client, "transport": transport}
        line = json.dumps({**message, "name": name, "args": args}, ensure_ascii=False, default=str)
        stream: Any = None
        try:
            if self._aidle:
                stream, reader = self._aidle.pop()
            else:
                if "unix" in self._address:
                    stream = await anyio.connect_unix(self._address["unix"])
                else:
                    host, port = self._address["tcp"]
                    stream = await anyio.connect_tcp(host, int(port))
                reader = BufferedByteReceiveStream(stream)
                hello = {"op": "hello", "token": self._token, "face": self._face, "protocol": PROTOCOL}
                hello["face_id"] = self._face_id
                await stream.send(json.dumps(hello).encode() + b"\n")
                if json.loads(await reader.receive_until(b"\n", MAX_REPLY)).get("op") != "welcome":
                    raise LinkClosed("The session refused the connection.")
            await stream.send(line.encode() + b"\n")
            reply = json.loads(await reader.receive_until(b"\n", MAX_REPLY))
        except (OSError, ValueError, anyio.EndOfStream, anyio.BrokenResourceError, anyio.DelimiterNotFound):
            if stream is not None:
                await stream.aclose()
            raise LinkClosed("The session stopped serving.") from None
        if not isinstance(reply, dict) or reply.get("id") != rid or not isinstance(reply.get("result"), dict):
            await stream.aclose()
            raise LinkClosed("The session answered out of turn.")
        if len(self._aidle) < IDLE_KEPT and not self._ended.is_set():
            self._aidle.append((stream, reader))
        else:
            await stream.aclose()
        return reply["result"]

    def close(self) -> None:
        self._ended.set()
        self._watch.close()
        with self._lock:
            idle, self._idle = self._idle, []
        for channel in idle:
            channel.close()

    # -- connections -----------------------------------------------------------------------------------------
    def _take(self) -> Channel:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            channel, _ = _open(self._address, self._token, self._face, self._face_id)
        except LinkClosed:
            self.close()
            raise LinkClosed("The session stopped serving.") from None
        return channel

    def _give_back(self, channel: Channel) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT and not self._ended.is_set():
                self._idle.append(channel)
                return
        channel.close()

    def _watch_until_closed(self) -> None:
        try:
            while True:
                self._watch.receive()  # the session never writes here: only its end arrives
        except LinkClosed:
            pass
        self.close()


class LinkBackend:
    """A face's backend over one session's link (the HTTP face): a dropped link is a failed call that says
    so, never an exception in the face."""

    def __init__(self, link: SessionLink) -> None:
        self.link = link

    def tools(self) -> list[dict[str, Any]]:
        return self.link.tools

    async def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        try:
            return await self.link.acall(key, client, transport, name, args)
        except LinkClosed as exc:
            return {"ok": False, "text": "", "error": f"The session stopped serving: {exc}", "images": []}
