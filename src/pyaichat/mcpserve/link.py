"""A face's end of the link to a session's endpoint: each call on a connection of its own, reused.

``SessionLink.connect`` opens the endpoint, proves who listens there (the peer's user and, given ``pid``,
its process: ``prove``), says hello with the token and receives the session's tool table and identity. A
call (``acall``, on the face's event loop) takes an idle connection (or opens one), sends, and reads its
answer on the same loop — no thread to hand the answer over, which would cost a wake-up per call — then gives
the connection back. The connections are asyncio's own streams (every face runs asyncio: the SDK's stdio
server through anyio, uvicorn): their socket stays registered with the loop, where anyio's socket stream
registered and removed it around every read (two ``epoll_ctl`` calls and a few callbacks: ~45 µs of the
face's time a call). Calls at once use connections at once (a proposal holds one while the person decides);
the session bounds how many it accepts. The first connection stays idle as a watch: when the session stops
serving or exits, it ends, and ``wait_closed`` returns.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
from typing import Any

from ..ipc import Channel, ChannelClosed, decode, encode, hello, peer
from .endpoint import MAX_REPLY, socket_path
from .tools import PROPOSE

CONNECT_TIMEOUT = 5.0
IDLE_KEPT = 8  # idle connections kept for the next calls
# Calls one face has on the way at once (a proposal, which waits for the person, is not one of them: the
# session bounds those). The session answers calls one at a time, so more would only queue there, and every
# face's connections share the session's bound (``endpoint.MAX_CONNECTIONS``).
CALLS_AT_ONCE = 8
GONE = "The session stopped serving."


class Unproven(ChannelClosed):
    """The process listening at an endpoint is not the session it should be (``str()``: why, one clause)."""


def failure(error: str) -> dict[str, Any]:
    """A failed call as the faces send it on (a ``CapabilityResult``'s fields)."""
    return {"ok": False, "text": "", "error": error, "truncated": False, "duration_ms": 0.0, "images": []}


def prove(sock: socket.socket, pid: int | None) -> None:
    """``Unproven`` unless the process listening on ``sock`` is this user's and (given) process ``pid``. Where
    the system does not tell (not Linux), the private directory the socket is in is the wall."""
    seen = peer(sock)
    if seen is None:
        return
    if (
        seen[0] == 0
    ):  # no peer at all (a connect that never completed): not a proof of anything, nor a refusal
        raise ChannelClosed("The session's endpoint did not take the connection.")
    if hasattr(os, "getuid") and seen[1] != os.getuid():
        raise Unproven("the process listening on its socket belongs to another user")
    if pid is not None and seen[0] != pid:
        raise Unproven(f"the process listening on its socket is pid {seen[0]}, not the session's pid {pid}")


def _open(
    address: dict[str, Any], pid: int | None, greeting: dict[str, Any]
) -> tuple[Channel, dict[str, Any]]:
    """Connect, prove the peer and say hello; ``ChannelClosed`` (one sentence) when the session does not
    answer or refuses, ``Unproven`` when it is not the session named."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        with socket_path(str(address["unix"])) as where:
            sock.connect(where)
        prove(sock, pid)
    except Unproven:
        sock.close()
        raise
    except (OSError, KeyError, TypeError, ValueError) as exc:
        sock.close()
        raise ChannelClosed(f"The session's endpoint does not answer ({exc}).") from None
    channel = Channel.over_socket(sock, MAX_REPLY)
    channel.send(greeting)
    welcome = channel.receive()
    if welcome.get("op") != "welcome":
        channel.close()
        raise ChannelClosed("The session refused the connection.")
    sock.settimeout(None)
    return channel, welcome


class SessionLink:
    def __init__(
        self,
        address: dict[str, Any],
        pid: int | None,
        greeting: dict[str, Any],
        watch: Channel,
        welcome: dict[str, Any],
    ) -> None:
        self._address, self._pid, self._greeting = address, pid, greeting
        self.tools: list[dict[str, Any]] = list(welcome.get("tools") or [])
        self.info: dict[str, Any] = dict(welcome.get("info") or {})
        self._ids = itertools.count(1)
        self._aidle: list[Any] = []  # idle connections on the face's event loop, (reader, writer) pairs
        self._at_once: Any = None  # an asyncio.Semaphore of CALLS_AT_ONCE, made on the face's loop
        self._ended = threading.Event()
        self._watch = watch
        self._said = threading.Lock()  # one word at a time on the watch connection
        threading.Thread(target=self._watch_until_closed, name="pyaichat-mcp-watch", daemon=True).start()

    @classmethod
    def connect(
        cls, address: dict[str, Any], token: str, *, face: str, pid: int | None = None
    ) -> SessionLink:
        """The link to the endpoint at ``address`` (``{"unix": path}``), whose listening process must be
        ``pid`` when given; ``Unproven`` or ``ChannelClosed`` (one sentence) otherwise."""
        if "unix" not in address:
            raise Unproven("it names a TCP endpoint; only a Unix socket can be proven to be the session's")
        # the same face id on every connection of this link: one face to the session
        greeting = hello(token, face=face, face_id=os.urandom(8).hex())
        watch, welcome = _open(address, pid, greeting)
        return cls(address, pid, greeting, watch, welcome)

    @property
    def closed(self) -> bool:
        return self._ended.is_set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    async def acall(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        """``call`` from a face's event loop, on connections of the loop's own: no worker thread is woken to
        make the call and none to hand its answer back (each wake-up is a scheduling delay on a busy machine).
        Calls at once use connections at once, as ``request`` does."""
        import asyncio  # the faces' event loop: only in their processes

        if self._ended.is_set():
            raise ChannelClosed(GONE)
        if name == PROPOSE:  # it waits for the person, bounded by the session: not one of the face's calls
            return await self._acall(key, client, transport, name, args)
        if self._at_once is None:
            self._at_once = asyncio.Semaphore(CALLS_AT_ONCE)
        async with self._at_once:  # a call beyond them waits here for one of them to end
            return await self._acall(key, client, transport, name, args)

    async def _acall(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        import asyncio  # the faces' event loop: only in their processes

        rid = next(self._ids)
        request = {"id": rid, "op": "call", "key": key, "client": client, "transport": transport}
        line = encode({**request, "name": name, "args": args})
        writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = self._aidle.pop() if self._aidle else await self._aopen()
            writer.write(line)
            await writer.drain()
            reply = decode(await reader.readuntil(b"\n"), MAX_REPLY)
        except Unproven:
            raise
        except (OSError, ChannelClosed, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            if writer is not None:
                writer.close()
            raise ChannelClosed(GONE) from None
        except BaseException:  # the call was cancelled (its client cancelled it, or went away): the session
            if writer is not None:  # sees its connection close, and withdraws what waits for the person
                writer.close()
            raise
        if reply.get("id") != rid or not isinstance(reply.get("result"), dict):
            writer.close()
            raise ChannelClosed("The session answered out of turn.")
        if len(self._aidle) < IDLE_KEPT and not self._ended.is_set():
            self._aidle.append((reader, writer))
        else:
            writer.close()
        return reply["result"]

    async def _aopen(self) -> tuple[Any, Any]:
        """A new connection for ``acall``: opened, proven and greeted, as ``_open`` does."""
        import asyncio  # the faces' event loop: only in their processes

        sock = await self._aconnect()
        # a line may be MAX_REPLY bytes and its newline (``decode`` refuses a longer one)
        reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_REPLY + 1)
        try:
            prove(writer.get_extra_info("socket"), self._pid)
            writer.write(encode(self._greeting))
            await writer.drain()
            welcome = decode(await reader.readuntil(b"\n"), MAX_REPLY)
        except BaseException:
            writer.close()
            raise
        if welcome.get("op") != "welcome":
            writer.close()
            raise ChannelClosed("The session refused the connection.")
        return reader, writer

    async def _aconnect(self) -> socket.socket:
        """A socket connected to the endpoint. A full listener's backlog answers a non-blocking connect with
        ``EAGAIN``: it is tried again, a little later each time, up to ``CONNECT_TIMEOUT`` (asyncio's own
        connect took that for "in progress" and handed back a socket that was never connected, whose peer
        check then read as another user's)."""
        import asyncio  # the faces' event loop: only in their processes

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONNECT_TIMEOUT
        pause = 0.002
        try:
            while True:
                try:
                    with socket_path(str(self._address["unix"])) as where:
                        sock.connect(where)
                    return sock
                except BlockingIOError:  # every connection busy and the backlog full: wait for one to end
                    if loop.time() > deadline:
                        raise ChannelClosed(
                            "The session's endpoint is too busy to take a connection."
                        ) from None
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 0.05)
        except BaseException:
            sock.close()
            raise

    def refused(self, key: str | None, count: int) -> None:
        """Tell the session that ``count`` requests of the client ``key`` (``None``: not known) came without
        the token after it was served (``guard``). Said on the watch connection, whose answer the watch reads
        and drops: nothing waits."""
        with self._said:
            try:
                self._watch.send({"id": 0, "op": "refused", "key": key, "count": count})
            except (ChannelClosed, OSError):
                pass

    def close(self) -> None:
        self._ended.set()
        self._watch.close()

    def _watch_until_closed(self) -> None:
        try:
            while True:
                self._watch.receive()  # the session never writes here: only its end arrives
        except ChannelClosed:
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
        except ChannelClosed as exc:
            return failure(f"The session stopped serving: {exc}")
