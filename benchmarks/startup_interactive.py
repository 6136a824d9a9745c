"""Interactive start-up: time from spawning ``python -m pyaichat`` in a pseudo-terminal to its first prompt.

Budget (design.md §4): ≤ 0.3 s. Two figures for pyaichat: the first ``>>> `` on screen (drawn before
prompt_toolkit is imported; keys typed from then on are kept) and the moment prompt_toolkit has drawn its own
prompt (bracketed paste switched on, then ``>>> ``) and handles keys itself. ``python -i`` and ``ipython
--quick`` (when installed) are timed the same way. Prints medians of N runs (default 5) and the load
average, since other processes on the machine inflate every figure:

    .venv/bin/python benchmarks/startup_interactive.py [N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time

import pexpect

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def time_to_prompt(argv: list[str], prompt: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30)
    child.expect(prompt)
    elapsed = time.perf_counter() - started
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def main() -> None:
    tmp = tempfile.mkdtemp(prefix="pyaichat-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(
        XDG_STATE_HOME=os.path.join(tmp, "state"),
        XDG_CONFIG_HOME=os.path.join(tmp, "config"),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect never answers cursor-position requests
    )
    cases = [
        ("pyaichat (first >>>)", [sys.executable, "-m", "pyaichat"], r">>> "),
        ("pyaichat (full UI)", [sys.executable, "-m", "pyaichat"], r"\x1b\[\?2004h.*?>>>[ \x1b]"),
        ("python -i", [sys.executable, "-i", "-q"], r">>> "),
    ]
    ipython = shutil.which("ipython", path=os.path.dirname(sys.executable)) or shutil.which("ipython")
    if ipython:
        argv = [ipython, "--quick", "--no-banner", "--no-confirm-exit"]
        cases.append(("ipython --quick", argv, r"In \[\S*1\S*\]: "))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {RUNS} runs each")
    results = {}
    for name, argv, prompt in cases:
        time_to_prompt(argv, prompt, env)  # warm the file cache
        samples = [time_to_prompt(argv, prompt, env) for _ in range(RUNS)]
        results[name] = statistics.median(samples)
        spread = ", ".join(f"{s * 1000:.0f}" for s in samples)
        print(f"{name:<22} median {results[name] * 1000:6.0f} ms   runs: {spread}")
    for name in ("pyaichat (first >>>)", "pyaichat (full UI)"):
        verdict = "within" if results[name] <= 0.3 else "OVER"
        print(f"{name}: {verdict} the 300 ms budget")
    base = results["pyaichat (full UI)"]
    for name, value in results.items():
        if not name.startswith("pyaichat"):
            print(f"pyaichat (full UI) / {name}: {base / value:.2f}×")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
