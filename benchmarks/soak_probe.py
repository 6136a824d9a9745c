"""Run ``python -m pyaichat`` with a probe that ``soak.py`` can ask what the process holds.

Started as ``python benchmarks/soak_probe.py DUMP [pyaichat arguments]``. The session itself is untouched: the
probe lives outside its namespace and only answers two signals, between the session's own work:

- SIGUSR1, the first time: start tracemalloc (late, so the session's first questions run at full speed: only
  what is allocated from then on is traced); each later time: collect garbage (the number of unreachable
  objects found goes to ``DUMP.<k>.gc``), then write a snapshot to ``DUMP.<k>`` (k = 1, 2, …).
- SIGUSR2: write the process's threads to ``DUMP.threads``, each with the function it runs or waits in.

Files are written under another name first, then renamed, so the reader never sees half a file.
"""

from __future__ import annotations

import gc
import os
import runpy
import signal
import sys
import threading
import tracemalloc
from types import FrameType

DUMP = sys.argv.pop(1)
FRAMES = 25  # enough to reach pyaichat's own frames from deep inside litellm
taken = 0


def snapshot(signum: int, frame: object) -> None:
    global taken
    if not tracemalloc.is_tracing():
        tracemalloc.start(FRAMES)
        return
    taken += 1
    path = f"{DUMP}.{taken}"
    # what is kept, not garbage in reference cycles that the next full collection would free
    with open(f"{path}.gc", "w") as f:
        f.write(str(gc.collect()))
    tracemalloc.take_snapshot().dump(path + ".part")
    os.replace(path + ".part", path)


def threads(signum: int, frame: FrameType | None) -> None:
    frames = sys._current_frames()
    lines = []
    for thread in threading.enumerate():
        # this handler runs on the main thread: what it was doing is the frame the signal interrupted
        where = frame if thread is threading.current_thread() else frames.get(thread.ident or -1)
        while where is not None and where.f_back is not None and "threading.py" in where.f_code.co_filename:
            where = where.f_back  # past Condition.wait and the like, to what the thread is for
        place = f"{where.f_code.co_name} ({os.path.basename(where.f_code.co_filename)})" if where else "?"
        lines.append(f"{thread.name}\t{'daemon' if thread.daemon else 'thread'}\t{place}\n")
    path = f"{DUMP}.threads"
    with open(path + ".part", "w") as f:
        f.writelines(lines)
    os.replace(path + ".part", path)


signal.signal(signal.SIGUSR1, snapshot)
signal.signal(signal.SIGUSR2, threads)
sys.argv[0] = "pyaichat"
runpy.run_module("pyaichat", run_name="__main__", alter_sys=True)
