"""Cost of what the assistant sees: ``list_globals`` and ``get_repr`` as the data grows, the session picture
with 10,000 variables and a 10M-row DataFrame (≤ 50 ms) and with ten objects whose ``__repr__`` is asked in
the walled child (issue 44; ≤ 50 ms), every data-library adapter (time and tokens of one
summary at ``sample``; budget ≤ 5 ms, ≤ 300 tokens) and a third party's (``tests/plugin_pkg``, bounded in a
worker thread), and the session picture over lazy data (a Dask frame over minutes of work, databases of 500
tables; ≤ 50 ms).

Namespaces of 10 / 1,000 / 10,000 variables, DataFrames of 1k / 100k / 10M rows and a 1e7-element list, each
measured through ``pyaichat.capabilities.call`` (validation, deadline thread, masking, audit off) and through
the bare ``summary.describe`` / ``one_line`` the session picture uses. Prints median time and output size; the
cost must stay flat as the data grows.

Usage: python benchmarks/summary.py [runs]   (default 15 runs per figure; needs pandas and numpy, ~1 GB RAM;
the adapter table needs the ``data`` extra, and skips a library that is not installed)
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
from pyaichat.configuration.config import Config
from pyaichat.session import Session

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def approx_tokens(text: str) -> int:
    """The estimate the budgets are stated in: about four characters a token."""
    return len(text) // 4 + 1


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
    session.settings.replace(Config(audit=False))
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
    picture()


def picture() -> None:
    from pyaichat.capabilities.picture import session_picture

    session = session_for({**variables(10_000), "df": frame(10_000_000)})
    session.run("small = df.head()")
    dg_ms, picture = median_ms(lambda: session_picture(session, session.config))
    tokens = approx_tokens(picture)
    print(f"session picture, 10,000 variables + 10M-row DataFrame: {dg_ms} ms, {tokens} tokens")
    # Issue 44's session: ten objects with a __repr__ of their own (asked in one walled child) and a frame.
    session = session_for({"df": frame(1_000_000)})
    session.run(
        "class Reading:\n    def __init__(self, i):\n        self.i = i\n"
        "    def __repr__(self):\n        return f'Reading({self.i})'\n"
        + "".join(f"r{i} = Reading({i})\n" for i in range(10))
    )
    own_ms, picture = median_ms(lambda: session_picture(session, session.config))
    asked = sum(f"Reading({i})" in picture for i in range(10))
    print(
        f"session picture, 10 objects with their own __repr__ + 1M-row DataFrame: {own_ms} ms "
        f"({asked} of 10 answered by the walled child)"
    )


def data_objects(tmp: str) -> list[tuple[str, Callable[[], Any]]]:
    """One object per adapter, built lazily (a missing library skips its row)."""

    def dask_frame() -> Any:
        import dask
        import dask.dataframe as dd

        def slow(i: int) -> pd.DataFrame:  # 1,000 partitions of 1 s each: minutes of work, never run
            time.sleep(1)
            return frame(10)

        return dd.from_delayed([dask.delayed(slow)(i) for i in range(1000)], meta=frame(0))

    def polars_lazy() -> Any:
        import polars as pl

        return (
            pl.from_pandas(frame(100_000))
            .lazy()
            .filter(pl.col("amount") > 0.5)
            .with_columns(x=pl.col("id") * 2)
        )

    def polars_frame() -> Any:
        import polars as pl

        return pl.from_pandas(frame(1_000_000))

    def arrow_table() -> Any:
        import pyarrow as pa

        return pa.Table.from_pandas(frame(1_000_000))

    def xarray_file() -> Any:
        import xarray as xr

        path = f"{tmp}/x.nc"
        xr.Dataset({"t": (("time", "site"), np.random.rand(1000, 50))}, attrs={"title": "demo"}).to_netcdf(
            path, engine="scipy"
        )
        return xr.open_dataset(path, engine="scipy")

    def sparse() -> Any:
        import scipy.sparse as sp

        rows = np.arange(100_000)
        return sp.csr_matrix((np.ones(100_000), (rows, rows % 5000)), shape=(100_000, 5000))

    def sqlite_500() -> Any:
        import sqlite3

        conn = sqlite3.connect(f"{tmp}/wide.db", check_same_thread=False)
        conn.executescript(
            "BEGIN;"
            + "".join(f"CREATE TABLE t{i} (id INTEGER, v REAL, s TEXT);" for i in range(500))
            + "COMMIT;"
        )
        return conn

    def duckdb_500() -> Any:
        import duckdb

        conn = duckdb.connect()
        for i in range(500):
            conn.execute(f"CREATE TABLE t{i} (id INTEGER, v DOUBLE, s VARCHAR)")
        return conn

    def figure() -> Any:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 2)
        for ax in axes.flat:
            ax.plot(np.arange(10_000), np.random.rand(10_000), label="a")
            ax.bar(range(10), range(10))
            ax.legend()
        return fig

    def torch_tensor() -> Any:
        import torch

        return torch.rand(1000, 1000)

    def sensor() -> Any:
        import demo_sensors  # tests/plugin_pkg: described by a third party's adapter (entry point)

        return demo_sensors.Sensor("probe", "°C", [float(i) for i in range(100_000)])

    return [
        ("pandas DataFrame 1M rows", lambda: frame(1_000_000)),
        ("numpy array 1e7", lambda: np.arange(10_000_000)),
        ("Dask DataFrame 1,000 slow parts", dask_frame),
        ("polars LazyFrame", polars_lazy),
        ("polars DataFrame 1M rows", polars_frame),
        ("pyarrow Table 1M rows", arrow_table),
        ("xarray Dataset from a file", xarray_file),
        ("scipy sparse 100k×5k", sparse),
        ("sqlite3 500 tables", sqlite_500),
        ("DuckDB 500 tables", duckdb_500),
        ("matplotlib Figure 2×2", figure),
        ("torch Tensor 1000×1000", torch_tensor),
        ("plugin adapter (demo_sensors)", sensor),
    ]


def adapters() -> None:
    import tempfile

    from pyaichat.capabilities.picture import session_picture

    print()
    print("adapters at privacy=sample: describe (get_repr's text) and one_line (the session picture)")
    print(f"{'object':<32} {'describe ms':>12} {'tokens':>7} {'one_line ms':>12} {'tokens':>7}")
    namespace: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, build in data_objects(tmp):
            try:
                value = build()
            except ImportError as exc:
                print(f"{label:<32} skipped ({exc.name} not installed)")
                continue
            namespace[f"v{len(namespace)}"] = value
            d_ms, text = median_ms(lambda value=value: describe(value))
            o_ms, line = median_ms(lambda value=value: one_line(value))
            print(f"{label:<32} {d_ms:>12} {approx_tokens(text):>7} {o_ms:>12} {approx_tokens(line):>7}")
        session = session_for(namespace)
        dg_ms, picture = median_ms(lambda: session_picture(session, session.config))
        print(f"session picture with all of them: {dg_ms} ms, {approx_tokens(picture)} tokens")


if __name__ == "__main__":
    main()
    adapters()
