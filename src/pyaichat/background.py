"""One asyncio event loop in a daemon thread, behind plain calls from any other thread.

The front ends and the assistant are synchronous; the work that waits on the network is not. The
suggestion engine (``agent.suggest``) and the MCP client manager (``mcptools.manager``) each run such a loop
for the whole session, started on first need and never at start-up, and hand it work with ``call_soon`` (a
callback, never waiting), ``submit`` (a coroutine, a ``concurrent.futures.Future`` back) or ``run`` (a
coroutine, waited for, bounded; Ctrl-C cancels it on the loop).

Why not anyio's blocking portal, which the MCP SDK installs (``benchmarks/background_loop.py``, a quiet
machine): a portal costs the REPL ~20 ms to import with the first suggestion (this module ~1 ms, asyncio
being loaded already), a key that hands the loop a callback pays ~87 µs with it against ~4 µs here, and a
blocking call ~124 µs against ~53 µs; and the engine's timers and cancels are asyncio's own anyway.

Nothing from the loop reaches the screen: what asyncio would print (a connection dropped unclosed, a task's
error nobody read) is counted in ``complaints`` instead, since the prompt is drawn on the same terminal.
Standard library only.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


_loops: weakref.WeakSet[BackgroundLoop] = weakref.WeakSet()


def forget_after_fork() -> list[asyncio.AbstractEventLoop]:
    """In a process forked from another (a checkpoint resumed): every loop's thread stayed in the process
    that was forked, and its epoll instance and wake-up socket are shared with it — closing the loop here
    would unregister that process's descriptors. Each loop starts afresh on its next call; the old ones are
    returned for the caller to keep (never finalized here), and no longer closed at exit."""
    kept = []
    for background in list(_loops):
        loop, background._loop, background._thread = background._loop, None, None
        background._lock = threading.Lock()
        with contextlib.suppress(Exception):
            atexit.unregister(background.close)
        if loop is not None:
            kept.append(loop)
    return kept


class BackgroundLoop:
    """An event loop in a daemon thread named ``name``, started by the first call that needs it."""

    def __init__(self, name: str, *, setup: Callable[[], None] | None = None) -> None:
        self.name = name
        self._setup = setup  # run on the loop's thread before it runs anything else
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.complaints = 0  # what asyncio would have printed (kept quiet)
        _loops.add(self)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The running loop, ``None`` before the first call and after ``close``."""
        return self._loop

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def start(self) -> asyncio.AbstractEventLoop:
        """The loop, started now if it is not running (again, after ``close``)."""
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._loop is not None:
                return self._loop
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(self._complaint)
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                if self._setup is not None:
                    with contextlib.suppress(Exception):
                        self._setup()
                ready.set()
                try:
                    loop.run_forever()
                finally:
                    _finish(loop)

            self._thread = threading.Thread(target=run, name=self.name, daemon=True)
            self._thread.start()
            ready.wait(5)
            self._loop = loop
            atexit.register(self.close)  # an owner that never closes it still leaves nothing running
            return loop

    def call_soon(self, func: Callable[..., Any], *args: Any) -> None:
        """Run ``func(*args)`` on the loop soon; never waits (a key's thread may call it)."""
        with contextlib.suppress(RuntimeError):  # closed meanwhile: nothing runs there any more
            self.start().call_soon_threadsafe(func, *args)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the loop; its future (``cancel()`` cancels the task there)."""
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.start())
        except RuntimeError:  # the loop closed meanwhile: the coroutine will never run
            coro.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result; ``TimeoutError`` after ``timeout`` seconds. The
        wait is polled, so Ctrl-C ends it at once; the task is cancelled on the loop whenever this stops
        waiting for it (a timeout, Ctrl-C)."""
        future = self.submit(coro)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if left <= 0:
                    raise TimeoutError(f"no answer within {timeout:g} s")
                try:
                    return future.result(left)
                except concurrent.futures.TimeoutError:
                    continue
        except BaseException:
            future.cancel()
            raise

    def close(self, timeout: float = 2.0, *, before: Callable[[], None] | None = None) -> None:
        """Stop the loop and wait (bounded) for its thread; ``before`` runs on the loop first."""
        with self._lock:
            loop, self._loop = self._loop, None
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            if before is not None:
                loop.call_soon_threadsafe(before)
            loop.call_soon_threadsafe(loop.stop)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _complaint(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.complaints += 1


def _finish(loop: asyncio.AbstractEventLoop) -> None:
    """The loop stopped: cancel what is still pending and let it unwind (briefly), as ``asyncio.run`` does —
    a task that never ran a step would otherwise leave a coroutine never awaited — then close the loop."""
    with contextlib.suppress(Exception):
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
    with contextlib.suppress(Exception):
        loop.close()
