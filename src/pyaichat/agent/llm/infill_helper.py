"""The suggestion model's helper process: litellm's calls for ghost-text suggestions, away from the prompt.

Why a process of its own (the rule in ``ipc``: work made while the person types runs apart; measured in the
REPL, ``benchmarks/suggest.py``): litellm spends 7–12 ms of Python
per request (building the call, its logging payloads, its cost lookup) and more unwinding an aborted one, all
of it holding the interpreter's lock the prompt needs for the next key; its import is 4–5 s of Python in the
background; and its ~400,000 objects make every full collection of the garbage collector take ~0.4 s instead
of ~0.07 s. Here none of that touches the REPL: the REPL sends a request (already masked) down a pipe and
reads the answer back.

Started by ``agent.suggest.helper.ModelHelper`` with the first suggestion, never at start-up. It lives as long
as pyaichat (the end of its input, or the parent's death on Linux, ends it), leaves after ``--idle`` seconds
without a request, restarts itself after an answer once it holds more than ``--rss-mb`` megabytes, and
cannot grow past ``ADDRESS_SPACE_MB`` of address space.

The protocol is ``ipc``'s bounded JSON lines. In: ``{"op": "ask", "id", "request", "timeout"}``, ``{"op":
"cancel", "id"}`` (cancelling the task aborts the HTTP request) and ``{"op": "check", "id", "model"}``
(answered ``{"id", "problem"}``: why litellm cannot place the model, or null). Out: ``{"ready": pid}``, then
``{"id", "answer"}``, ``{"id", "error"}`` (the ``LLMError`` ``errors.map_error`` made, by class and
sentence); nothing for a cancelled request (the REPL has forgotten it: a reply would only wake it while the
user types); ``{"fatal": sentence}`` when it cannot start; ``{"leaving": reason}`` when it goes on its own.
The protocol has its own copy of stdout: file descriptor 1 itself goes to /dev/null, so nothing a
library prints can break a line (and nothing reaches the terminal: stderr is /dev/null too).

    python -m pyaichat.agent.llm.infill_helper --parent PID [--rss-mb N] [--idle SECONDS]
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
import time
from typing import Any

from ...ipc import Channel, ChannelClosed, die_with_parent, private_stdout, resident_mb

ADDRESS_SPACE_MB = 4096  # hard bound of the helper's address space (litellm loaded: ~400 MB, RSS ~260 MB)
RSS_MB = 600  # after an answer, a helper holding more than this leaves (the next suggestion starts another)
IDLE = 900.0  # seconds without a request before it leaves
MAX_LINE = 1 << 20  # a request or an answer (``agent.suggest.helper.MAX_LINE``)


def _bound_memory() -> None:
    """A hard bound: past it an allocation fails (a ``MemoryError``, an error reply) instead of growing."""
    try:
        import resource  # POSIX only; this is the helper process
    except ImportError:  # not POSIX
        return
    limit = ADDRESS_SPACE_MB * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


def rss_mb() -> float:
    """Resident memory now (Linux), else the peak."""
    now = resident_mb()
    if now is not None:
        return now
    import resource  # POSIX only; this is the helper process

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


class Helper:
    """Serves one stream of requests on this process's event loop, each in its own task."""

    def __init__(self, lib: Any, channel: Channel, *, rss_limit: float, idle: float) -> None:
        self.lib, self.channel, self.rss_limit, self.idle = lib, channel, rss_limit, idle
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.leaving: str | None = None

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: None)  # nobody to tell; nothing may be printed
        inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        def read() -> None:  # a thread: a blocking read of a pipe, the same on every platform
            try:
                while True:
                    loop.call_soon_threadsafe(inbox.put_nowait, self.channel.receive())
            except ChannelClosed:  # the REPL closed the pipe, or died, or sent a broken line
                loop.call_soon_threadsafe(inbox.put_nowait, None)

        threading.Thread(target=read, name="pyaichat-helper-input", daemon=True).start()
        while self.leaving is None:
            try:
                line = await asyncio.wait_for(inbox.get(), None if self.tasks else self.idle)
            except asyncio.TimeoutError:
                self.leave(f"idle for {self.idle:.0f} s")
                break
            if line is None:
                break
            self.handle(line)
        for task in self.tasks.values():
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        try:
            await asyncio.wait_for(self.lib.close_litellm_async_clients(), 2.0)
        except Exception:
            pass

    def handle(self, message: dict[str, Any]) -> None:
        try:
            op, rid = message.get("op"), int(message.get("id", 0))
        except (ValueError, TypeError):
            return  # not a request: nothing to answer
        if op == "ask":
            self.tasks[rid] = asyncio.get_running_loop().create_task(self.answer(rid, message))
        elif op == "check":  # can litellm place this model string? (``/suggest MODEL``, before it is used)
            from .errors import model_problem

            self._send({"id": rid, "problem": model_problem(self.lib, str(message.get("model")))})
        elif op == "cancel" and rid in self.tasks:
            self.tasks[rid].cancel()

    async def answer(self, rid: int, message: dict[str, Any]) -> None:
        # with the first request (litellm behind it)
        from .infill import CodeRequest, complete_code, error_to_wire

        try:
            request = CodeRequest.from_wire(message["request"])
            answer = await complete_code(self.lib, request, timeout=float(message.get("timeout", 30.0)))
            self._send({"id": rid, "answer": answer.to_wire()})
        except asyncio.CancelledError:
            pass  # no reply: the REPL stopped waiting when it sent the cancel
        except Exception as exc:  # an LLMError from map_error, or a bug: the REPL keeps it for /trace
            self._send({"id": rid, "error": error_to_wire(exc)})
        finally:
            self.tasks.pop(rid, None)
            held = rss_mb()
            if held > self.rss_limit:
                self.leave(f"holding {held:.0f} MB")

    def leave(self, reason: str) -> None:
        """Go (after the answer just written): the REPL starts another helper with the next suggestion."""
        if self.leaving is None:
            self.leaving = reason
            self._send({"leaving": reason})

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.channel.send(message)
        except ChannelClosed:  # the REPL is gone: the end of input ends this process too
            pass


def main(argv: list[str] | None = None) -> int:
    args = _options(sys.argv[1:] if argv is None else argv)
    channel = private_stdout(MAX_LINE)
    try:
        die_with_parent(int(args.get("--parent", 0)))
        _bound_memory()
        started = time.monotonic()
        from .loader import import_litellm, prime  # litellm: in this process only, after its hello

        lib = import_litellm()
        prime(lib)
        gc.freeze()  # litellm's objects live as long as the process: no collection needs to walk them again
    except SystemExit:
        raise
    except BaseException as exc:
        channel.send({"fatal": f"{type(exc).__name__}: {exc}"})
        return 1
    channel.send({"ready": os.getpid(), "load_s": round(time.monotonic() - started, 2)})
    helper = Helper(
        lib,
        channel,
        rss_limit=float(args.get("--rss-mb", RSS_MB)),
        idle=float(args.get("--idle", IDLE)),
    )
    asyncio.run(helper.serve())
    return 0


def _options(argv: list[str]) -> dict[str, str]:
    """``--name value`` pairs (argparse is more than three numbers need)."""
    return {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1, 2) if argv[i].startswith("--")}


if __name__ == "__main__":
    sys.exit(main())
