"""``python -m pyaichat`` with a recorder of what its threads other than the prompt's do, for
``benchmarks/suggest.py --probe``: every callback another thread's event loop runs (the suggestion engine's)
and every hand-over to a loop from another thread (the helper's reader), stamped with ``perf_counter`` — on
Linux the monotonic clock, the one the benchmark stamps its keys with. Written as JSON to
``$ECHO_PROBE_OUT`` at exit.

Keys whose echo window holds such work are keys that work could have delayed (by the interpreter's lock,
which the prompt's thread needs to echo a key).
"""

from __future__ import annotations

import asyncio.base_events
import asyncio.events
import atexit
import json
import os
import runpy
import sys
import threading
import time
from typing import Any

EVENTS: list[tuple[str, float, float, str]] = []  # (thread, start, seconds, what)
_run = asyncio.events.Handle._run
_post = asyncio.base_events.BaseEventLoop.call_soon_threadsafe


def _name(callback: Any) -> str:
    return str(getattr(callback, "__qualname__", None) or type(callback).__name__)


def run(self: asyncio.events.Handle) -> None:
    if threading.current_thread() is threading.main_thread():
        return _run(self)
    began = time.perf_counter()
    try:
        return _run(self)
    finally:
        spent = time.perf_counter() - began
        EVENTS.append((threading.current_thread().name, began, spent, _name(self._callback)))


def post(self: Any, callback: Any, *args: Any, context: Any = None) -> Any:
    if threading.current_thread() is not threading.main_thread():
        EVENTS.append((threading.current_thread().name, time.perf_counter(), 0.0, "post " + _name(callback)))
    return _post(self, callback, *args, context=context)


def dump() -> None:
    with open(os.environ["ECHO_PROBE_OUT"], "w") as out:
        json.dump(EVENTS, out)


asyncio.events.Handle._run = run  # type: ignore[method-assign]
asyncio.base_events.BaseEventLoop.call_soon_threadsafe = post  # type: ignore[method-assign]
atexit.register(dump)
sys.argv = ["pyaichat"]
runpy.run_module("pyaichat", run_name="__main__", alter_sys=True)
