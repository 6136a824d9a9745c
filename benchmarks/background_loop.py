"""The background-loop helper (``pyaichat.background``) against anyio's blocking portal, which the MCP SDK
installs: what each costs the REPL to load, and what handing the loop work costs the thread that does it.

1. **Import** (cumulative ``-X importtime``, median of 7 fresh interpreters, asyncio loaded first as
   prompt_toolkit has loaded it in the REPL): ``anyio.from_thread`` against ``pyaichat.background``.
2. **Handing work over** from another thread, median and p99 of N: a callback without waiting (what a key's
   thread does to wake the suggestion engine), and a coroutine waited for (what a blocking MCP call does).

Prints figures, asserts nothing.

    .venv/bin/python benchmarks/background_loop.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable

N = int(sys.argv[1]) if len(sys.argv) > 1 else 3000


def import_ms(module: str) -> float:
    """Cumulative import time of ``module`` where asyncio is loaded already (prompt_toolkit loads it in the
    REPL before any suggestion)."""
    runs = []
    for _ in range(7):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import asyncio; import {module}"],
            capture_output=True,
            text=True,
        )
        line = [row for row in proc.stderr.splitlines() if row.rstrip().endswith(" " + module)][-1]
        runs.append(int(line.split("|")[1]) / 1000)
    return statistics.median(runs)


def timed(label: str, func: Callable[[], object]) -> None:
    for _ in range(200):
        func()
    samples = []
    for _ in range(N):
        started = time.perf_counter()
        func()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    print(f"  {label:52s} median {statistics.median(samples):7.1f} µs  p99 {samples[int(N * 0.99)]:8.1f} µs")


async def nothing() -> int:
    return 1


def main() -> None:
    print("Import once asyncio is loaded, cumulative (median of 7 fresh interpreters)")
    print(f"  anyio.from_thread        {import_ms('anyio.from_thread'):6.1f} ms")
    print(f"  pyaichat.background      {import_ms('pyaichat.background'):6.1f} ms")

    from pyaichat.background import BackgroundLoop

    print(f"\nHanding work to the loop from another thread ({N} times each)")
    loop = BackgroundLoop("bench")
    done = threading.Event()

    def wake_and_wait() -> None:
        done.clear()
        loop.call_soon(done.set)
        done.wait()

    timed("background: call_soon (no wait)", lambda: loop.call_soon(lambda: None))
    timed("background: call_soon, then wait until it ran", wake_and_wait)
    timed("background: run(coroutine)", lambda: loop.run(nothing()))
    loop.close()

    from anyio.from_thread import start_blocking_portal

    with start_blocking_portal() as portal:
        timed("anyio portal: start_task_soon (no wait)", lambda: portal.start_task_soon(nothing))
        timed("anyio portal: call(coroutine)", lambda: portal.call(nothing))


if __name__ == "__main__":
    main()
