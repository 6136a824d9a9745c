"""A started MCP server's standard error: read into a small tail, never onto the person's terminal.

The server gets the write end of a pipe; this side reads it on the manager's loop, keeping the last
``STDERR_TAIL`` bytes (its last line goes into the sentence that explains the server's death) and counting the
rest, however much it writes. The write end is ours to close once the server holds its own copy, so the end
of the pipe means the server and every process it started have exited. (Windows' event loop cannot read an
anonymous pipe: there the stderr goes nowhere.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from collections.abc import Callable
from typing import IO, Any

STDERR_TAIL = 4096  # bytes of a server's standard error kept for the sentence that explains its death


class Tail(asyncio.Protocol):
    """Reads a server's standard error, keeping the last ``STDERR_TAIL`` bytes and counting the rest."""

    def __init__(self, on_end: Callable[[], None]) -> None:
        self.kept: deque[bytes] = deque()
        self.size = 0
        self.total = 0
        self.ended = asyncio.Event()
        self._on_end = on_end
        self._writer: IO[str] | None = None  # our copy of the pipe's write end, until the server has its own
        self.piped = False  # the server was started with the pipe (else its stderr goes nowhere)

    def data_received(self, data: bytes) -> None:
        self.total += len(data)
        self.kept.append(data)
        self.size += len(data)
        while self.size - len(self.kept[0]) >= STDERR_TAIL:
            self.size -= len(self.kept.popleft())

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()
        self._on_end()

    def last_line(self) -> str:
        text = b"".join(self.kept)[-STDERR_TAIL:].decode("utf-8", "replace")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][:200] if lines else ""

    async def pipe(self, stack: contextlib.AsyncExitStack) -> IO[Any]:
        """The file to start the server with as its stderr, read here until ``stack`` closes."""
        if sys.platform == "win32":
            return stack.enter_context(open(os.devnull, "w"))
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        reader = os.fdopen(read_fd, "rb", buffering=0)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: self, reader)
        stack.callback(transport.close)
        self.piped = True
        self._writer = os.fdopen(write_fd, "w")
        stack.callback(self.release)
        return self._writer

    def release(self) -> None:
        """Close our copy of the write end (the server holds its own now)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()
