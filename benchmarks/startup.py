"""Piped start-up of pyaichat against ``ipython --quick`` as PAIRED runs.

Each pair runs ``printf 'x=1\\n' | python -m pyaichat`` and ``printf 'x=1\\n' | ipython --quick --no-banner``
back to back, in alternating order, and keeps the ratio of the two. On a machine shared with other work, load
comes and goes in bursts; a burst usually hits both halves of a pair alike, so the median of the per-pair
ratios is far steadier than a ratio of two medians taken minutes apart. ``python -i`` is timed in the same
rounds as the floor that no Python program can beat.

Budget: pyaichat ≤ 0.4× ``ipython --quick`` (median of the pair ratios). Usage:

    .venv/bin/python benchmarks/startup.py [pairs]      # default 30 pairs
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from startup_env import new_user_env

PAIRS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
BUDGET = 0.4
PROBE = (
    "import sys, io; sys.stdin = io.StringIO('x=1\\n'); from pyaichat.cli import main; main([]); "
    "print(sorted(m for m in ('litellm', 'pydantic', 'rich', 'prompt_toolkit') if m in sys.modules))"
)


def time_command(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        cmd, input=b"x=1\n", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False
    )
    return time.perf_counter() - started


def main() -> None:
    env = new_user_env(tempfile.mkdtemp(prefix="pyaichat-bench-"))
    ours = [sys.executable, "-m", "pyaichat"]
    ipython = [sys.executable, "-m", "IPython", "--quick", "--no-banner"]
    floor = [sys.executable, "-i", "-q"]
    for cmd in (ours, ipython, ipython, floor):  # warm the file cache, .pyc files and IPYTHONDIR
        time_command(cmd, env)
    load_before = os.getloadavg()[0]
    ratios: list[float] = []
    times: dict[str, list[float]] = {"pyaichat": [], "ipython": [], "python -i": []}
    for i in range(PAIRS):
        if i % 2 == 0:
            a, b = time_command(ours, env), time_command(ipython, env)
        else:
            b, a = time_command(ipython, env), time_command(ours, env)
        ratios.append(a / b)
        times["pyaichat"].append(a)
        times["ipython"].append(b)
        times["python -i"].append(time_command(floor, env))
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=False
    )
    heavy = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else f"? {probe.stderr[-200:]}"

    print(f"piped start-up, {PAIRS} pairs of printf 'x=1\\n' | <command>, alternating order")
    print(f"load average (1 min) before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")
    for name, values in times.items():
        print(f"  {name:<12} median {statistics.median(values) * 1000:6.0f} ms")
    quartiles = statistics.quantiles(ratios, n=4)
    median = statistics.median(ratios)
    print(
        f"pyaichat / ipython --quick, per pair: median {median:.2f}x "
        f"(quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f}, best {min(ratios):.2f}, worst {max(ratios):.2f})"
    )
    print(f"heavy modules imported by a piped start: {heavy}")
    verdict = "within" if median <= BUDGET else "OVER"
    print(f"budget: median pair ratio <= {BUDGET}x -> {verdict} budget")


if __name__ == "__main__":
    main()
