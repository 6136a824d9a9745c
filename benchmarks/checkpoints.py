"""Checkpoints: what a copy costs the live session, how fast ``/undo`` is back at the prompt, the start-up.

Parts (all by default; name some to run only those):

- ``fork``: in this process, holding N GB of data written once (resident, so its page tables are real), the
  time the live session spends taking a checkpoint (``checkpoints.copy.take``: the socket pair, the state the
  copy puts back, ``fork``, the copy's link handed to a stand-in supervisor) against a bare ``os.fork()`` of
  the same process, median of ``--runs``, for each size of ``--gb`` (default 1 and 4; 10 needs 10 GB free).
  The copy's own work after ``fork`` is the copy's: it is not timed here, since the session does not wait
  for it.
- ``undo``: ``python -m pyaichat`` in a pty holding N GB (``--undo-gb``, default 0 and 1): the time from
  Enter on ``/undo`` to the next prompt drawn by the session resumed from the copy, median of ``--runs``.
- ``input``: the same pty, the time from Enter on ``x = i`` to the next prompt (the result printed, the next
  copy taken before that prompt), with checkpoints on and off (``PYAICHAT_CHECKPOINTS``), runs paired.
- ``startup``: the first ``>>>`` and the full UI in a pty, this checkout against another (``--base DIR``:
  its ``src``, e.g. a worktree of ``main``), paired and alternating (``startup_interactive.py``'s moments).
- ``hooks``: why the kernel's counters and not an audit hook say what an input wrote: the same work with a
  Python audit hook installed (``sys.addaudithook``: for every event of the process, for ever) and without.

Prints figures and the load average; asserts nothing. Linux (``/proc``)::

    .venv/bin/python benchmarks/checkpoints.py [fork undo input startup hooks] [--gb 1 4 10] [--runs 20]
        [--undo-gb 0 1] [--base ../main]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from startup_env import new_user_env  # noqa: E402

NEW_PY = r"\x1b\[\?2004h.*?>>>[ \x1b]"


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def ms(values: list[float]) -> str:
    low, high = min(values) * 1000, max(values) * 1000
    return f"median {statistics.median(values) * 1000:7.2f} ms (min {low:.2f}, max {high:.2f})"


# -- fork -------------------------------------------------------------------------------------------------
class StandIn:
    """The supervisor's part in a checkpoint: take the copy's link, wait for ``ready``, let it go."""

    def __init__(self) -> None:
        from pyaichat.checkpoints.link import Link

        ours, theirs = Link.pair()
        self.link = Link(theirs)
        self._ours = Link(ours)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import socket

        from pyaichat.checkpoints.link import Link, LinkClosed

        while True:
            try:
                message = self._ours.receive()
            except LinkClosed:
                return
            if message.get("op") == "checkpoint":
                copy = Link(socket.socket(fileno=message["_fds"][0]))
                copy.receive(timeout=60)  # ready
                copy.send({"op": "exit"})
                copy.close()
                os.waitpid(message["pid"], 0)


def bare_fork() -> float:
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    elapsed = time.perf_counter() - started
    os.waitpid(pid, 0)
    return elapsed


def bench_fork(sizes: list[float], runs: int) -> None:
    import numpy as np

    from pyaichat.checkpoints.copy import Taken, take

    stand_in = StandIn()
    print(f"fork: the live session's time to take a checkpoint, against a bare fork(), {runs} runs; {load()}")
    for gb in sizes:
        data = np.ones(int(gb * 2**30) // 8)  # written: resident, page tables and all
        for _ in range(2):
            bare_fork()
        taken, bare = [], []
        for _ in range(runs):
            started = time.perf_counter()
            result = take(stand_in.link, children=(), answer=lambda m: {}, describe=dict)
            taken.append(time.perf_counter() - started)
            assert isinstance(result, Taken)
            bare.append(bare_fork())
            time.sleep(0.05)
        with open("/proc/self/statm") as fh:
            rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30
        print(f"  {gb:g} GB (resident {rss:.1f} GB): checkpoint {ms(taken)}; bare fork {ms(bare)}")
        del data


# -- a session in a pty --------------------------------------------------------------------------------------
def session(tmp: str, *, checkpoints: bool = True, pythonpath: str | None = None):  # type: ignore[no-untyped-def]
    import pexpect

    env = new_user_env(tmp, terminal=True)
    env["PYAICHAT_CHECKPOINTS"] = "auto" if checkpoints else "off"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    child = pexpect.spawn(
        sys.executable, ["-m", "pyaichat"], env=env, dimensions=(30, 100), encoding="utf-8", timeout=120
    )
    child.expect(NEW_PY)
    return child


def enter(child, line: str) -> float:  # type: ignore[no-untyped-def]
    """Enter ``line`` and wait for the next prompt; seconds from Enter."""
    child.send(line)
    time.sleep(0.05)
    started = time.perf_counter()
    child.send("\r")
    child.expect(NEW_PY)
    return time.perf_counter() - started


def bench_undo(sizes: list[float], runs: int) -> None:
    print(f"undo: from Enter on /undo to the resumed session's prompt, {runs} runs; {load()}")
    for gb in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            child = session(tmp)
            enter(child, f"import numpy as np; data = np.ones({int(gb * 2**30) // 8})")
            times = []
            for i in range(runs):
                enter(child, f"x = {i}")
                time.sleep(0.5)  # the copy before that input is ready
                times.append(enter(child, "/undo"))
            child.sendcontrol("d")
            child.expect(__import__("pexpect").EOF)
        print(f"  holding {gb:g} GB: {ms(times)}")


def bench_input(runs: int) -> None:
    print(f"input: from Enter on `x = i` to the next prompt, checkpoints on and off, {runs} pairs; {load()}")
    with tempfile.TemporaryDirectory() as on_dir, tempfile.TemporaryDirectory() as off_dir:
        on, off = session(on_dir), session(off_dir, checkpoints=False)
        for child in (on, off):
            enter(child, "import numpy as np; data = np.ones(2**27)")  # 1 GB
        with_copies, without = [], []
        for i in range(runs):
            first, second = (on, off) if i % 2 == 0 else (off, on)
            a, b = enter(first, f"x = {i}"), enter(second, f"x = {i}")
            with_copies.append(a if first is on else b)
            without.append(b if first is on else a)
        ratios = [a / b for a, b in zip(with_copies, without, strict=True)]
        print(f"  holding 1 GB, on:  {ms(with_copies)}")
        print(f"  holding 1 GB, off: {ms(without)}")
        print(f"  on/off per pair: median {statistics.median(ratios):.2f}x")
        for child in (on, off):
            child.close(force=True)


def bench_startup(base: Path | None, runs: int) -> None:
    import pexpect

    if base is None:
        print("startup: give --base DIR (another checkout, e.g. main's) to pair against")
        return
    print(f"startup: first >>> and full UI in a pty, this checkout against {base}, {runs} pairs; {load()}")
    ours_src, theirs_src = str(ROOT / "src"), str(base.resolve() / "src")

    def once(src: str) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            env = new_user_env(tmp, terminal=True)
            env["PYTHONPATH"] = src
            started = time.perf_counter()
            child = pexpect.spawn(
                sys.executable,
                ["-m", "pyaichat"],
                env=env,
                dimensions=(30, 100),
                encoding="utf-8",
                timeout=60,
            )
            child.expect(">>> ")
            first = time.perf_counter() - started
            child.expect(NEW_PY)
            full = time.perf_counter() - started
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
            return first, full

    for src in (ours_src, theirs_src):
        once(src)
    ours, theirs = [], []
    for i in range(runs):
        if i % 2 == 0:
            ours.append(once(ours_src))
            theirs.append(once(theirs_src))
        else:
            theirs.append(once(theirs_src))
            ours.append(once(ours_src))
    for k, name in ((0, "first >>>"), (1, "full UI")):
        a, b = [o[k] for o in ours], [t[k] for t in theirs]
        ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
        print(f"  {name:<10} this {ms(a)}; base {ms(b)}; per pair {ratio:.3f}x")


def bench_hooks(runs: int) -> None:
    code = r"""
import copy, sys, time, timeit
data = [{"a": [i, i + 1], "b": {"c": i}} for i in range(50_000)]
def measure():
    deep = min(timeit.repeat(lambda: copy.deepcopy(data), number=1, repeat=%d))
    ids = min(timeit.repeat("for x in r: id(x)", setup="r = range(1_000_000)", number=1, repeat=%d))
    return deep, ids
if sys.argv[1] == "hook":
    sys.addaudithook(lambda event, args: None)
print(*measure())
""".replace("%d", str(runs))
    print(f"hooks: the same work with a do-nothing audit hook and without, best of {runs}; {load()}")
    found = {}
    for mode in ("plain", "hook"):
        out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True)
        found[mode] = [float(v) for v in out.stdout.split()]
    for i, name in enumerate(("copy.deepcopy of 50k dicts", "1M id() calls")):
        plain, hook = found["plain"][i], found["hook"][i]
        print(f"  {name:<28} {plain * 1000:8.1f} ms without, {hook * 1000:8.1f} ms with: {hook / plain:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["fork", "undo", "input", "startup", "hooks"])
    parser.add_argument("--gb", type=float, nargs="+", default=[1.0, 4.0])
    parser.add_argument("--undo-gb", type=float, nargs="+", default=[0.0, 1.0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--base", type=Path)
    opts = parser.parse_args()
    if "fork" in opts.parts:
        bench_fork(opts.gb, opts.runs)
    if "undo" in opts.parts:
        bench_undo(opts.undo_gb, opts.runs)
    if "input" in opts.parts:
        bench_input(opts.runs)
    if "startup" in opts.parts:
        bench_startup(opts.base, opts.runs)
    if "hooks" in opts.parts:
        bench_hooks(max(3, opts.runs // 4))


if __name__ == "__main__":
    main()
