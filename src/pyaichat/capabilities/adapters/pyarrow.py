"""pyarrow: Table, RecordBatch, arrays, schemas and datasets, from their schema and buffer metadata.

A ``pyarrow.dataset.Dataset`` is files on disk or in object storage: its schema and file list are metadata;
``count_rows()`` and ``head()`` read the files, so they are never called (``lazy: not scanned``). Tables and
batches are in memory: a few rows are sliced at ``sample`` (zero-copy).
"""

from __future__ import annotations

from typing import Any

from .common import (
    FULL,
    SAMPLE,
    cell,
    columns_block,
    columns_inline,
    isinstance_of,
    nbytes_text,
    sample_rows,
    table,
)
from .protocol import Adapter


def _fields(schema: Any) -> list[tuple[str, Any]]:
    return [(f.name, f.type) for f in schema]


def _kind(value: Any) -> str | None:
    for name in ("Table", "RecordBatch", "ChunkedArray", "Array", "Schema"):
        if isinstance_of(value, "pyarrow", name):
            return name
    if isinstance_of(value, "pyarrow.dataset", "Dataset"):
        return "Dataset"
    return None


def _files(dataset: Any) -> str:
    files = getattr(dataset, "files", None)
    return f"{len(files):,} files" if isinstance(files, list) else "source not listed"


class ArrowAdapter(Adapter):
    """Table, RecordBatch, arrays, schemas and datasets."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        kind = _kind(value)
        if kind in ("Table", "RecordBatch"):
            cols = _fields(value.schema)
            return f"pyarrow {kind} {value.num_rows:,}×{len(cols)}: {columns_inline(cols, len(cols))}"
        if kind in ("Array", "ChunkedArray"):
            return f"pyarrow {type(value).__name__}, {len(value):,} values of {value.type}"
        if kind == "Schema":
            cols = _fields(value)
            return f"pyarrow Schema, {len(cols)} fields: {columns_inline(cols, len(cols))}"
        if kind == "Dataset":
            cols = _fields(value.schema)
            where = f"{_files(value)}, not scanned"
            return f"pyarrow {type(value).__name__} ({where}): {columns_inline(cols, len(cols))}"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        kind = _kind(value)
        if kind in ("Table", "RecordBatch"):
            cols = _fields(value.schema)
            lines = [f"shape: {value.num_rows:,} rows × {len(cols):,} columns, {nbytes_text(value.nbytes)}"]
            if kind == "Table":
                lines.append(f"chunks: {value.column(0).num_chunks if cols else 0} per column")
            return [*lines, "schema:", *columns_block(cols, len(cols), 100)]
        if kind in ("Array", "ChunkedArray"):
            return [f"length: {len(value):,}, type: {value.type}, nulls: {value.null_count:,}"]
        if kind == "Schema":
            return columns_block(_fields(value), len(value), 100)
        if kind == "Dataset":
            cols = _fields(value.schema)
            fmt = getattr(getattr(value, "format", None), "default_extname", None)
            return [
                f"source: {_files(value)}" + (f", format {fmt}" if fmt else ""),
                "rows: not counted (count_rows() would read every file)",
                "schema:",
                *columns_block(cols, len(cols), 100),
            ]
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        kind = _kind(value)
        if kind in ("Table", "RecordBatch"):
            cols = _fields(value.schema)
            out = [f"pyarrow {kind}: {value.num_rows:,} rows × {len(cols):,} columns", "schema:"]
            out += columns_block(cols, len(cols), 60 if lvl >= FULL else 30)
            if lvl >= SAMPLE and value.num_rows:
                n = sample_rows(lvl)
                part = value.slice(0, n)
                rows = zip(*(column.to_pylist() for column in part.columns), strict=False)
                out += [
                    f"first {min(n, value.num_rows)} rows:",
                    *table([c for c, _ in cols], list(rows), lvl),
                ]
            return "\n".join(out)
        if kind in ("Array", "ChunkedArray"):
            nulls = f"{value.null_count:,} nulls"
            out = [f"pyarrow {type(value).__name__}: {len(value):,} values of {value.type}, {nulls}"]
            if lvl >= SAMPLE and len(value):
                n = sample_rows(lvl)
                shown = ", ".join(cell(v, 40) for v in value.slice(0, n).to_pylist())
                out.append(f"first {min(n, len(value))}: [{shown}{', …' if len(value) > n else ''}]")
            return "\n".join(out)
        if kind == "Schema":
            return "\n".join(["pyarrow Schema:", *columns_block(_fields(value), len(value), 100)])
        if kind == "Dataset":
            lines = self.details(value, lvl) or []
            files = getattr(value, "files", None)
            if lvl >= SAMPLE and isinstance(files, list) and files:
                lines += ["files:", *(f"  {f}" for f in files[:5])]
                if len(files) > 5:
                    lines.append(f"  … {len(files) - 5:,} more")
            return "\n".join([f"pyarrow {type(value).__name__} (not scanned: no rows are in memory)", *lines])
        return None
