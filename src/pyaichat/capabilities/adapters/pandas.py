"""pandas: DataFrame, Series and Index, from their shape and dtypes; a few head/tail rows at ``sample``.

Eager objects (the data is in memory), so ``shape``, ``dtypes`` and ``len`` are metadata. Object cells run
their own ``__repr__`` when rows are printed: those rows are printed under ``guarded``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..deadline import failure, safe
from ..redact import REDACTED
from .common import FULL, SAMPLE, SCHEMA, columns_block, columns_inline, isinstance_of, secret
from .protocol import Adapter


def is_dataframe(value: Any) -> bool:
    return isinstance_of(value, "pandas", "DataFrame")


def is_series(value: Any) -> bool:
    return isinstance_of(value, "pandas", "Series")


def is_index(value: Any) -> bool:
    return isinstance_of(value, "pandas", "Index")


class PandasAdapter(Adapter):
    """DataFrame, Series and Index."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if is_dataframe(value):
            rows, cols = value.shape
            return f"DataFrame {rows:,}×{cols}: {columns_inline(value.dtypes.items(), cols)}"
        if is_series(value):
            name = f" {value.name!r}" if value.name is not None else ""
            return f"Series{name}, {len(value):,} values, dtype {value.dtype}"
        if is_index(value):
            return f"{type(value).__name__}, {len(value):,} entries, dtype {value.dtype}"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if is_dataframe(value):
            rows, cols = value.shape
            return [f"shape: {rows:,} rows × {cols:,} columns", "dtypes:", frame_columns(value, 100)]
        if is_series(value) or is_index(value):
            return [f"shape: {value.shape}, dtype: {value.dtype}"]
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        if is_dataframe(value):
            return _describe_frame(value, lvl)
        if is_series(value):
            return _describe_series(value, lvl)
        return None


def frame_columns(df: Any, max_cols: int) -> str:
    return "\n".join(columns_block(df.dtypes.items(), df.shape[1], max_cols))


def masked_table(part: Any) -> Any:
    """A copy of a few rows with the values of secret-named columns replaced."""
    hidden = [c for c in part.columns if secret(c)]
    if not hidden:
        return part
    part = part.copy()
    for col in hidden:
        part[col] = REDACTED
    return part


def _has_objects(dtypes: Any) -> bool:
    """Columns whose cells may be any Python object (their ``__repr__`` is user code). String and
    categorical-of-string columns are not: printing them runs no user code, and tracing would slow it 5x."""
    return any(_may_hold_objects(dtype) for dtype in dtypes)


def _may_hold_objects(dtype: Any) -> bool:
    if getattr(dtype, "name", "") == "category":
        return _may_hold_objects(dtype.categories.dtype)
    return getattr(dtype, "kind", "") == "O" and getattr(dtype, "name", "") not in ("str", "string")


def _with_cells_guarded(
    describe: Callable[[Any, int], str], obj: Any, dtypes: Any, lvl: int, cell: str, rows: str
) -> str:
    """Object cells run their own ``__repr__``: a sample of them runs guarded, and one that fails leaves the
    schema with a sentence saying why the ``rows`` are not shown."""
    if lvl >= SAMPLE and _has_objects(dtypes):
        fallback = failure(f"repr of a {cell}")
        return safe(
            lambda: describe(obj, lvl),
            lambda exc: describe(obj, SCHEMA) + f"\n{rows} not shown: {fallback(exc)}",
        )
    return describe(obj, lvl)


def _describe_frame(df: Any, lvl: int) -> str:
    return _with_cells_guarded(_describe_frame_unguarded, df, df.dtypes, lvl, "DataFrame cell", "rows")


def _describe_frame_unguarded(df: Any, lvl: int) -> str:
    rows, cols = df.shape
    full = lvl >= FULL
    out = [
        f"DataFrame: {rows:,} rows × {cols:,} columns",
        "columns (dtype):",
        frame_columns(df, 60 if full else 30),
    ]
    out.append(f"index: {type(df.index).__name__}, dtype {df.index.dtype}")
    if lvl >= SAMPLE and rows and cols:
        head, tail = (10, 5) if full else (5, 3)
        opts = {"max_cols": 20 if full else 12, "max_colwidth": 40 if full else 25, "show_dimensions": False}
        if rows <= head + tail:
            out += ["rows:", masked_table(df).to_string(**opts)]
        else:
            out += [f"first {head} rows:", masked_table(df.head(head)).to_string(**opts)]
            out += [f"last {tail} rows:", masked_table(df.tail(tail)).to_string(**opts)]
    return "\n".join(out)


def _describe_series(s: Any, lvl: int) -> str:
    return _with_cells_guarded(_describe_series_unguarded, s, [s.dtype], lvl, "Series value", "values")


def _describe_series_unguarded(s: Any, lvl: int) -> str:
    out = [f"Series {s.name!r}: {len(s):,} values, dtype {s.dtype}, index {type(s.index).__name__}"]
    if lvl >= SAMPLE and len(s):
        head, tail = (10, 5) if lvl >= FULL else (5, 3)
        if secret(s.name):
            out.append(f"values: {REDACTED}")
        elif len(s) <= head + tail:
            out.append(s.to_string(max_rows=head + tail))
        else:
            out += [f"first {head}:", s.head(head).to_string(), f"last {tail}:", s.tail(tail).to_string()]
    return "\n".join(out)
