"""How long the worst in-process reads hold the GIL: the red team's list (issue 44) and the largest
computations the in-process tier still accepts right at its size limits (``expression.sizes``).

For each expression: where it is read (in-process, the walled child, or refused), the time of the in-process
evaluation alone (the reader; single-threaded C work, so that is GIL held), and the longest gap a ticking
thread saw during the whole ``capabilities.call`` (for a child row it includes the fork, which holds the GIL
while the kernel copies the page tables). The budget: the worst in-process read ≤ 50 ms of GIL.

    .venv/bin/python benchmarks/inprocess_reads.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

SETUP = """
import random, string
import numpy as np
big = 3 ** 31_500            # about 50,000 bits
bigger = 3 ** 63_000         # about 100,000 bits
rng = random.Random(0)
chars = "".join(rng.choice(string.ascii_letters) for _ in range(50_000))
text = "".join(rng.choice(string.ascii_letters) for _ in range(100_000))
words = ["".join(rng.choice(string.ascii_letters) for _ in range(20)) for _ in range(10_000)]
numbers = [rng.random() for _ in range(10_000)]
same = list(numbers)
wide = {f"k{i}": i for i in range(100_000)}
longlist = list(range(1_000_000))
huge = "ab" * 9_500_000
arr = np.arange(5.0)
"""

# The red team's list (issue 44), then the largest computations still read in-process.
EXPRESSIONS = [
    " * ".join(["3**1999999"] * 8),
    "'%700000000d' % 0",
    "sorted(huge)",
    "np.diff(arr, 10**18)",
    "big * big",
    "bigger // big",
    "bigger % big",
    "big ** 2",
    "1 << 99_000",
    "'%10000d' % 0",
    "'%.10000f' % 1.5",
    "'%*d' % (10000, 1)",
    "sorted(chars)",
    "sorted(words)",
    "sorted(numbers)",
    "text * 100",
    "'-'.join(words)",
    "str(words)",
    "numbers == same",
    "sum(numbers)",
    "set(words)",
    "wide['k99999']",
    "longlist[::-1]",
    "text[::-1]",
    "len(huge)",
    "max(words)",
]


def main() -> None:
    from pyaichat.capabilities import call, expression
    from pyaichat.capabilities.catalog import CapabilityContext
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session
    from readonly_breaks import GilTicker

    session = Session(echo=lambda value: None, config=Config(audit=False))
    assert session.run(SETUP).ok
    ctx = CapabilityContext(session, session.config)
    print(f"load {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)\n")
    print("| expression | read | in-process read (ms, median of 5) | longest gap during the call (ms) |")
    print("|---|---|---:|---:|")
    worst = 0.0
    for expr in EXPRESSIONS:
        tree = expression.parse_expression(expr)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            try:
                expression._in_process(ctx, tree, "repr", lambda v: None)
            except Exception:
                times = []
                break
            times.append(time.perf_counter() - started)
        with GilTicker() as ticker:  # (it counts the forks of the call too)
            result = call(session, "eval_expr", {"expr": expr})
        where = "walled child" if ticker.forks else "in-process" if result.ok else "refused"
        if times and where == "in-process":
            inside = statistics.median(times) * 1000
            worst = max(worst, inside)
            shown = f"{inside:.2f}"
        else:
            shown = "—"
        held = max(ticker.longest, ticker.fork_held)
        print(f"| `{expr[:48]}` | {where} | {shown} | {held * 1000:.0f} |")
    print(f"\nworst in-process read: {worst:.1f} ms of GIL (budget 50 ms); load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
