"""Start, one line, exit: what a first input costs beyond the start-up, against a bare prompt_toolkit REPL.

Each round spawns, in a pty (pexpect, 100x30, TERM=xterm), ``python -m pyaichat`` with autosave on (the
terminal default, ``autosave = "auto"``), the same with ``PYAICHAT_AUTOSAVE=off``, and the floor: a bare
prompt_toolkit ``PromptSession`` loop that runs each line with ``exec``. Each one is sent ``x = 1`` as soon
as its full prompt is on screen, and Ctrl-D as soon as the next prompt is; the time is from spawning to the
process's exit. The three run back to back in an order that turns from round to round; the figures are the
medians of the per-round ratios to the floor (load on a shared machine comes in bursts that hit a round's
runs alike).

What autosave adds is the resume file (``last-session.json``) written after the input: it must be written
after the next prompt is drawn, not before, so that the prompt (and the keys typed at it) never wait for it.
The second time, "second prompt", is from sending the line to the next prompt on screen.

    .venv/bin/python benchmarks/first_input.py [rounds] [--base SRC]      # default 20 rounds

``--base SRC`` adds the same two runs of another checkout's ``src`` directory (``PYTHONPATH=SRC``), e.g. a
``git worktree`` of ``main``: before and after, in the same rounds.
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

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
ROUNDS = int(ARGS[0]) if ARGS and ARGS[0].isdigit() else 20
BASE = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else None
FULL_UI = r"\x1b\[\?2004h.*?>>>[ \x1b]"
FLOOR = (
    "import gc; gc.disable()\n"
    "from prompt_toolkit import PromptSession\n"
    "session = PromptSession(bottom_toolbar='toolbar')\n"
    "session.app.after_render += lambda app: gc.enable()\n"
    "ns = {}\n"
    "while True:\n"
    "    try:\n"
    "        line = session.prompt('>>> ')\n"
    "    except EOFError:\n"
    "        break\n"
    "    exec(compile(line, '<input>', 'single'), ns)\n"
)


def one_line(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(spawn to exit, line sent to the next prompt) in seconds."""
    started = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30)
    child.expect(FULL_UI)
    sent = time.perf_counter()
    child.send("x = 1\r")
    child.expect(FULL_UI)
    second = time.perf_counter() - sent
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return time.perf_counter() - started, second


def main() -> None:
    tmp = tempfile.mkdtemp(prefix="pyaichat-bench-")
    env = new_user_env(tmp, terminal=True)
    off = env | {"PYAICHAT_AUTOSAVE": "off"}
    runs = {
        "pyaichat, autosave": ([sys.executable, "-m", "pyaichat"], env),
        "pyaichat, no autosave": ([sys.executable, "-m", "pyaichat"], off),
    }
    if BASE:
        runs["base, autosave"] = ([sys.executable, "-m", "pyaichat"], env | {"PYTHONPATH": BASE})
        runs["base, no autosave"] = ([sys.executable, "-m", "pyaichat"], off | {"PYTHONPATH": BASE})
    runs["floor (bare p_t loop)"] = ([sys.executable, "-c", FLOOR], env)
    names = list(runs)
    for name in names * 2:  # warm the file cache, .pyc files and the state directory
        one_line(*runs[name])
    load_before = os.getloadavg()[0]
    total: dict[str, list[float]] = {name: [] for name in names}
    second: dict[str, list[float]] = {name: [] for name in names}
    for i in range(ROUNDS):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            whole, prompt = one_line(*runs[name])
            total[name].append(whole)
            second[name].append(prompt)
    shutil.rmtree(tmp, ignore_errors=True)

    print(f"start, one line (x = 1), exit in a pty; {ROUNDS} rounds, order turning")
    print(f"load average (1 min) before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")
    for name in names:
        print(
            f"  {name:<22} whole run median {statistics.median(total[name]) * 1000:6.0f} ms, "
            f"line to next prompt median {statistics.median(second[name]) * 1000:5.0f} ms"
        )
    floor = total[names[-1]]
    for name in names[:-1]:
        ratios = [a / b for a, b in zip(total[name], floor, strict=True)]
        q = statistics.quantiles(ratios, n=4)
        print(
            f"{name} / floor, per round: median {statistics.median(ratios):.2f}x "
            f"(quartiles {q[0]:.2f}-{q[2]:.2f})"
        )


if __name__ == "__main__":
    main()
