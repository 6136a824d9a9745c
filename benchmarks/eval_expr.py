"""``eval_expr`` of ten typical expressions: where each is read (in-process or the walled child) and what it
costs, against plain ``eval`` of the same expression.

Columns, per expression (median µs):

* ``eval``: plain ``eval(expr, namespace)`` — the yardstick of the budget (a name or attribute path read
  in-process ≤ 2× it);
* ``read``: the in-process evaluation of the value alone (parse cache, the level's checks, the evaluation,
  the no-user-code guard), or ``child`` when the in-process levels do not read it;
* ``ratio``: read / eval;
* ``call``: the whole ``capabilities.call`` (argument model, deadline thread, the value's summary, masking;
  audit off), which for a ``child`` row includes the fork.

It runs against whichever ``pyaichat`` is importable, so the same script measures another checkout::

    .venv/bin/python benchmarks/eval_expr.py
    git archive <commit> src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/eval_expr.py

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
    "df.shape",
    "df.columns",
    "df['a'].mean()",
    "len(xs)",
    "sorted(d)[:5]",
    "df.dtypes",
    "arr.max()",
    "cfg['x']",
    "df.head()",
    "df.a.value_counts()",
]
PATHS = frozenset({"df.shape", "df.columns", "df.dtypes", "cfg['x']"})


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
    """The in-process read of the importable code: ``expression`` (now) or ``fast_eval`` (before)."""
    try:
        from pyaichat.capabilities import expression

        def read(expr: str) -> Any:
            tree = expression.parse_expression(expr)
            return expression._in_process(ctx, tree, None)[0]

        return read
    except ImportError:
        from pyaichat.capabilities import fast_eval

        return lambda expr: fast_eval.fast_value(ctx, expr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd

    import pyaichat
    from pyaichat.capabilities import call
    from pyaichat.capabilities.registry import CapabilityContext
    from pyaichat.config import Config
    from pyaichat.session import Session

    session = Session(echo=lambda value: None, config=Config(audit=False))
    session.namespace.update(
        df=pd.DataFrame({"a": np.linspace(0, 1, 1000), "b": range(1000), "c": ["x", "y"] * 500}),
        xs=list(range(1000)),
        d={f"k{i}": i for i in range(100)},
        arr=np.arange(1_000_000.0),
        cfg={"x": 1, "y": [1, 2]},
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
    print("| expression | eval | read | ratio | call | read in |")
    print("|---|---:|---:|---:|---:|---|")
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
        assert result.ok, (expr, result.error)
        forked = forks[0] > before
        children += forked
        whole = _median_us(
            lambda e=expr: call(session, "eval_expr", {"expr": e}), 40 if forked else args.runs
        )
        read_text = "child" if inside is None else f"{inside:.1f}"
        ratio = "" if inside is None else f"{inside / plain:.2f}×"
        mark = " (path)" if expr in PATHS else ""
        where = "walled child" if forked else "in-process"
        print(f"| `{expr}`{mark} | {plain:.1f} | {read_text} | {ratio} | {whole:.0f} | {where} |")
    print(f"\n{children} of {len(EXPRESSIONS)} read in the walled child; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
