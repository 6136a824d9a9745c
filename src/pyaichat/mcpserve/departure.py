"""Whether the face that made a call has gone while the call waits: its caller cancelled the request
(``notifications/cancelled``, or a Streamable HTTP client closing the request's stream) or went away (a
stdio bridge whose agent quit). The face closes the call's connection then (``link``); this notices it.

Standard library only: it runs in the session's process, beside the endpoint.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


class Departure:
    """Whether the face that made a call has closed its connection while the call waits (for the person):
    its caller cancelled the request or went away. A thread of its own reads the connection's end while
    ``stop`` has not been called (the face sends nothing else on a connection whose call is unanswered), and
    calls what ``on_leave`` was given, once."""

    POLL = 0.25  # seconds between two looks at whether ``stop`` was called

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._gone = False
        self._stopped = threading.Event()
        threading.Thread(target=self._watch, name="pyaichat-mcp-departure", daemon=True).start()

    def on_leave(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the watching thread) when the face leaves; at once if it has already."""
        with self._lock:
            if not self._gone:
                self._callbacks.append(callback)
                return
        callback()

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        import select  # only while a proposal waits

        while not self._stopped.is_set():
            try:
                ready, _, _ = select.select([self._sock], [], [], self.POLL)
                if not ready:
                    continue
                closed = self._sock.recv(1, socket.MSG_PEEK) == b""
            except (OSError, ValueError):  # closed under us: gone too
                closed = True
            if not closed:  # something else arrived: not a departure, and no longer ours to read
                return
            with self._lock:
                if self._stopped.is_set():
                    return
                self._gone = True
                callbacks, self._callbacks = self._callbacks, []
            for callback in callbacks:
                callback()
            return
