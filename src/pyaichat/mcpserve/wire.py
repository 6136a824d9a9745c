"""The private link between the session and its MCP faces: one JSON object per line over a local socket.

A face (the HTTP server process, or ``pyaichat mcp`` started by a client) connects to the session's endpoint,
says ``hello`` with the token from the discovery record, and then sends requests ``{"id": n, "op": …}``; each
answer carries the same ``id``, so one connection carries many calls at once (a proposal may wait minutes
while other calls go on). Lines are bounded both ways, so neither side can be made to buffer without end.

Standard library only: the session's process loads it when serving starts.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

PROTOCOL = 1
MAX_REQUEST = 1 << 20  # a request line (a tool call's arguments): 1 MiB
MAX_REPLY = 8 << 20  # an answer line: text is bounded by max_output_chars, but figures travel as PNGs


class LinkClosed(Exception):
    """The other side went away, or broke the protocol (the connection is closed)."""


class Channel:
    """One connected socket: ``send`` from any thread, ``receive`` from one reader."""

    def __init__(self, sock: socket.socket, limit: int) -> None:
        self.sock = sock
        self._limit = limit
        self._reader = sock.makefile("rb")
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str).encode() + b"\n"
        with self._lock:
            if self.closed:
                raise LinkClosed("closed")
            try:
                self.sock.sendall(data)
            except OSError as exc:
                self.close()
                raise LinkClosed(str(exc)) from None

    def receive(self) -> dict[str, Any]:
        """The next message; ``LinkClosed`` at the end, on a line over the limit, or on one that is not a
        JSON object."""
        try:
            line = self._reader.readline(self._limit + 1)
        except (OSError, ValueError) as exc:
            self.close()
            raise LinkClosed(str(exc)) from None
        if not line:
            self.close()
            raise LinkClosed("end of stream")
        if len(line) > self._limit or not line.endswith(b"\n"):
            self.close()
            raise LinkClosed("message too long")
        try:
            message = json.loads(line)
        except ValueError:
            self.close()
            raise LinkClosed("not JSON") from None
        if not isinstance(message, dict):
            self.close()
            raise LinkClosed("not a JSON object")
        return message

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for action in (lambda: self.sock.shutdown(socket.SHUT_RDWR), self.sock.close, self._reader.close):
            try:
                action()
            except OSError:
                pass
