"""Cost of what the assistant sees: ``list_globals`` and ``get_repr`` as the data grows (design.md §4).

Namespaces of 10 / 1,000 / 10,000 variables, DataFrames of 1k / 100k / 10M rows and a 1e7-element list, each
measured through ``pyaichat.capabilities.call`` (validation, deadline thread, masking, audit off) and through
the bare ``summary.describe`` / ``one_line`` the session digest uses. Prints median time and output size; the
cost must stay flat as the data grows.

Usage: python benchmarks/summary.py [runs]   (default 15 runs per figure; needs pandas and numpy, ~1 GB RAM)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from pyaichat.capabilities import call
from pyaichat.capabilities.summary import describe, one_line
from pyaichat.config import Config
from pyaichat.session import Session

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def median_ms(func: Callable[[], Any]) -> tuple[str, Any]:
    """``"median/min"`` in ms (the minimum shows the cost without other processes' noise) and the result."""
    result = func()  # warm-up (first-use imports, caches)
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        result = func()
        samples.append((time.perf_counter() - started) * 1000)
    return f"{statistics.median(samples):.2f}/{min(samples):.2f}", result


def variables(n: int) -> dict[str, Any]:
    """A mixed namespace: numbers, strings, small lists and dicts, a function every so often."""
    kinds: list[Callable[[int], Any]] = [
        lambda i: i,
        lambda i: f"text {i}",
        lambda i: list(range(i % 50)),
        lambda i: {"k": i, "v": [i]},
        lambda i: float(i) / 3,
    ]
    return {f"var_{i}": kinds[i % len(kinds)](i) for i in range(n)}


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": np.arange(rows, dtype=np.int64),
            "amount": np.linspace(0.0, 1.0, rows),
            "region": pd.Categorical.from_codes(np.arange(rows) % 4, ["north", "south", "east", "west"]),
            "flag": np.arange(rows) % 2 == 0,
        }
    )


def session_for(namespace: dict[str, Any]) -> Session:
    session = Session(namespace)
    session.config = Config(audit=False)
    return session


def row(label: str, session: Session, target: str | None) -> str:
    lg_ms, lg = median_ms(lambda: call(session, "list_globals", {}))
    cells = [f"{label:<26}", f"{lg_ms:>12}", f"{len(lg.text):>6,}"]
    if target is None:
        cells += [f"{'-':>12}", f"{'-':>6}", f"{'-':>12}", f"{'-':>12}"]
    else:
        gr_ms, gr = median_ms(lambda: call(session, "get_repr", {"expr": target}))
        value = session.namespace[target]
        d_ms, _ = median_ms(lambda: describe(value))
        o_ms, _ = median_ms(lambda: one_line(value))
        cells += [f"{gr_ms:>12}", f"{len(gr.text):>6,}", f"{d_ms:>12}", f"{o_ms:>12}"]
    return " ".join(cells)


def main() -> None:
    print(f"{RUNS} runs each; times in ms as median/min, sizes in characters; privacy=sample, audit off")
    heads = ["list_globals", "chars", "get_repr", "chars", "describe", "one_line"]
    print(f"{'case':<26} " + " ".join(f"{h:>{6 if h == 'chars' else 12}}" for h in heads))
    for n in (10, 1_000, 10_000):
        ns = variables(n)
        print(row(f"{n:,} variables", session_for(ns), "var_3"))
    for rows in (1_000, 100_000, 10_000_000):
        print(row(f"DataFrame {rows:,} rows", session_for({"df": frame(rows), "x": 1}), "df"))
    print(row("list of 1e7 floats", session_for({"big": [1.5] * 10**7, "x": 1}), "big"))


if __name__ == "__main__":
    main()
