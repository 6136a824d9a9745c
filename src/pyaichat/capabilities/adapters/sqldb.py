"""What the database adapters share: the catalog they describe, the result of a query, and a deadline that
interrupts the database (not the Python thread).

Every database adapter (``sqlite``, ``duckdb``, ``sqlalchemy``, ``psycopg``) is a ``DatabaseAdapter``
(``protocol``): besides describing its connections it reads their ``catalog`` (tables and views with their
columns and types) and runs one checked ``query``, both through a connection of its own that the database
itself holds read-only, interrupted at the deadline and always rolled back; the user's connection, its open
transaction and its cursors are never touched.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import CapabilityError
from .common import FULL, SAMPLE, table
from .protocol import Catalog, Result, Table  # noqa: F401  (the database adapters take them from here)

MAX_TABLES = 20  # described with their columns at sample (60 at full); the rest are counted


def tables_for(lvl: int) -> int:
    return 60 if lvl >= FULL else MAX_TABLES


MAX_COLUMNS = 15


def catalog_lines(cat: Catalog, lvl: int) -> list[str]:
    """``tables (N):`` then one line per table: name, kind, columns with types (bounded)."""
    head = f"{cat.total:,} {'table or view' if cat.total == 1 else 'tables and views'}" + (
        f" in {cat.where}" if cat.where else ""
    )
    lines = [head + (":" if cat.tables else " (none)")]
    max_cols = 40 if lvl >= FULL else MAX_COLUMNS
    for t in cat.tables:
        cols = ", ".join(f"{c} {k}" for c, k in itertools.islice(t.columns, max_cols))
        more = f", … {len(t.columns) - max_cols} more" if len(t.columns) > max_cols else ""
        kind = " (view)" if t.kind == "view" else ""
        rows = f" {t.rows}" if t.rows else ""
        lines.append(f"  {t.name}{kind}{rows}: {cols}{more}")
    if cat.total > len(cat.tables):
        lines.append(f"  … {cat.total - len(cat.tables):,} more (query_sql can list them from the catalog)")
    return lines


def names_line(names: list[str], total: int, limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return (
        f"{total:,} {'table/view' if total == 1 else 'tables/views'}"
        + (f": {shown}" if shown else "")
        + (", …" if total > limit else "")
    )


def result_lines(result: Result, lvl: int) -> list[str]:
    n = len(result.rows)
    head = f"{n:,} row{'s' if n != 1 else ''}" + (
        " (row limit reached: more rows exist)" if result.more else ""
    )
    lines = [f"{head}; read-only: {result.held_by}"]
    if result.columns:
        lines += table(result.columns, result.rows, max(lvl, SAMPLE), max_cols=20, masked=result.masked)
    return lines


def fetch(cursor: Any, limit: int) -> tuple[list[str], list[tuple[Any, ...]], bool]:
    """Columns, up to ``limit`` rows and whether more exist, from a DB-API cursor that ran a statement."""
    columns = [str(d[0]) for d in (cursor.description or [])]
    if not columns:
        return [], [], False
    rows = [tuple(r) for r in cursor.fetchmany(limit + 1)]
    return columns, rows[:limit], len(rows) > limit


@contextmanager
def interrupt_after(timeout: float, interrupt: Callable[[], Any]) -> Iterator[threading.Event]:
    """Call ``interrupt()`` (the database's own cancel) if the block is still running after ``timeout``
    seconds; the event tells whether it fired."""
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        try:
            interrupt()
        except Exception:
            pass

    timer = threading.Timer(timeout, fire)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


class QueryRefused(CapabilityError):
    """The database refused a query. Its text says only the error's kind: a driver's message quotes the
    value it failed on (``Could not convert string 'hunter2…' to INT32``, ``invalid input syntax for type
    integer: "hunter2…"``), so ``query_sql`` shows ``detail`` only for a query that reads no secret column."""

    def __init__(self, engine: str, error: BaseException) -> None:
        self.engine = engine
        self.kind = error_kind(error)
        inner = getattr(error, "orig", None) or error
        self.detail = f"{engine} refused the query: {str(inner).strip() or self.kind}"
        super().__init__(f"{engine} refused the query ({self.kind}).")

    def hidden(self, secret: str) -> str:
        """The sentence for a query that reads ``secret``: the error's kind, never its text."""
        return (
            f"{self.engine} refused the query ({self.kind}); its message is not shown because the query "
            f"reads the secret column {secret}, and a database's error message can quote the value it "
            "failed on."
        )


def error_kind(error: BaseException) -> str:
    """What kind of error a driver raised, from its class and code alone (never its message):
    ``invalid text representation, SQLSTATE 22P02``, ``conversion error``, ``SQLITE_ERROR``."""
    inner = getattr(error, "orig", None) or error  # SQLAlchemy wraps the driver's own
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", type(inner).__name__).lower()
    words = re.sub(r" (exception|error)$", "", words) + " error"
    code = getattr(inner, "sqlstate", None) or getattr(inner, "pgcode", None)
    if code:
        return f"{words}, SQLSTATE {code}"
    name = getattr(inner, "sqlite_errorname", None)
    return f"{words}, {name}" if name else words


def stopped(timeout: float) -> CapabilityError:
    return CapabilityError(f"The query was stopped by the database after {timeout:g} s (the tool deadline).")
