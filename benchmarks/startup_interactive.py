"""Interactive start-up: pyaichat's full UI against a bare prompt_toolkit prompt (the floor) and against
IPython's first prompt, as PAIRED runs in a pty.

Each round spawns ``python -m pyaichat``, the floor, ``ipython --quick --no-banner`` and plain ``ipython``
under the same pty settings (pexpect, 100x30, TERM=xterm), pyaichat and the floor back to back, in an order
that alternates from round to round, and keeps the ratios of their times. For
pyaichat two moments are taken from one run: the first ``>>> `` on screen (drawn before prompt_toolkit is
imported; keys typed from then on are kept) and the full UI (prompt_toolkit has switched on bracketed
paste and drawn its own ``>>> ``; from here on keys are edited, completed and highlighted by it).
IPython's figure is its first ``In [1]:`` with ``--quick`` (no config files); plain ``ipython`` (a new
profile, as a user starts it) is timed in the same rounds for reference. Load on a shared machine comes in
bursts that usually hit both halves of a pair alike, so the median of the per-pair ratios is the figure to
read.

The floor is a bare prompt_toolkit ``PromptSession`` (with a bottom toolbar) drawing its first prompt: the
least a REPL that imports and uses prompt_toolkit as it comes can do. What pyaichat adds to it is its own
code: the early prompt, the configuration, the session, key bindings, history and the mode machinery.

Budget: full UI ≤ 1.1× the floor (median of the per-round ratios). Usage:

    .venv/bin/python benchmarks/startup_interactive.py [pairs]      # default 20 pairs
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time

import pexpect
from startup_env import new_user_env

PAIRS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
BUDGET = 1.1  # full UI / floor
EARLY_PROMPT = r">>> "
FULL_UI = r"\x1b\[\?2004h.*?>>>[ \x1b]"
IPYTHON_PROMPT = r"In \[\S*1\S*\]: "
# The floor: prompt_toolkit as it comes (import it, build a PromptSession with a toolbar, draw the prompt),
# with the collector paused as pyaichat does.
FLOOR = (
    "import gc; gc.disable()\n"
    "from prompt_toolkit import PromptSession\n"
    "session = PromptSession(bottom_toolbar='toolbar')\n"
    "session.app.after_render += lambda app: gc.enable()\n"
    "session.prompt('>>> ')\n"
)


def spawn(argv: list[str], env: dict[str, str]) -> pexpect.spawn:
    return pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30)


def finish(child: pexpect.spawn) -> None:
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()


def time_pyaichat(env: dict[str, str]) -> tuple[float, float]:
    """(first ``>>> ``, full UI) in seconds from spawning."""
    started = time.perf_counter()
    child = spawn([sys.executable, "-m", "pyaichat"], env)
    child.expect(EARLY_PROMPT)
    first = time.perf_counter() - started
    child.expect(FULL_UI)
    full = time.perf_counter() - started
    finish(child)
    return first, full


def time_to(argv: list[str], prompt: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    child = spawn(argv, env)
    child.expect(prompt)
    elapsed = time.perf_counter() - started
    finish(child)
    return elapsed


def time_ipython(env: dict[str, str], *, quick: bool = True) -> float:
    argv = [sys.executable, "-m", "IPython", "--no-banner", "--no-confirm-exit"]
    argv += ["--quick"] if quick else []
    return time_to(argv, IPYTHON_PROMPT, env)


def time_floor(env: dict[str, str]) -> float:
    return time_to([sys.executable, "-c", FLOOR], FULL_UI, env)


def main() -> None:
    tmp = tempfile.mkdtemp(prefix="pyaichat-bench-")
    env = new_user_env(tmp, terminal=True)
    for _ in range(2):  # warm the file cache, .pyc files, the history file and IPYTHONDIR
        time_pyaichat(env)
        time_ipython(env)
    load_before = os.getloadavg()[0]
    first: list[float] = []
    full: list[float] = []
    theirs: list[float] = []
    floor: list[float] = []
    plain: list[float] = []
    for i in range(PAIRS):
        if i % 2 == 0:
            ours = time_pyaichat(env)
            floor.append(time_floor(env))
            theirs.append(time_ipython(env))
            plain.append(time_ipython(env, quick=False))
        else:
            plain.append(time_ipython(env, quick=False))
            theirs.append(time_ipython(env))
            floor.append(time_floor(env))
            ours = time_pyaichat(env)
        first.append(ours[0])
        full.append(ours[1])
    shutil.rmtree(tmp, ignore_errors=True)

    print(f"interactive start-up in a pty, {PAIRS} pairs, alternating order")
    print(f"load average (1 min) before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")
    for name, values in (
        ("pyaichat first >>>", first),
        ("pyaichat full UI", full),
        ("ipython In [1]", theirs),
        ("floor (bare p_t)", floor),
        ("ipython, no --quick", plain),
    ):
        print(f"  {name:<20} median {statistics.median(values) * 1000:6.0f} ms")
    for name, values in (("pyaichat first >>>", first), ("pyaichat full UI", full), ("floor", floor)):
        ratios = [a / b for a, b in zip(values, theirs, strict=True)]
        q = statistics.quantiles(ratios, n=4)
        print(
            f"{name} / ipython first prompt, per round: median {statistics.median(ratios):.2f}x "
            f"(quartiles {q[0]:.2f}-{q[2]:.2f}, best {min(ratios):.2f}, worst {max(ratios):.2f})"
        )
    as_started = statistics.median(a / b for a, b in zip(full, plain, strict=True))
    print(f"pyaichat full UI / ipython as a user starts it (no --quick), per round: median {as_started:.2f}x")
    own = [a / b for a, b in zip(full, floor, strict=True)]
    q = statistics.quantiles(own, n=4)
    median = statistics.median(own)
    print(
        f"pyaichat full UI / floor, per round: median {median:.2f}x "
        f"(quartiles {q[0]:.2f}-{q[2]:.2f}, best {min(own):.2f}, worst {max(own):.2f})"
    )
    verdict = "within" if median <= BUDGET else "OVER"
    print(f"budget: full UI / floor, median of the rounds <= {BUDGET}x -> {verdict} budget")


if __name__ == "__main__":
    main()
