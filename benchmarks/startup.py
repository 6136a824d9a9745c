"""Start-up time of piped pyaichat against ``python -i`` and ``ipython --quick`` (design.md §4 budgets).

Runs ``printf 'x=1\\n' | <command>`` several times for each command and prints medians and ratios.
Usage: python benchmarks/startup.py [runs]
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def time_command(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    started = time.perf_counter()
    subprocess.run(
        cmd, input=b"x=1\n", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False
    )
    return time.perf_counter() - started


def main() -> None:
    commands = {
        "pyaichat (piped)": [sys.executable, "-m", "pyaichat"],
        "python -i": [sys.executable, "-i"],
    }
    if importlib.util.find_spec("IPython"):
        commands["ipython --quick"] = [sys.executable, "-m", "IPython", "--quick"]
    for cmd in commands.values():
        time_command(cmd)  # warm the file cache and .pyc files
    # Round-robin, so a burst of load on the machine affects every command alike.
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, cmd in commands.items():
            samples[name].append(time_command(cmd))
    results = {name: statistics.median(values) for name, values in samples.items()}
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, io; sys.stdin = io.StringIO('x=1\\n'); from pyaichat.cli import main; "
            "main([]); print('litellm' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"start-up, median of {RUNS} runs of printf 'x=1\\n' | <command>")
    print(f"{'command':<20} {'median s':>9} {'vs python -i':>13} {'vs ipython':>11}")
    for name, value in results.items():
        vs_py = value / results["python -i"]
        vs_ip = f"{value / results['ipython --quick']:.2f}x" if "ipython --quick" in results else "n/a"
        print(f"{name:<20} {value:>9.3f} {vs_py:>12.1f}x {vs_ip:>11}")
    print(
        f"litellm imported by piped start: {probe.stdout.strip().splitlines()[-1] if probe.stdout else '?'}"
    )
    if "ipython --quick" in results:
        budget = 0.5 * results["ipython --quick"]
        verdict = "within" if results["pyaichat (piped)"] <= budget else "OVER"
        print(f"budget: <= 0.5 x ipython --quick = {budget:.3f} s -> {verdict} budget")


if __name__ == "__main__":
    main()
