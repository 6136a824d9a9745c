"""The adapters, query_sql and get_figure run inside a real Jupyter kernel, where the data is."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("ipykernel")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))

from kernel_process import attach, kernel_eval, start_kernel

pytestmark = pytest.mark.e2e

SETUP = """
import time, sqlite3
import pandas as pd, dask, dask.dataframe as dd, polars as pl
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
built = []
def part(i):
    built.append(i)
    time.sleep(1)
    return pd.DataFrame({"id": range(i * 10, i * 10 + 10), "amount": [float(i)] * 10})
meta = pd.DataFrame({"id": pd.Series(dtype="int64"), "amount": pd.Series(dtype="float64")})
ddf = dd.from_delayed([dask.delayed(part)(i) for i in range(4)], meta=meta)
lf = pl.LazyFrame({"a": [1, 2, 3]}).filter(pl.col("a") > 2)
conn = sqlite3.connect(DB)
conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
conn.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 10), ("south", 30)])
conn.commit()
conn.execute("INSERT INTO sales VALUES ('pending', 1)")
fig, ax = plt.subplots(num="sales")
ax.bar(["a", "b"], [1, 2])
"""


@pytest.fixture(scope="module")
def data_kernel(tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("data-kernel")
    kernel = start_kernel(directory, env={**os.environ, "MPLBACKEND": "Agg"})
    session = attach(kernel)
    result = session.run(SETUP.replace("DB", repr(str(directory / "shop.db"))))
    assert result.ok
    yield session
    session.close()
    kernel.kill()


def test_adapters_query_sql_and_get_figure_run_in_the_kernel(data_kernel):
    session = data_kernel
    listed = session.call("list_globals", {})
    assert listed.ok
    assert "ddf: Dask DataFrame ?×2 (4 partitions, lazy: not computed)" in listed.text
    assert "lf: polars LazyFrame ?×1 (lazy: not computed): a Int64" in listed.text
    assert "conn: sqlite3 Connection to shop.db: 1 table/view: sales" in listed.text
    assert "rows: not known without computing" in session.call("get_type", {"expr": "ddf"}).text
    rows = session.call("query_sql", {"connection": "conn", "sql": "SELECT * FROM sales ORDER BY amount"})
    assert rows.ok and "south   30" in rows.text and "pending" not in rows.text
    figure = session.call("get_figure", {})
    assert figure.ok and "Figure 1 'sales'" in figure.text and "2 vertical bars" in figure.text
    assert figure.images == ()  # a PNG only for a model that sees images
    pictured = session.call("get_figure", {}, images=True)
    assert pictured.ok and len(pictured.images) == 1
    assert pictured.images[0].startswith("data:image/png;base64,")
    picture = session.picture()
    assert "Open figures (matplotlib): 1 'sales' (1 axes)" in picture
    assert kernel_eval(session, "len(built)") == "0"  # nothing was computed
    assert kernel_eval(session, "conn.in_transaction") == "True"  # the user's transaction is theirs


def test_a_third_party_adapter_describes_its_library_in_the_kernel(data_kernel):
    session = data_kernel
    assert session.run("import demo_sensors\nprobe = demo_sensors.Sensor('probe-7', 'V', [1.5, 2.5])").ok
    listed = session.call("list_globals", {})
    assert listed.ok and "probe: Sensor 'probe-7': 2 readings in V" in listed.text
    shown = session.call("get_repr", {"expr": "probe"})
    assert shown.ok and "latest reading: 2.5 V" in shown.text
    assert kernel_eval(session, "probe.round_trips") == "0"  # described by the adapter, in the kernel
    assert "demo_sensors  [plugin pyaichat-demo-plugin]" in session.tools().adapters  # the kernel's, by wire
