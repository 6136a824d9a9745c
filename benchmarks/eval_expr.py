"""``eval_expr`` of twenty typical expressions: where each is read (in-process or the walled child) and what
it costs, against plain ``eval`` of the same expression and a bare fork round trip.

Columns, per expression (median µs):

* ``eval``: plain ``eval(expr, namespace)`` — the yardstick of the budgets: a name or attribute path read
  in-process ≤ 2× it; a call read in the walled child ≤ a bare fork round trip + 2× it;
* ``read``: the in-process evaluation of the value alone (parse cache, the reader's checks, the evaluation),
  or ``child`` when the in-process tier does not read it;
* ``ratio``: read / eval;
* ``call``: the whole ``capabilities.call`` (argument model, deadline thread, the value's description,
  masking; audit off), which for a ``child`` row includes the fork;
* ``budget``: for a path read here, read ≤ 2× eval; for a child row, call ≤ fork + 2× eval.

It runs against whichever ``pyaichat`` is importable, so the same script measures another checkout::

    .venv/bin/python benchmarks/eval_expr.py
    git worktree add /tmp/base <commit>
    PYTHONPATH=/tmp/base/src .venv/bin/python benchmarks/eval_expr.py

Run the two in turn a few times (the machine is shared): the load is printed with each table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXPRESSIONS = [
    "n",
    "df.shape",
    "df.columns",
    "cfg['x']",
    "arr.shape",
    "p.x",
    "type(df).__name__",
    "len(df)",
    "n + 1",
    "len(xs)",
    "sorted(d)[:5]",
    "sorted(d.items())[:3]",
    "df.dtypes",
    "df['a'].mean()",
    "df.head()",
    "df.a.value_counts()",
    "df[df.a > 0.5].b.sum()",
    "arr.max()",
    "[x * 2 for x in xs[:5]]",
    "p",
]
PATHS = frozenset({"n", "df.shape", "df.columns", "cfg['x']", "arr.shape", "p.x"})


def _median_us(func: Callable[[], Any], runs: int) -> float:
    for _ in range(min(runs // 10, 50)):
        func()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _reader(ctx: Any) -> Callable[[str], Any]:
    """The in-process read of the importable code: ``expression._in_process`` (its signature before and after
    issue 44), or ``fast_eval`` (older)."""
    try:
        from pyaichat.capabilities import expression
    except ImportError:
        from pyaichat.capabilities import fast_eval

        return lambda expr: fast_eval.fast_value(ctx, expr)
    try:
        expression._in_process(ctx, expression.parse_expression("1"), None, None)

        def read(expr: str) -> Any:
            return expression._in_process(ctx, expression.parse_expression(expr), None, None)[0]

    except TypeError:

        def read(expr: str) -> Any:
            return expression._in_process(ctx, expression.parse_expression(expr), None)[0]

    return read


def _bare_fork_us(runs: int = 30) -> float:
    """A fork-and-exit round trip of this process (the parent waits for the child's exit)."""

    def once() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    return _median_us(once, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd

    import pyaichat
    from pyaichat.capabilities import call
    from pyaichat.capabilities.catalog import CapabilityContext
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    session = Session(echo=lambda value: None, config=Config(audit=False))
    session.namespace.update(
        df=pd.DataFrame({"a": np.linspace(0, 1, 1000), "b": range(1000), "c": ["x", "y"] * 500}),
        xs=list(range(1000)),
        d={f"k{i}": i for i in range(100)},
        arr=np.arange(1_000_000.0),
        cfg={"x": 1, "y": [1, 2]},
        n=41,
    )
    session.run(
        "class Point:\n    def __init__(self):\n        self.x, self.y = 3, 4\n"
        "    def __repr__(self):\n        return 'Point(3, 4)'\np = Point()"
    )
    ctx = CapabilityContext(session, session.config)
    read = _reader(ctx)
    namespace = session.namespace
    forks = [0]
    real_fork = os.fork

    def counting_fork() -> int:
        forks[0] += 1
        return real_fork()

    os.fork = counting_fork  # type: ignore[assignment]
    print(f"pyaichat from {Path(pyaichat.__file__).parent}; Python {sys.version.split()[0]}")
    print(f"load {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs), median of {args.runs} (µs)\n")
    fork = _bare_fork_us()
    print(f"bare fork round trip: {fork:.0f} µs\n")
    print("| expression | eval | read | ratio | call | read in | budget |")
    print("|---|---:|---:|---:|---:|---|---|")
    children = 0
    for expr in EXPRESSIONS:
        plain = _median_us(lambda e=expr: eval(e, namespace), args.runs)
        try:
            read(expr)
            inside = _median_us(lambda e=expr: read(e), args.runs)
        except Exception:
            inside = None
        before = forks[0]
        result = call(session, "eval_expr", {"expr": expr})
        if not result.ok:  # (an older checkout refused some of these)
            print(f"| `{expr}` | {plain:.1f} | refused: {(result.error or '')[:60]} | | | | |")
            continue
        forked = forks[0] > before
        children += forked
        whole = _median_us(
            lambda e=expr: call(session, "eval_expr", {"expr": e}), 40 if forked else args.runs
        )
        read_text = "child" if inside is None else f"{inside:.1f}"
        ratio = "" if inside is None else f"{inside / plain:.2f}×"
        mark = " (path)" if expr in PATHS else ""
        where = "walled child" if forked else "in-process"
        if forked:
            budget = "ok" if whole <= fork + 2 * plain else f"over ({fork + 2 * plain:.0f})"
        elif expr in PATHS and inside is not None:
            budget = "ok" if inside <= 2 * plain else "over 2×"
        else:
            budget = ""
        print(f"| `{expr}`{mark} | {plain:.1f} | {read_text} | {ratio} | {whole:.0f} | {where} | {budget} |")
    print(f"\n{children} of {len(EXPRESSIONS)} read in the walled child; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
