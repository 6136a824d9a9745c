"""The link between the supervisor and one process of the session (the live one, a paused copy): ``ipc``'s
JSON lines, with two additions the other links do not need — file descriptors passed alongside a message
(a new copy's end of its own link travels to the supervisor that way), and a binary attachment (what continues
across a jump: the conversation, the history, the journal, as the pickled objects they are).

A pickle runs code when it is loaded, so only the session's own processes ever write one here: every link is
one end of a ``socketpair`` made by a process of the session, whose other end it hands to the supervisor
itself; nothing else can connect to it.

One reader and one writer at a time per end (the supervisor's loop, or the main thread of a session's
process); ``poll`` never waits, ``receive`` waits (bounded when asked). ``ipc`` loads with the first
message, not at start-up (the link is made before the first prompt); so does ``socket`` (~5 ms, more on a
busy machine), for the session's first link, which starts as a bare descriptor (``fds``).
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

LIMIT = 1 << 30  # one message with its attachment: the whole history of a long session fits
_CHUNK = 1 << 20
_MAX_FDS = 8


class LinkClosed(ConnectionError):
    """The other end is gone (or broke the protocol): the link is closed."""


class Link:
    """One end of a link (see the module's docstring). A received message that carried descriptors has them
    as ``message["_fds"]`` (this process owns them); one with an attachment has it as ``message["_blob"]``."""

    def __init__(self, sock: socket.socket | int) -> None:
        """``sock``: a connected socket, or the descriptor of one (made into a socket when first used)."""
        if isinstance(sock, int):
            self._sock: socket.socket | None = None
            self._fd = sock
        else:
            self._sock, self._fd = sock, sock.fileno()
            sock.setblocking(True)
        self._buffer = bytearray()
        self._fds: deque[int] = deque()
        self._ready: deque[dict[str, Any]] = deque()
        self.closed = False

    @classmethod
    def pair(cls) -> tuple[socket.socket, socket.socket]:
        """Two connected ends, not inherited by programs this process runs (``exec``)."""
        import socket

        one, two = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        return one, two

    @staticmethod
    def fds() -> tuple[int, int]:
        """Two connected ends as bare descriptors (``pair`` without importing ``socket``: at start-up)."""
        import _socket

        one, two = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)  # not inherited by ``exec``
        return one.detach(), two.detach()

    @property
    def sock(self) -> socket.socket:
        if self._sock is None:
            import socket

            self._sock = socket.socket(fileno=self._fd)
            self._sock.setblocking(True)
        return self._sock

    def fileno(self) -> int:
        return self._fd

    # -- sending ---------------------------------------------------------------------------------------------
    def send(self, message: dict[str, Any], *, fds: tuple[int, ...] = (), blob: bytes = b"") -> None:
        """Send ``message`` (with ``fds`` and an attachment ``blob``); ``LinkClosed`` when the other end is
        gone. The link stays open for reading: what the other end sent before it ended (the input a crashed
        session was running) is still read, and then its end."""
        import socket

        from ..ipc import encode  # the JSON line every link of pyaichat's uses

        header = dict(message)
        if fds:
            header["fds"] = len(fds)
        if blob:
            header["blob"] = len(blob)
        data = encode(header)
        try:
            if fds:
                sent = socket.send_fds(self.sock, [data], list(fds))
                data = data[sent:]
            if data:
                self.sock.sendall(data)
            if blob:
                self.sock.sendall(blob)
        except OSError as exc:
            raise LinkClosed(str(exc)) from None

    # -- receiving -------------------------------------------------------------------------------------------
    def poll(self) -> list[dict[str, Any]]:
        """The messages that have arrived, without waiting; ``LinkClosed`` once the other end is gone and
        nothing is left to read. The last messages of a process that then ended (a copy registered, the input
        it ran before it crashed) are returned first: ``closed`` says the end came after them."""
        found = []
        while True:
            message = self._parse()
            if message is not None:
                found.append(message)
                continue
            try:
                if not self._readable(0):
                    return found
                self._fill()
            except LinkClosed:
                if found:
                    return found
                raise

    def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message; ``TimeoutError`` after ``timeout`` seconds, ``LinkClosed`` at the end."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._parse()
            if message is not None:
                return message
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("no message")
            if left is not None and not self._readable(left):
                continue
            self._fill()

    def _readable(self, timeout: float) -> bool:
        if self.closed:
            raise LinkClosed("closed")
        try:
            return bool(select.select([self._fd], [], [], timeout)[0])
        except (OSError, ValueError) as exc:
            self.close()
            raise LinkClosed(str(exc)) from None

    def _fill(self) -> None:
        """One read (it waits until something arrives): the bytes into the buffer, descriptors queued."""
        import socket

        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, _CHUNK, _MAX_FDS)
        except OSError as exc:
            self.close()
            raise LinkClosed(str(exc)) from None
        self._fds.extend(fds)
        if not data:
            self.close()
            raise LinkClosed("end of stream")
        self._buffer += data
        if len(self._buffer) > LIMIT + _CHUNK:
            self.close()
            raise LinkClosed("message too long")

    def _parse(self) -> dict[str, Any] | None:
        """The first whole message in the buffer (its attachment included), or ``None``."""
        end = self._buffer.find(b"\n")
        if end < 0:
            return None
        from ..ipc import ChannelClosed, decode  # the JSON line every link of pyaichat's uses

        try:
            message = decode(bytes(self._buffer[: end + 1]), LIMIT)
        except ChannelClosed as exc:
            self.close()
            raise LinkClosed(str(exc)) from None
        size = message.get("blob")
        start = end + 1
        if isinstance(size, int) and size > 0:
            if len(self._buffer) < start + size:
                return None
            message["_blob"] = bytes(self._buffer[start : start + size])
            start += size
        count = message.get("fds")
        if isinstance(count, int) and count > 0:
            if len(self._fds) < count:  # they arrive with the message's first bytes, never after them
                return None
            message["_fds"] = [self._fds.popleft() for _ in range(count)]
        del self._buffer[:start]
        return message

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self._sock is not None:
                self._sock.close()
            else:
                os.close(self._fd)
        except OSError:
            pass
        while self._fds:
            try:
                os.close(self._fds.popleft())
            except OSError:
                pass
