"""Frames and arrays of the other data libraries, described from metadata at every privacy level: lazy ones
never computed, collected, counted or loaded; values only from ``sample`` up; within the token budget."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from fakes.sent import approx_tokens
from pyaichat.capabilities import call
from pyaichat.capabilities.summary import describe, one_line, type_details
from pyaichat.configuration.config import Config
from pyaichat.session import Session

LEVELS = ("names", "schema", "sample", "full")


def everything(value, privacy: str) -> str:
    return "\n".join([one_line(value, privacy, 400), describe(value, privacy), *type_details(value, privacy)])


def within_budget(value) -> None:
    assert approx_tokens(describe(value, "sample")) <= 300
    assert approx_tokens(one_line(value, "sample")) <= 60


# -- Dask ----------------------------------------------------------------------------------------------------
def test_a_dask_frame_is_described_and_never_computed(partitions):
    ddf = partitions.frame(4)
    line = one_line(ddf)
    assert line.startswith("Dask DataFrame ?×3 (4 partitions, lazy: not computed): id int64, amount float64")
    text = describe(ddf)
    assert "rows: not known without computing" in text and "FromDelayed" in text
    assert "rows: none shown (lazy: not computed" in text
    details = "\n".join(type_details(ddf, "sample"))
    assert "partitions: 4" in details and "password: str" in details
    for privacy in LEVELS:
        everything(ddf, privacy)
        everything(ddf.amount, privacy)
        everything(ddf.set_index("id"), privacy)  # its divisions would need a job: not asked
        everything(ddf.sort_values("amount"), privacy)
    assert partitions.built == []
    within_budget(ddf)


def test_a_persisted_dask_frame_shows_rows_already_in_memory(partitions):
    ddf = partitions.frame(3).persist()
    built = list(partitions.built)
    text = describe(ddf)
    assert "persisted in memory" in one_line(ddf)
    assert "first 5 rows of partition 0 (already in memory)" in text and "<redacted>" in text
    assert "pw" not in text  # the secret-named column is masked
    assert "first 5 rows" not in describe(ddf, "schema")
    assert partitions.built == built  # nothing more was built


def test_a_dask_array_shows_shape_chunks_and_unknown_dimensions():
    da = pytest.importorskip("dask.array")
    x = da.ones((1000, 1000), chunks=(100, 100))
    assert one_line(x) == "Dask Array 1,000×1,000 float64, chunks 100×100 in 100 blocks (lazy: not computed)"
    filtered = x[x[:, 0] > 0]
    assert one_line(filtered).startswith("Dask Array ?×1,000 float64, chunks ?×100")
    assert "values: none shown" in describe(filtered)
    assert "[[1. 1. 1." in describe(x.persist())


# -- polars --------------------------------------------------------------------------------------------------
def test_a_polars_lazyframe_shows_schema_and_plan_and_is_never_collected():
    pl = pytest.importorskip("polars")
    calls: list[int] = []

    def udf(s):
        calls.append(1)
        return s

    lf = (
        pl.DataFrame({"a": range(1000), "b": [f"s{i}" for i in range(1000)]})
        .lazy()
        .filter(pl.col("a") > 500)
        .with_columns(pl.col("a").map_batches(udf, return_dtype=pl.Int64).alias("c"))
    )
    assert one_line(lf) == "polars LazyFrame ?×3 (lazy: not computed): a Int64, b String, c Int64"
    text = describe(lf)
    assert 'FILTER col("a") > 500' in text and "plan (not optimized, nothing run)" in text
    assert "FILTER" not in describe(lf, "schema") and "a: Int64" in describe(lf, "schema")
    for privacy in LEVELS:
        everything(lf, privacy)
    assert calls == []
    within_budget(lf)


def test_a_polars_frame_and_series_show_schema_then_rows():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"id": range(100), "name": [f"n{i}" for i in range(100)], "password": "pw"})
    assert one_line(df) == "polars DataFrame 100×3: id Int64, name String, password String"
    text = describe(df)
    assert "n0" in text and "n99" in text and "pw" not in text and "<redacted>" in text
    assert "n0" not in describe(df, "schema")
    assert "first 5: [0, 1, 2, 3, 4, …]" in describe(df["id"])
    within_budget(df)


# -- Arrow ---------------------------------------------------------------------------------------------------
def test_arrow_tables_batches_and_datasets(tmp_path):
    pa = pytest.importorskip("pyarrow")
    ds = pytest.importorskip("pyarrow.dataset")
    import pyarrow.parquet as pq

    table = pa.table({"id": list(range(50)), "token": ["t"] * 50})
    assert one_line(table) == "pyarrow Table 50×2: id int64, token string"
    assert "<redacted>" in describe(table) and "first 5 rows" in describe(table)
    assert "first 5 rows" not in describe(table, "schema")
    assert one_line(table.to_batches()[0]).startswith("pyarrow RecordBatch 50×2")
    pq.write_table(table, tmp_path / "part-0.parquet")
    dataset = ds.dataset(tmp_path)
    assert one_line(dataset) == "pyarrow FileSystemDataset (1 files, not scanned): id int64, token string"
    assert "count_rows() would read every file" in describe(dataset)
    within_budget(table)


# -- xarray --------------------------------------------------------------------------------------------------
def test_xarray_from_a_file_is_described_without_loading(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")
    da = xr.DataArray(
        np.arange(12.0).reshape(3, 4),
        dims=("time", "site"),
        coords={"time": [1, 2, 3]},
        name="temp",
        attrs={"units": "K", "api_key": "abc123"},
    )
    text = describe(da)
    assert "dims: time: 3, site: 4" in text and "units='K'" in text and "api_key=<redacted>" in text
    assert "[[ 0.  1.  2.  3.]" in text
    assert "units" in describe(da, "schema") and "'K'" not in describe(da, "schema")
    xr.Dataset({"temp": da}, attrs={"title": "demo"}).to_netcdf(tmp_path / "t.nc", engine="scipy")
    opened = xr.open_dataset(tmp_path / "t.nc", engine="scipy")
    assert "lazy: not loaded from its file" in one_line(opened["temp"])
    for privacy in LEVELS:
        everything(opened, privacy)
        everything(opened["temp"], privacy)
    assert "lazy: not loaded" in one_line(opened["temp"])  # still not loaded
    within_budget(opened)


# -- scipy.sparse --------------------------------------------------------------------------------------------
def test_a_sparse_matrix_is_never_densified():
    sp = pytest.importorskip("scipy.sparse")
    rows = np.arange(5000) * 20
    m = sp.csr_matrix((np.ones(5000), (rows, rows % 50_000)), shape=(100_000, 50_000))
    assert one_line(m) == "scipy sparse csr csr_matrix 100,000×50,000 float64, 5,000 stored"
    assert "first stored entries:" in describe(m) and "first stored entries" not in describe(m, "schema")
    within_budget(m)


# -- through the capabilities --------------------------------------------------------------------------------
def test_list_globals_and_get_type_over_lazy_objects_compute_nothing(partitions):
    pl = pytest.importorskip("polars")
    ddf = partitions.frame(4)
    session = Session({"ddf": ddf, "lf": pl.LazyFrame({"a": [1]}), "df": pd.DataFrame({"x": [1]})})
    session.settings.replace(Config(audit=False))
    listed = call(session, "list_globals", {}).text
    assert "ddf: Dask DataFrame ?×3 (4 partitions, lazy: not computed)" in listed
    assert "lf: polars LazyFrame ?×1 (lazy: not computed): a Int64" in listed
    result = call(session, "get_type", {"expr": "ddf"})
    assert result.ok and "rows: not known without computing every partition" in result.text
    assert call(session, "get_repr", {"expr": "ddf.amount"}).ok
    assert partitions.built == []


def test_looking_changes_no_lazy_or_stateful_object(tmp_path):
    """Generators, iterators, files and lazy frames keep their exact state."""
    pl = pytest.importorskip("polars")
    path = tmp_path / "data.txt"
    path.write_text("line 1\nline 2\nline 3\n")
    handle = open(path)  # noqa: SIM115 (the user's open file)
    handle.readline()
    gen = (i for i in range(5))
    next(gen)
    it = iter([1, 2, 3])
    lf = pl.LazyFrame({"a": [1, 2]}).filter(pl.col("a") > 1)
    plan = lf.explain(optimized=False)
    session = Session({"handle": handle, "gen": gen, "it": it, "lf": lf})
    session.settings.replace(Config(audit=False))
    for privacy in LEVELS:
        config = Config(audit=False, privacy=privacy)
        call(session, "list_globals", {}, config=config)
        for name in ("handle", "gen", "it", "lf"):
            for cap in ("get_type", "get_repr", "get_dir"):
                call(session, cap, {"expr": name}, config=config)
    assert handle.tell() == len("line 1\n") and handle.readline() == "line 2\n"
    assert next(gen) == 1 and next(it) == 1
    assert lf.explain(optimized=False) == plan
    handle.close()


def test_adapters_are_found_by_module_without_importing_anything():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        from pyaichat.capabilities.summary import one_line
        from pyaichat.capabilities.adapters import adapter_for
        import types
        class Frame: pass
        Frame.__module__ = "polars.dataframe.frame"  # a look-alike: found by module, imports nothing
        assert adapter_for(Frame()) is None  # but only where that module holds it (not a claim of its own)
        module = sys.modules["polars.dataframe.frame"] = types.ModuleType("polars.dataframe.frame")
        module.Frame = Frame
        assert type(adapter_for(type("Frame", (Frame,), {})())).__name__ == "PolarsAdapter"
        one_line(Frame()); one_line([1]); one_line(object())
        heavy = ("polars", "pandas", "numpy", "dask", "duckdb", "matplotlib")
        print(sorted(m for m in heavy if m in sys.modules))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_adapter_may_be_called_from_any_thread():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"a": [1, 2]})
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(describe(df)))
    worker.start()
    worker.join()
    assert out and "polars DataFrame: 2 rows" in out[0]
