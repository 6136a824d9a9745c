"""The suggestion model's calls, made by a helper process (``agent.llm.infill_helper``) and awaited here.

The REPL never imports litellm for a suggestion: the request — built and masked in the REPL, so nothing of
the session's leaves it unmasked — goes down a pipe as one JSON line, and the answer comes back as one. What
this costs the REPL per request is a ``json.dumps``, a write, and a thread blocked in a read (which holds no
lock the prompt needs); measured in ``benchmarks/suggest.py``.

- **Started on first need**: with the first request, never at start-up, and again with the next request after
  it stopped (killed, out of memory, idle).
- **Cancelled on the next key**: the front end's thread writes the cancel to the helper once the key's echo
  is on the screen (``abort``: one short line, never waiting), and the helper cancels its task and so aborts
  the HTTP request; no other thread of the REPL wakes for it, and the helper sends nothing back.
- **Dies with pyaichat**: its input is this end of a pipe (closed at exit or death) and, on Linux, the
  kernel ends it when pyaichat dies; it runs in a session of its own, so a Ctrl-C for the user's code never
  reaches it.
- **Bounded**: in address space and resident memory (the helper's own limits), in start-up time here.
- **Quiet**: its stderr is /dev/null; whatever it has to say arrives as an ``LLMError`` for ``/trace``. A
  helper that cannot start twice in a row stops suggestions with the reason (``LLMSetupError``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import LLMError, LLMHelperStopped, LLMSetupError
from ...ipc import Channel, ChannelClosed, Child
from ..llm.infill import CodeAnswer, CodeRequest, error_from_wire

MODULE = "pyaichat.agent.llm.infill_helper"
STARTUP = 120.0  # seconds a helper may take to be ready (litellm's import on a busy machine)
START_FAILURES = 2  # failed starts in a row before suggestions stop with the reason
MAX_LINE = 1 << 20  # a request (the prompt, masked and bounded) or an answer, either way


class _Process:
    """One running helper: the child, the thread reading its answers, and the requests waiting for them."""

    def __init__(self, child: Child, loop: asyncio.AbstractEventLoop) -> None:
        self.child = child
        self.loop = loop
        self.ready: asyncio.Future[dict[str, Any]] = loop.create_future()
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.told: set[int] = set()  # requests the helper was told to abort by ``abort``
        self.gone = False
        self.said: str | None = None  # why it is going, in its own words (a fatal error, leaving)
        threading.Thread(target=self._read, name="pyaichat-suggest-helper", daemon=True).start()

    @property
    def channel(self) -> Channel:
        return self.child.channel

    def _read(self) -> None:
        """The helper's answers, handed to the engine's loop (a thread blocked in a read holds no lock)."""
        try:
            while self._post(self._arrived, self.channel.receive()):
                pass
        except ChannelClosed:
            pass
        if self.child.wait(5.0) is None:  # it closed its output and lingers: end it
            self.child.kill()
        self._post(self._ended, None)

    def _post(self, func: Any, arg: Any) -> bool:
        try:
            self.loop.call_soon_threadsafe(func, arg)
            return True
        except RuntimeError:  # the engine's loop is closed: pyaichat is going away
            return False

    def _arrived(self, message: dict[str, Any]) -> None:
        if "ready" in message:
            if not self.ready.done():
                self.ready.set_result(message)
        elif "fatal" in message or "leaving" in message:
            self.said = str(message.get("fatal") or message.get("leaving"))
        elif "id" in message:
            future = self.waiting.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)

    def _ended(self, _: None) -> None:
        self.gone = True
        how = self.said or self.child.exit_text()
        if not self.ready.done():
            self.ready.set_exception(LLMHelperStopped(how))
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(
                    LLMHelperStopped(
                        f"The suggestion helper process stopped ({how}) before it answered; the next "
                        "suggestion starts another."
                    )
                )


class ModelHelper:
    """The suggestion engine's ``ask``: ``await helper(request, timeout)`` on the engine's loop.
    ``command`` replaces how the helper is started (tests put a tap in front of it)."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        rss_mb: float | None = None,
        idle: float | None = None,
        startup: float = STARTUP,
    ) -> None:
        self.command = list(command) if command is not None else [sys.executable, "-m", MODULE]
        self.rss_mb, self.idle, self.startup = rss_mb, idle, startup
        self.starts = 0  # helpers started so far
        self._process: _Process | None = None
        self._failed_starts = 0
        self._ids = itertools.count(1)

    @property
    def pid(self) -> int | None:
        """The running helper's process id (``None``: none is running)."""
        process = self._process
        return process.child.pid if process is not None and not process.gone else None

    async def start(self) -> None:
        """A helper that is ready (litellm loaded there): the running one, or a new one. The first
        suggestion waits here, in the engine's thread; the prompt never does."""
        process = self._process
        if process is None or process.gone or process.child.poll() is not None:
            process = self._spawn()
        try:
            await asyncio.wait_for(asyncio.shield(process.ready), self.startup)
        except asyncio.TimeoutError:
            process.child.kill()
            raise self._start_failed(f"not ready within {self.startup:.0f} s") from None
        except LLMHelperStopped as exc:
            raise self._start_failed(process.said or str(exc)) from None
        self._failed_starts = 0

    def _start_failed(self, why: str) -> LLMError:
        """A helper that could not start: try again later, unless it has failed to start before (then the
        reason stops suggestions, and ``/suggest`` shows it)."""
        self._failed_starts += 1
        why = why.rstrip(".")
        if self._failed_starts >= START_FAILURES:
            return LLMSetupError(f"The suggestion helper process cannot start: {why}.")
        return LLMHelperStopped(f"The suggestion helper process could not start ({why}).")

    def _spawn(self) -> _Process:
        args = ["--parent", str(os.getpid())]
        if self.rss_mb is not None:
            args += ["--rss-mb", str(self.rss_mb)]
        if self.idle is not None:
            args += ["--idle", str(self.idle)]
        try:
            child = Child([*self.command, *args], env=_environment(), limit=MAX_LINE)
        except OSError as exc:  # no interpreter to run: it will not work a moment later either
            self._failed_starts = START_FAILURES - 1
            raise self._start_failed(f"{type(exc).__name__}: {exc}") from None
        self.starts += 1
        self._process = _Process(child, asyncio.get_running_loop())
        return self._process

    async def __call__(self, request: CodeRequest, timeout: float) -> CodeAnswer:
        reply = await self._ask(
            {"op": "ask", "request": request.to_wire(), "timeout": timeout},
            "The suggestion helper process stopped before it was asked; the next suggestion starts another.",
        )
        if "answer" in reply:
            return CodeAnswer.from_wire(reply["answer"])
        raise error_from_wire(reply.get("error") or {})

    async def check(self, model: str) -> str | None:
        """Why litellm cannot place ``model`` (the helper's litellm: none loads here), or ``None``."""
        reply = await self._ask(
            {"op": "check", "model": model}, "The suggestion helper process stopped before it was asked."
        )
        problem = reply.get("problem")
        return str(problem) if problem else None

    async def _ask(self, message: dict[str, Any], stopped: str) -> dict[str, Any]:
        """Send ``message`` under a new id and wait for the helper's reply (``stopped``: the sentence when the
        helper is gone). A cancelled wait (the next key) tells the helper to abort that request."""
        await self.start()
        process = self._process
        assert process is not None
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        process.waiting[rid] = future
        try:
            try:
                process.channel.send({"op": message["op"], "id": rid, **message})
            except ChannelClosed:  # the pipe is closed: it has just died
                raise LLMHelperStopped(stopped) from None
            return await future
        except asyncio.CancelledError:  # the helper aborts the HTTP request
            if rid not in process.told:
                try:
                    process.channel.send({"op": "cancel", "id": rid})
                except ChannelClosed:
                    pass
            raise
        finally:
            process.waiting.pop(rid, None)
            process.told.discard(rid)

    def in_flight(self) -> tuple[int, ...]:
        """The requests the helper has been sent and not answered (from any thread)."""
        process = self._process
        if process is None or process.gone:
            return ()
        return tuple(process.waiting)

    def abort(self, asked: tuple[int, ...]) -> bool:
        """Tell the helper to abort the requests ``asked`` (``in_flight`` at the key that made them stale),
        from the front end's thread: one short line each, never waiting, and nothing sent back, so no thread
        of this process wakes for it. False when that cannot be done at once (the pipe busy): then cancel
        the waiting call, which tells the helper itself."""
        process = self._process
        if process is None or process.gone:
            return True  # nothing runs there any more
        for rid in asked:
            if rid not in process.waiting or rid in process.told:
                continue
            if not process.channel.send_now(b'{"op":"cancel","id":%d}\n' % rid):
                return False
            process.told.add(rid)
        return True

    def close(self, timeout: float = 2.0) -> None:
        """Stop the helper (from any thread; waits at most about ``timeout`` seconds): the end of its input
        lets it close its connections and leave; it is killed if it does not in time."""
        process, self._process = self._process, None
        if process is not None and not process.gone:
            process.child.end(timeout)

    def memory_mb(self) -> float | None:
        """The running helper's resident memory (Linux), for ``/suggest``."""
        process = self._process
        return process.child.memory_mb() if process is not None and not process.gone else None

    def describe(self) -> str | None:
        """For ``/suggest``: the helper process, once one has been started."""
        if not self.starts:
            return None
        pid, memory = self.pid, self.memory_mb()
        now = f"pid {pid}" + (f", {memory:.0f} MB" if memory is not None else "") if pid else "not running"
        return f"Model calls run in a helper process ({now}; started {self.starts} time(s))."


def _environment() -> dict[str, str]:
    """The REPL's environment (litellm reads the provider's keys from it, as it would here), with pyaichat
    importable the way it is here, litellm's price list kept local, and glibc's allocator held to two
    arenas (each thread's own would reserve 64 MB of address space)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("MALLOC_ARENA_MAX", "2")
    return env
