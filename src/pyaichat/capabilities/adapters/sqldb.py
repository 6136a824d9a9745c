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
from .protocol import KEY_SEP, Catalog, Result, Table, key_parts  # noqa: F401  (the adapters take them here)

MAX_TABLES = 20  # described with their columns at sample (60 at full); the rest are counted
RESULT_BYTES = 16 * 2**20  # what one query may bring into the person's process (and SQLite's largest value)
CELL_CHARS = 1_000  # what a cell keeps of a long value (the table shows at most 40 characters of it)


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
    if result.cut:
        head += f" (cut at {RESULT_BYTES // 2**20} MB of values: the rows after these were not read)"
    lines = [f"{head}; read-only: {result.held_by}"]
    if result.columns:
        lines += table(result.columns, result.rows, max(lvl, SAMPLE), max_cols=20, masked=result.masked)
    return lines


Fetched = tuple[list[str], list[tuple[Any, ...]], bool, bool]  # columns, rows, more exist, cut by size


def fetch(cursor: Any, limit: int, value_bytes: int = CELL_CHARS) -> Fetched:
    """Columns, up to ``limit`` rows, whether more exist and whether the size budget cut them, from a DB-API
    cursor that ran a statement (``value_bytes``: the longest one value may be as the driver gives it)."""
    columns = [str(d[0]) for d in (cursor.description or [])]
    if not columns:
        return [], [], False, False
    return (columns, *take_rows(cursor.fetchmany, limit, len(columns), value_bytes))


def take_rows(
    next_rows: Callable[[int], Any], limit: int, width: int, value_bytes: int = CELL_CHARS
) -> tuple[list[tuple[Any, ...]], bool, bool]:
    """Up to ``limit`` rows of ``width`` columns, asked as many at a time as fit the budget with every cell
    at its longest (``value_bytes``: SQLite's length limit for this statement, ``CELL_CHARS`` where the
    database cuts values itself), and counted in bytes as they come: reading stops at ``RESULT_BYTES``, and
    each long value is cut to ``CELL_CHARS`` once read."""
    step = max(1, min(limit + 1, RESULT_BYTES // (max(width, 1) * (value_bytes + 48))))
    rows: list[tuple[Any, ...]] = []
    size = 0
    while len(rows) <= limit:
        batch = next_rows(min(step, limit + 1 - len(rows)))
        if not batch:
            break
        for row in batch:
            kept = tuple(_clipped(value) for value in row)
            size += sum(_size(value) for value in kept)
            rows.append(kept)
        if size > RESULT_BYTES and len(rows) <= limit:
            return rows, False, True
    return rows[:limit], len(rows) > limit, False


def _clipped(value: Any) -> Any:
    if isinstance(value, str) and len(value) > CELL_CHARS:
        return value[:CELL_CHARS] + "…"
    if isinstance(value, (bytes, bytearray)) and len(value) > CELL_CHARS:
        return bytes(value[:CELL_CHARS]) + b"..."
    return value


def _size(value: Any, depth: int = 0) -> int:
    """Roughly what a fetched value weighs (a container: its first items, a few levels down)."""
    if isinstance(value, (str, bytes, bytearray)):
        return len(value) + 48
    if isinstance(value, (list, tuple, set, frozenset, dict)) and depth < 4:
        items = list(value.items() if isinstance(value, dict) else value)[:1_000]
        return 64 + sum(_size(item, depth + 1) for item in items)
    return 32


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
