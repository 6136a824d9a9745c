"""PySpark: DataFrames by schema and caching state — never ``count()``, ``collect()`` or ``show()``.

The schema is the analysed plan's (classic Spark keeps it on the driver; Spark Connect asks the server once,
a metadata call that runs no job). Partitions come from the RDD only on an explicit request (``get_type`` /
``get_repr``). No row is shown: taking even a few rows runs a job (``lazy: not computed``).
"""

from __future__ import annotations

from typing import Any

from .common import LAZY, SAMPLE, columns_block, columns_inline, isinstance_of
from .protocol import Adapter


def _is_frame(value: Any) -> bool:
    return isinstance_of(value, "pyspark.sql", "DataFrame")


def _fields(df: Any) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


def _cached(df: Any) -> str:
    try:
        return "cached" if df.is_cached else "not cached"
    except Exception:
        return "caching unknown"


def _partitions(df: Any) -> str:
    try:
        return f"{df.rdd.getNumPartitions():,}"
    except Exception:
        return "?"


class SparkAdapter(Adapter):
    """Spark DataFrames."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _is_frame(value):
            return None
        cols = _fields(value)
        return f"Spark DataFrame ?×{len(cols)} ({LAZY}, {_cached(value)}): {columns_inline(cols, len(cols))}"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_frame(value):
            return None
        cols = _fields(value)
        return [
            f"rows: not counted ({LAZY}; count() would run a Spark job)",
            f"partitions: {_partitions(value)}, {_cached(value)}",
            "schema:",
            *columns_block(cols, len(cols), 100),
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_frame(value):
            return None
        out = ["Spark DataFrame", *(self.details(value, lvl) or [])]
        if lvl >= SAMPLE:
            out.append("rows: none shown (taking rows runs a job)")
        return "\n".join(out)
