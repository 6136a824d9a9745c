"""Soak: one long piped session, question after question, to see whether memory, threads and time stay flat.

One ``python -m pyaichat`` (piped, plain text) against the scripted OpenAI-compatible server on 127.0.0.1:
a 100k-row DataFrame, then N questions, each answered with one tool call (``eval_expr`` on the frame) and an
answer, and a Python input after each one (which also prints the marker this script waits for). Every
``--every`` questions it prints the REPL process's resident memory, threads and open descriptors, and the
time per question over the last interval: the median and the 10th percentile of wall time (the latter is
the least disturbed by other work on a shared machine), and the mean CPU time.

``--kernel``: the same session in a Jupyter kernel (``pyaichat --kernel``); the kernel's own memory is counted
too (the column ``kernel MB``), since the tool calls run there.

``--checkpoints``: the same piped session with checkpoints on (``PYAICHAT_CHECKPOINTS=on``): the process
measured is the live session (the supervisor's child; the supervisor is the process started), and the column
``copies MB`` is what the checkpoints hold that the live session does not (the supervisor's measure), kept
under the budget by letting the oldest go.

``--base DIR``: run another checkout's pyaichat (``DIR/src``, e.g. a worktree of ``main``) with this venv,
for the table before a change. ``--trace A,B``: find what grows: tracemalloc starts in the REPL process (and
the kernel) after question A, a snapshot is taken ten questions later (the objects a question leaves behind
until the next replaces them are in it) and another after question B, and the allocations that grew most
in between are printed, with where they were made. From A on the times are tracemalloc's, not pyaichat's.

Budget, after the warm-up (``--warm`` questions): ≤ 10 MB per 1,000 questions and the late per-question
time ≤ 1.1× the early one. Prints figures; asserts nothing. Linux only (reads ``/proc``).

    .venv/bin/python benchmarks/soak.py [--questions 2000] [--every 100] [--warm 300] [--kernel]
        [--checkpoints] [--base DIR] [--trace A,B]
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from startup_env import new_user_env  # noqa: E402

from fakes.openai_server import ScriptedServer  # noqa: E402

SETUP = (
    "import pandas as pd, numpy as np\n"
    "df = pd.DataFrame({'a': np.arange({rows}), 'b': np.arange({rows}) % 7, 'c': ['x'] * {rows}})\n"
)
QUESTION = "/ask what is the mean of df.a?"
MARK = "@@soak"


def proc_status(pid: int) -> dict[str, str]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def rss_mb(pid: int) -> float:
    return int(proc_status(pid)["VmRSS"].split()[0]) / 1024


def threads(pid: int) -> int:
    return int(proc_status(pid)["Threads"])


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process so far (less disturbed than wall time on a busy machine)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(k) for k in f.read().split()]
    return found


def copies_mb(live: int) -> float:
    """What the checkpoints (the live session's copies, its children) hold that it does not, in MB: the
    supervisor's own measure (``checkpoints.memory``)."""
    from pyaichat.checkpoints import memory

    copies = [u for u in (memory.usage(pid) for pid in children(live)) if u is not None]
    return memory.held_by_copies(memory.usage(live), copies) / 2**20


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the kernel, and whatever it started)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in os.listdir(f"/proc/{parent}/task"):
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


class Repl:
    """The piped pyaichat process: write an input, read lines until the marker comes back."""

    def __init__(self, command: list[str], env: dict[str, str], stderr: Path) -> None:
        self.stderr = stderr
        self.proc = subprocess.Popen(
            [sys.executable, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr.open("w"),
            env=env,
            text=True,
            bufsize=1,
        )
        self.lines: queue.SimpleQueue[str] = queue.SimpleQueue()  # read by a thread: no lost buffered line
        threading.Thread(target=self._read, daemon=True).start()
        self.seen: list[str] = []  # lines other than markers, for the report of anything unexpected

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text if text.endswith("\n") else text + "\n")
        self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def wait_for(self, mark: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                raise RuntimeError("pyaichat exited:\n" + "".join(self.seen[-20:]) + self.stderr.read_text())
            if line.strip() == mark:
                return
            self.seen.append(line)
        raise RuntimeError(
            f"no {mark!r} after {timeout:g} s:\n" + "".join(self.seen[-20:]) + self.stderr.read_text()
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100, help="print a row every this many questions")
    # the conversation memory fills up to context_tokens in the first ~250 questions of this session
    parser.add_argument("--warm", type=int, default=300, help="questions of warm-up before the budget")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--kernel", action="store_true", help="run the session in a Jupyter kernel")
    parser.add_argument("--checkpoints", action="store_true", help="with checkpoints on (the live session)")
    parser.add_argument("--base", type=Path, help="run the pyaichat of this checkout (its src/) instead")
    parser.add_argument(
        "--trace", type=lambda v: tuple(int(q) for q in v.split(",")), help="A,B: what grew from A to B"
    )
    opts = parser.parse_args()
    if opts.checkpoints and (opts.kernel or opts.trace):
        parser.error("--checkpoints measures the local session, without --kernel or --trace")
    if opts.trace and (len(opts.trace) != 2 or not 0 < opts.trace[0] < opts.trace[1] - 10 <= opts.questions):
        parser.error("--trace takes two question numbers A,B with 0 < A < B - 10 and B <= --questions")

    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        env = new_user_env(tmp)
        env.update(
            PYAICHAT_MODEL="openai/soak-model",
            PYAICHAT_API_BASE=server.base_url,
            OPENAI_API_KEY="sk-test",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PYTHONUNBUFFERED="1",
        )
        if opts.checkpoints:
            env["PYAICHAT_CHECKPOINTS"] = "on"
        if opts.base:  # before this venv's own (editable) pyaichat on the path, in the REPL and the kernel
            paths = (str(opts.base.resolve() / "src"), env.get("PYTHONPATH"))
            env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        # python -m pyaichat, with a probe that answers two signals (soak_probe.py): tracemalloc, threads
        command = [str(ROOT / "benchmarks" / "soak_probe.py"), str(Path(tmp) / "repl.snapshot")]
        repl = Repl([*command, *(["--kernel"] if opts.kernel else [])], env, Path(tmp) / "stderr.txt")
        try:
            run(repl, server, opts, Path(tmp))
        finally:
            repl.close()
        unexpected = [line for line in repl.seen if "Error" in line or "Traceback" in line]
        if unexpected:
            print("unexpected output:\n" + "".join(unexpected[:10]))
        errors = repl.stderr.read_text()
        if errors.strip():
            print("pyaichat's standard error:\n" + errors[-3000:])


@dataclass
class Row:
    question: int
    rss: float  # MB, the REPL process
    kernel: float  # MB, the kernel and its children (0 without --kernel)
    wall: float  # median ms per question over the interval
    low: float  # 10th percentile: the questions least disturbed by other work on the machine
    cpu: float  # mean CPU ms per question over the interval (REPL + kernel)
    kcpu: float  # the kernel's part of it


def run(repl: Repl, server: ScriptedServer, opts: argparse.Namespace, tmp: Path) -> None:
    pid = repl.proc.pid
    repl.send(SETUP.replace("{rows}", str(opts.rows)))
    repl.send(f"print({MARK!r})")
    repl.wait_for(MARK, timeout=300)
    if opts.checkpoints:  # the live session is the supervisor's child (its copies are the session's)
        pid = min(children(pid))
    code = f"the code of {opts.base}" if opts.base else "this checkout"
    print(
        f"soak: {opts.questions} questions, piped{', in a Jupyter kernel' if opts.kernel else ''}"
        f"{', checkpoints on' if opts.checkpoints else ''}, "
        f"a {opts.rows:,}-row DataFrame; one eval_expr call and an answer per question; {code}; "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    )
    print(
        f"{'question':>8} {'RSS MB':>8} {'kernel MB':>9} {'threads':>7} {'fds':>4} {'wall ms/q':>10} "
        f"{'p10 ms/q':>9} {'CPU ms/q':>9}"
        + (f" {'kernel CPU':>10}" if opts.kernel else "")
        + (f" {'copies MB':>9} {'copies':>6}" if opts.checkpoints else "")
    )

    def cpu() -> tuple[float, float]:
        """CPU seconds so far of the REPL and the kernel (with what it started)."""
        kernel = sum(cpu_seconds(p) for p in descendants(pid)) if opts.kernel else 0.0
        return cpu_seconds(pid) + kernel, kernel

    times: list[float] = []
    rows: list[Row] = []
    last_cpu, last_q = cpu(), 0
    for i in range(1, opts.questions + 1):
        server.tool("eval_expr", {"expr": "df.a.mean()"})
        server.text(f"The mean of `df.a` is {(opts.rows - 1) / 2}. (question {i})")
        started = time.perf_counter()
        repl.send(QUESTION)
        repl.send(f"n = {i}; print({MARK!r})")
        repl.wait_for(MARK, timeout=900 if opts.trace else 120)  # tracemalloc: litellm imports for minutes
        times.append((time.perf_counter() - started) * 1000)
        server.requests.clear()  # this process's record of the bodies: not what is measured
        if opts.trace and i == opts.trace[0]:
            trace(repl, opts)
        elif opts.trace and i in (opts.trace[0] + 10, opts.trace[1]):
            snapshot(repl, tmp, opts, 1 if i < opts.trace[1] else 2)
        if i % opts.every == 0 or i == 20:
            kernel = sum(rss_mb(k) for k in descendants(pid)) if opts.kernel else 0.0
            now_cpu = cpu()
            row = Row(
                i,
                rss_mb(pid),
                kernel,
                statistics.median(times[last_q:]),
                percentile(times[last_q:], 0.1),
                (now_cpu[0] - last_cpu[0]) * 1000 / (i - last_q),
                (now_cpu[1] - last_cpu[1]) * 1000 / (i - last_q),
            )
            last_cpu, last_q = now_cpu, i
            rows.append(row)
            print(
                f"{i:>8} {row.rss:>8.1f} {row.kernel:>9.1f} {threads(pid):>7} {descriptors(pid):>4} "
                f"{row.wall:>10.1f} {row.low:>9.1f} {row.cpu:>9.1f}"
                + (f" {row.kcpu:>10.1f}" if opts.kernel else "")
                + (f" {copies_mb(pid):>9.1f} {len(children(pid)):>6}" if opts.checkpoints else ""),
                flush=True,
            )
    if not opts.trace:  # with tracemalloc the memory and the times after question A are its own
        summarize(rows, opts)
    print_threads(repl, tmp, pid)
    if opts.trace:
        grown(tmp, opts)


def print_threads(repl: Repl, tmp: Path, pid: int) -> None:
    """The REPL process's (``pid``) threads at the end, grouped by what they run."""
    path = tmp / "repl.snapshot.threads"
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not path.exists():
        print("the REPL did not list its threads")
        return
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        name, _, place = line.split("\t")
        kind = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() else name  # pool_3 -> pool
        key = f"{kind} in {place}"
        counts[key] = counts.get(key, 0) + 1
    listed = ", ".join(f"{n} × {key}" if n > 1 else key for key, n in counts.items())
    print(f"the REPL's Python threads at the end ({sum(counts.values())}): {listed}")


def trace(repl: Repl, opts: argparse.Namespace) -> None:
    """Start tracemalloc in the REPL process (its probe answers SIGUSR1) and, with ``--kernel``, in the
    kernel."""
    repl.proc.send_signal(signal.SIGUSR1)
    if opts.kernel:
        repl.send("import tracemalloc as _soak_tm; _soak_tm.start(25)")
        repl.send(f"print({MARK!r})")
        repl.wait_for(MARK)


def snapshot(repl: Repl, tmp: Path, opts: argparse.Namespace, k: int) -> None:
    """Snapshot ``k`` of the REPL process (its probe answers SIGUSR1) and, with ``--kernel``, of the kernel
    (an input run there)."""
    path = tmp / f"repl.snapshot.{k}"
    repl.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 300
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the REPL wrote no tracemalloc snapshot")
        time.sleep(0.2)
    if opts.kernel:
        target = tmp / f"kernel.snapshot.{k}"
        repl.send(
            "import gc as _soak_gc, tracemalloc as _soak_tm; "
            f"open({str(target)!r} + '.gc', 'w').write(str(_soak_gc.collect())); "
            f"_soak_tm.take_snapshot().dump({str(target)!r})"
        )
        repl.send(f"print({MARK!r})")
        repl.wait_for(MARK, timeout=300)


def grown(tmp: Path, opts: argparse.Namespace, top: int = 8) -> None:
    """The allocations that grew most between the two snapshots, grouped by where they were made."""
    import tracemalloc

    first, last = opts.trace[0] + 10, opts.trace[1]
    noise = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
        tracemalloc.Filter(False, "<unknown>"),
    ]
    for who in ("repl", "kernel") if opts.kernel else ("repl",):
        before = tracemalloc.Snapshot.load(str(tmp / f"{who}.snapshot.1")).filter_traces(noise)
        after = tracemalloc.Snapshot.load(str(tmp / f"{who}.snapshot.2")).filter_traces(noise)
        stats = after.compare_to(before, "traceback")
        total = sum(s.size_diff for s in stats) / (last - first)
        garbage = [(tmp / f"{who}.snapshot.{k}.gc").read_text() for k in (1, 2)]
        print(
            f"\n{'the REPL process' if who == 'repl' else 'the kernel'}, question {first} → {last}: "
            f"{total / 1024:+.1f} kB per question kept (traced, after a full garbage collection, which "
            f"found {garbage[0]} and {garbage[1]} unreachable objects); the {top} places that grew most:"
        )
        for stat in stats[:top]:
            print(
                f"  {stat.size_diff / (last - first) / 1024:+8.1f} kB/question "
                f"({stat.count_diff / (last - first):+.1f} blocks), made at (innermost first):"
            )
            for frame in list(stat.traceback)[::-1][:8]:
                print(f"      {_short(frame.filename)}:{frame.lineno}")


def _short(filename: str) -> str:
    """A frame's file, from the package folder on."""
    for marker in ("site-packages/", "/src/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def summarize(rows: list[Row], opts: argparse.Namespace) -> None:
    """Memory from the first row after the warm-up to the last; time as the median of the first three
    intervals after the warm-up against the median of the last three (one busy interval on a shared
    machine does not decide it)."""
    warm = [r for r in rows if r.question > opts.warm]
    if len(warm) < 2:
        return
    first, last = warm[0], warm[-1]
    per_k = (last.rss + last.kernel - first.rss - first.kernel) / (last.question - first.question) * 1000
    which = "REPL + kernel" if opts.kernel else "REPL"
    print(
        f"after warm-up (q{first.question} → q{last.question}): {which} memory {per_k:+.1f} MB per 1,000 "
        "questions (budget ≤ 10)"
    )
    early, late = warm[:3], warm[-3:]
    parts = []
    keys = [("wall median", "wall"), ("wall p10", "low"), ("CPU", "cpu")]
    for label, key in keys + ([("kernel CPU", "kcpu")] if opts.kernel else []):
        before = statistics.median(getattr(r, key) for r in early)
        after = statistics.median(getattr(r, key) for r in late)
        parts.append(f"{label} {before:.1f} → {after:.1f} ms ({after / before:.2f}×)")
    print(
        f"per question, first three intervals after warm-up → last three: {', '.join(parts)} (budget ≤ 1.10×)"
    )


if __name__ == "__main__":
    main()
