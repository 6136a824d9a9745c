"""polars: DataFrame and Series (in memory) and LazyFrame (a query plan, never collected).

A LazyFrame's columns come from ``collect_schema()``, which resolves the plan's schema without running it
(for a scan that reads the file's header or footer, as polars does before any query). Its plan is
``explain(optimized=False)``: shown by ``get_repr`` from ``sample`` up (it holds the query's literals), in
full at ``full``. No row of a LazyFrame is ever shown: none is in memory (``lazy: not computed``).
"""

from __future__ import annotations

from typing import Any

from ..redact import REDACTED
from .common import (
    FULL,
    LAZY,
    SAMPLE,
    cell,
    columns_block,
    columns_inline,
    isinstance_of,
    nbytes_text,
    sample_rows,
    secret,
    table,
)
from .protocol import Adapter


def _kind(value: Any) -> str | None:
    for name in ("DataFrame", "LazyFrame", "Series"):
        if isinstance_of(value, "polars", name):
            return name
    return None


class PolarsAdapter(Adapter):
    """DataFrame, Series and LazyFrame."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        kind = _kind(value)
        if kind == "DataFrame":
            rows, cols = value.shape
            return f"polars DataFrame {rows:,}×{cols}: {columns_inline(value.schema.items(), cols)}"
        if kind == "LazyFrame":
            schema = value.collect_schema()
            return f"polars LazyFrame ?×{len(schema)} ({LAZY}): {columns_inline(schema.items(), len(schema))}"
        if kind == "Series":
            return f"polars Series {value.name!r}, {value.len():,} values, dtype {value.dtype}"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        kind = _kind(value)
        if kind == "DataFrame":
            rows, cols = value.shape
            return [
                f"shape: {rows:,} rows × {cols:,} columns, "
                f"about {nbytes_text(value.estimated_size())} in memory",
                "schema:",
                *columns_block(value.schema.items(), cols, 100),
            ]
        if kind == "LazyFrame":
            schema = value.collect_schema()
            return [
                f"rows: not known ({LAZY}; collect() would run the query)",
                "schema (resolved from the plan, nothing collected):",
                *columns_block(schema.items(), len(schema), 100),
                "plan: get_repr shows it",
            ]
        if kind == "Series":
            return [f"length: {value.len():,}, dtype: {value.dtype}, nulls: {value.null_count():,}"]
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        kind = _kind(value)
        if kind == "DataFrame":
            rows, cols = value.shape
            out = [f"polars DataFrame: {rows:,} rows × {cols:,} columns", "schema:"]
            out += columns_block(value.schema.items(), cols, 60 if lvl >= FULL else 30)
            if lvl >= SAMPLE and rows:
                n = sample_rows(lvl)
                out += [f"first {min(n, rows)} rows:", *table(value.columns, value.head(n).rows(), lvl)]
                if rows > n:
                    out += ["last 3 rows:", *table(value.columns, value.tail(3).rows(), lvl)]
            return "\n".join(out)
        if kind == "LazyFrame":
            schema = value.collect_schema()
            out = [f"polars LazyFrame ({LAZY}; rows are not known until collect())", "schema:"]
            out += columns_block(schema.items(), len(schema), 60 if lvl >= FULL else 30)
            if lvl >= SAMPLE:
                plan = value.explain(optimized=False).strip().splitlines()
                limit = 60 if lvl >= FULL else 12
                out.append("plan (not optimized, nothing run):")
                out += ["  " + line.rstrip()[:160] for line in plan[:limit]]
                if len(plan) > limit:
                    out.append(f"  … {len(plan) - limit} more lines")
            return "\n".join(out)
        if kind == "Series":
            out = [f"polars Series {value.name!r}: {value.len():,} values, dtype {value.dtype}"]
            if lvl >= SAMPLE and value.len():
                n = sample_rows(lvl)
                if secret(value.name):
                    out.append(f"values: {REDACTED}")
                else:
                    shown = ", ".join(cell(v, 40) for v in value.head(n).to_list())
                    out.append(f"first {min(n, value.len())}: [{shown}{', …' if value.len() > n else ''}]")
            return "\n".join(out)
        return None
