"""pandas: DataFrame, Series and Index, from their shape and dtypes; a few head/tail rows at ``sample``.

The one line and the details (the session picture, ``list_globals``, ``get_type``) and an index's labels
are read from where pandas stores them (``library_metadata``): no code of pandas' runs, so nothing it would
call back (an element's ``__repr__``, an extension dtype of the session's, ``attrs``) can. Rows are
printed by pandas, which runs object cells' own ``__repr__``: that is done in the walled child only
(``summary_here.here`` sends a frame's description there), under ``guarded``. A layout the metadata reader
does not know (an extension array from elsewhere) is described by pandas' own attributes — also only in the
child, for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import library_metadata as meta
from ..deadline import failure, safe
from ..redact import REDACTED
from ..structural import NotStructural, is_plain
from ..text import type_name
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
        try:
            return _metadata_line(value)
        except NotStructural:  # a layout read by pandas' own code (in the walled child only)
            pass
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
        try:
            return _metadata_details(value)
        except NotStructural:
            pass
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
        if meta.kind(value) == "Index":
            try:
                return _describe_index(value, lvl)
            except NotStructural:
                return None
        return None


# -- from the stored metadata (``library_metadata``) ---------------------------------------------------------
def _metadata_line(value: Any) -> str | None:
    kind = meta.kind(value)
    if kind == "DataFrame":
        rows, cols = meta.metadata(value, "shape")
        return f"DataFrame {rows:,}×{cols}: {columns_inline(_columns(value, 8), cols)}"
    if kind == "Series":
        name = meta.metadata(value, "name")
        shown = f" {name!r}" if name is not None and is_plain(name) else ""
        return f"Series{shown}, {meta.metadata(value, 'shape')[0]:,} values, dtype {_dtype(value)}"
    if kind == "Index":
        entries = meta.metadata(value, "shape")[0]
        return f"{type(value).__name__}, {entries:,} entries, dtype {_dtype(value)}"
    raise NotStructural("not one of pandas' own frames, series or indexes")


def _metadata_details(value: Any) -> list[str]:
    kind = meta.kind(value)
    if kind == "DataFrame":
        rows, cols = meta.metadata(value, "shape")
        block = columns_block(_columns(value, 100), cols, 100)
        return [f"shape: {rows:,} rows × {cols:,} columns", "dtypes:", "\n".join(block)]
    if kind in ("Series", "Index"):
        return [f"shape: {meta.metadata(value, 'shape')}, dtype: {_dtype(value)}"]
    raise NotStructural("not one of pandas' own frames, series or indexes")


def _dtype(value: Any) -> str:
    return meta.dtype_text(meta.metadata(value, "dtype"))


def _columns(frame: Any, most: int) -> list[tuple[str, str]]:
    """(label, dtype) of the first ``most`` columns; a label that is an object of the session's is named
    by its type."""
    labels = meta.index_labels(meta.metadata(frame, "columns"), most, plain=False)
    dtypes = meta.frame_dtypes(frame)
    return [(_label(label), meta.dtype_text(dtype)) for label, dtype in zip(labels, dtypes, strict=False)]


def _label(label: Any) -> str:
    return str(label) if is_plain(label) else f"<{type_name(label)}>"


def _describe_index(index: Any, lvl: int) -> str:
    """An index by its labels (plain strings or numbers only), as pandas would list them."""
    entries = meta.metadata(index, "shape")[0]
    head = f"{type(index).__name__}: {entries:,} entries, dtype {_dtype(index)}"
    if lvl < SAMPLE or not entries:
        return head
    most = 20 if lvl >= FULL else 10
    labels = meta.index_labels(index, most)
    more = f", … {entries - len(labels):,} more" if entries > len(labels) else ""
    name = meta.metadata(index, "name")
    named = f", name={name!r}" if name is not None and is_plain(name) else ""
    return f"{head}\nlabels: [{', '.join(map(repr, labels))}{more}]{named}"


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
