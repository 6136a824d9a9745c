"""Ibis: table expressions by schema — never executed (an Ibis table's repr in interactive mode runs the
query, so it is never called)."""

from __future__ import annotations

from typing import Any

from .common import LAZY, SAMPLE, columns_block, columns_inline, isinstance_of
from .protocol import Adapter


def _is_table(value: Any) -> bool:
    return isinstance_of(value, "ibis.expr.types", "Table")


def _fields(t: Any) -> list[tuple[str, str]]:
    schema = t.schema()
    return [(name, str(dtype)) for name, dtype in schema.items()]


class IbisAdapter(Adapter):
    """Ibis table expressions."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _is_table(value):
            return None
        cols = _fields(value)
        return f"Ibis Table ?×{len(cols)} ({LAZY}): {columns_inline(cols, len(cols))}"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_table(value):
            return None
        cols = _fields(value)
        return [f"rows: not counted ({LAZY})", "schema:", *columns_block(cols, len(cols), 100)]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_table(value):
            return None
        out = ["Ibis Table", *(self.details(value, lvl) or [])]
        if lvl >= SAMPLE:
            out.append("rows: none shown (the expression was not executed)")
        return "\n".join(out)
