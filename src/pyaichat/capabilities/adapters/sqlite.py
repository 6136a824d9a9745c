"""sqlite3: a connection is described by its database's tables and views; ``query_sql`` reads it through a
read-only connection of our own.

The user's ``sqlite3.Connection`` is never used: it may hold an open transaction (their uncommitted rows), its
cursors have positions, and by default it refuses every other thread. The file it opened is read from SQLite
itself (``sqlite3_db_filename`` on the connection's handle, through ctypes: the Python object does not keep
it), and a second connection opens that file with ``mode=ro`` plus ``PRAGMA query_only``, so SQLite refuses
any write; a progress handler stops a query at the deadline. An in-memory database exists only inside the
user's connection: it is copied with ``backup`` when that connection allows other threads, else it cannot be
reached and the summary says so.
"""

from __future__ import annotations

import _sqlite3
import ctypes
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from typing import Any
from urllib.parse import quote

from ...errors import CapabilityError
from .common import SCHEMA, isinstance_of
from .protocol import DatabaseAdapter
from .sqldb import (
    MAX_TABLES,
    RESULT_BYTES,
    Catalog,
    QueryRefused,
    Result,
    Table,
    catalog_lines,
    fetch,
    key_parts,
    names_line,
    tables_for,
)

_MEMORY_COPY_LIMIT = 64 * 2**20  # bytes of an in-memory database copied to read it


def _is_connection(value: Any) -> bool:
    return isinstance_of(value, "sqlite3", "Connection")


# -- which file ----------------------------------------------------------------------------------------------
_db_filename: Any = None
_layout_ok: bool | None = None


def _handle(conn: Any) -> int | None:
    """The ``sqlite3*`` of a connection: the first field after the object header in CPython's struct."""
    return ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value


def _check_layout() -> bool:
    """Prove once, on a connection of our own to a known file, that the handle is where we read it."""
    global _db_filename, _layout_ok
    if _layout_ok is None:
        _layout_ok = False
        try:
            func = ctypes.CDLL(_sqlite3.__file__).sqlite3_db_filename
            func.restype, func.argtypes = ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_char_p]
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.realpath(os.path.join(tmp, "probe.db"))
                probe = _connect()(path)
                try:
                    handle = _handle(probe)
                    _layout_ok = bool(handle) and func(handle, b"main") == path.encode()
                finally:
                    probe.close()
            _db_filename = func
        except Exception:
            _layout_ok = False
    return _layout_ok


def filename(conn: Any) -> str | None:
    """The main database's file ("" for an in-memory one), ``None`` when closed or unknown."""
    if not _check_layout():
        return None
    handle = _handle(conn)
    if not handle:
        return None  # closed
    name = _db_filename(handle, b"main")
    return None if name is None else os.fsdecode(name)


# -- a read-only connection of our own -----------------------------------------------------------------------
def _connect() -> Any:
    """SQLite's own ``connect`` (``database_here.sqlite_connect``: ``sqlite3.connect`` may be replaced)."""
    from ..database_here import sqlite_connect

    return sqlite_connect()


def open_reader(conn: Any, timeout: float = 0.2) -> sqlite3.Connection:
    """A new read-only connection to the same database (``CapabilityError`` when that is impossible)."""
    name = filename(conn)
    if name is None:
        raise CapabilityError("The sqlite3 connection is closed (or its database file cannot be found).")
    return open_file_reader(name, timeout) if name else _read_only(_memory_copy(conn))


def open_file_reader(path: str, timeout: float = 0.2) -> sqlite3.Connection:
    """A read-only connection of ours to the database file ``path`` (``mode=ro``, ``query_only``)."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        raise CapabilityError(
            f"The SQLite database {os.path.basename(path)} cannot be read ({exc.strerror})."
        )
    if not regular:  # a FIFO or a device would hold the reading thread forever
        raise CapabilityError(
            f"{os.path.basename(path)} is not a regular file, so it is not read as a database."
        )
    uri = "file:" + _quote(path) + "?mode=ro"
    try:
        reader = _connect()(uri, uri=True, timeout=timeout, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CapabilityError(f"The SQLite database {os.path.basename(path)} cannot be opened ({exc}).")
    return _read_only(reader)


def _read_only(reader: Any) -> Any:
    reader.execute("PRAGMA query_only = ON")
    bound_values(reader)
    return reader


def bound_values(conn: Any) -> None:
    """SQLite refuses to make or read any value longer than ``RESULT_BYTES`` (``zeroblob(300000000)`` grew
    the person's process by 0.9 GB): with the rows' own budget, that is the most one query holds. Python
    3.10's ``sqlite3`` has no ``setlimit``: there the bound is SQLite's own (1 GB a value), as the README
    says."""
    setlimit = getattr(conn, "setlimit", None)
    if setlimit is not None:
        setlimit(getattr(sqlite3, "SQLITE_LIMIT_LENGTH", 0), RESULT_BYTES)


def bound_row(conn: Any, sql: str) -> int:
    """Before ``sql`` runs: lower SQLite's value length so that one whole row fits ``RESULT_BYTES`` (the
    bound is per value: forty ``zeroblob(16000000)`` columns were 1.3 GB in one row), and return the
    per-value bound ``fetch`` asks rows by. The width is read with ``LIMIT 0`` (no row is made); a statement
    that cannot be read so counts as SQLite's widest (2,000 columns)."""
    width = 2_000
    if not sql.lstrip()[:7].upper().startswith("EXPLAIN"):
        try:
            width = max(len(conn.execute(f"SELECT * FROM ({sql}) LIMIT 0").description or ()), 1)
        except sqlite3.Error:
            pass
    per_value = max(RESULT_BYTES // width, 1)
    setlimit = getattr(conn, "setlimit", None)
    if setlimit is not None:
        setlimit(getattr(sqlite3, "SQLITE_LIMIT_LENGTH", 0), per_value)
    return per_value


def too_big(error: BaseException) -> CapabilityError | None:
    """The sentence for SQLite's refusal of a value past ``bound_values`` (``None`` for any other error)."""
    inner = getattr(error, "orig", None) or error
    if getattr(inner, "sqlite_errorname", "") != "SQLITE_TOOBIG":
        return None
    return CapabilityError(
        f"A value of the query is longer than {RESULT_BYTES // 2**20} MB shared among the columns of its "
        "row, the most query_sql lets SQLite make or read."
    )


def _quote(path: str) -> str:
    return quote(path, safe="/")


def _memory_copy(conn: Any) -> sqlite3.Connection:
    """A copy of the person's in-memory database, made with ``backup`` (pages copied, no statement run on
    their connection: a statement would call their row factory, trace, authorizer or progress handler)."""
    if conn.in_transaction:  # a backup would wait for the user's own open transaction forever
        raise CapabilityError(
            "The in-memory database has an open transaction (uncommitted changes), so it cannot be copied "
            "for reading without touching that transaction."
        )
    size = _memory_used(conn)
    if size is None or size > _MEMORY_COPY_LIMIT:
        raise CapabilityError("The in-memory database is too large to copy for reading (over 64 MB).")
    copy = _connect()(":memory:", check_same_thread=False)
    try:
        conn.backup(copy)  # refused at once, before any page is read, from a thread the connection refuses
    except sqlite3.ProgrammingError:
        copy.close()
        raise CapabilityError(
            "This sqlite3 connection holds an in-memory database and only lets its own thread use it, so "
            "the assistant cannot read it (a database file, or check_same_thread=False, would let it)."
        ) from None
    return copy


def _memory_used(conn: Any) -> int | None:
    """The bytes of page cache the connection holds (an in-memory database is all there), read through
    SQLite's C API on its handle (``sqlite3_db_status``), or ``None`` when it cannot be read."""
    if not _check_layout():
        return None
    try:
        status = ctypes.CDLL(_sqlite3.__file__).sqlite3_db_status
        status.restype = ctypes.c_int
        status.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_int,
        ]
        current, highest = ctypes.c_int(0), ctypes.c_int(0)
        handle = _handle(conn)
        if (
            not handle or status(handle, 1, ctypes.byref(current), ctypes.byref(highest), 0) != 0
        ):  # CACHE_USED
            return None
        return int(current.value)
    except (AttributeError, OSError):
        return None


# -- catalog and query ---------------------------------------------------------------------------------------
_names_cache: dict[str, tuple[tuple[Any, ...], tuple[list[str], int]]] = {}


def _stamp(path: str) -> tuple[Any, ...]:
    """What changes when the database's committed schema may have changed: the file's and its WAL's stat."""
    out: list[Any] = []
    for name in (path, path + "-wal"):
        try:
            st = os.stat(name)
            out += [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            out.append(None)
    return tuple(out)


def _names(conn: Any) -> tuple[list[str], int]:
    """The first table names and how many there are: cached per file until the file changes (opening a
    connection parses the whole schema: ~10 ms at 500 tables, too much for every question)."""
    path = filename(conn)
    stamp = _stamp(path) if path else None
    if path and stamp is not None:
        hit = _names_cache.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    answer = _read_names(conn)
    if path and stamp is not None:
        if len(_names_cache) > 64:
            _names_cache.clear()
        _names_cache[path] = (stamp, answer)
    return answer


def _read_names(conn: Any) -> tuple[list[str], int]:
    with closing(open_reader(conn, timeout=0.05)) as reader:
        rows = reader.execute(
            "SELECT name, count(*) OVER () FROM sqlite_master WHERE type IN ('table','view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 6"
        ).fetchall()
    return [n for n, _ in rows], (rows[0][1] if rows else 0)


def _where(conn: Any) -> str:
    name = filename(conn)
    if name is None:
        return "closed"
    return os.path.basename(name) if name else "an in-memory database"


def read_relations(reader: Any, keys: set[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Columns of the named tables and views, and the views' ``CREATE VIEW`` text (a connection of ours), by
    ``sqllineage.relation_key``: ``name`` or ``main.name`` (a connection of ours has no other schema with
    tables; any other key is left out, its columns unknown)."""
    columns: dict[str, list[str]] = {}
    views: dict[str, str] = {}
    wanted: dict[str, list[str]] = {}
    for key in keys:
        parts = key_parts(key)
        if len(parts) == 1 or (len(parts) == 2 and parts[0] == "main"):
            wanted.setdefault(parts[-1], []).append(key)
    rows = reader.execute(
        "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')"
    ).fetchall()
    for name, kind, sql in rows:
        for key in wanted.pop(name.lower(), []):
            cols = reader.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
            columns[key] = [c for (c,) in cols]
            if kind == "view":
                views[key] = sql or ""
    for name, left in wanted.items():  # SQLite's own tables (sqlite_master …) are not in sqlite_master
        cols = reader.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
        for key in left:
            if cols:
                columns[key] = [c for (c,) in cols]
    return columns, views


# -- through a connection of ours (to the person's connection's file, or one a SQLAlchemy URL names) ------
def catalog_via(opener: Callable[[], Any], max_tables: int) -> Catalog:
    with closing(opener()) as reader:
        entries = reader.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        tables = []
        for name, kind in entries[:max_tables]:
            cols = reader.execute("SELECT name, type FROM pragma_table_info(?)", (name,)).fetchall()
            tables.append(Table(name, kind, [(c, t or "any") for c, t in cols]))
    return Catalog(tables, len(entries))


def query_via(opener: Callable[[], Any], sql: str, limit: int, timeout: float) -> Result:
    deadline = time.monotonic() + timeout
    with closing(opener()) as reader:
        reader.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        try:
            per_value = bound_row(reader, sql)
            cur = reader.execute(sql)
            columns, rows, more, cut = fetch(cur, limit, per_value)
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
                raise CapabilityError(
                    f"The query was stopped by SQLite after {timeout:g} s (the tool deadline)."
                ) from None
            raise too_big(exc) or QueryRefused("SQLite", exc) from None
    held = "a separate read-only connection (mode=ro, query_only)"
    return Result(columns, rows, more, held, cut=cut)


# -- the adapter ---------------------------------------------------------------------------------------------
class SqliteAdapter(DatabaseAdapter):
    """sqlite3 connections (and their cursors, which are never read)."""

    def is_database(self, value: Any) -> bool:
        return _is_connection(value)

    def catalog(self, value: Any, max_tables: int = MAX_TABLES, timeout: float = 2.0) -> Catalog:
        return catalog_via(lambda: open_reader(value), max_tables)

    def dialect(self, value: Any) -> str:
        return "sqlite"

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        with closing(open_reader(value)) as reader:
            return read_relations(reader, names)

    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        return query_via(lambda: open_reader(value), sql, limit, timeout)

    def one_line(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "sqlite3", "Cursor"):
            return "sqlite3 Cursor (never read by the assistant: its position is kept)"
        if not _is_connection(value):
            return None
        where = _where(value)
        if where == "closed":
            return "sqlite3 Connection (closed)"
        try:
            names, total = _names(value)
        except (CapabilityError, sqlite3.Error):
            if where == "an in-memory database":
                return f"sqlite3 Connection to {where} (not reachable from the assistant)"
            return f"sqlite3 Connection to {where} (get_repr lists its tables)"
        return f"sqlite3 Connection to {where}: {names_line(names, total)} (query_sql reads it)"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_connection(value):
            return None
        name = filename(value)
        where = "closed" if name is None else (name or "in memory (:memory:)")
        return [f"database: {where}", "tables: get_repr lists them with their columns; query_sql reads rows"]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_connection(value):
            return self.one_line(value, lvl)
        head = f"sqlite3 Connection to {_where(value)}"
        try:
            cat = self.catalog(value, tables_for(lvl))
        except (CapabilityError, sqlite3.Error) as exc:
            return f"{head}\ntables: not readable ({exc})"
        hint = "query_sql(connection, sql) runs one read-only SELECT" if lvl > SCHEMA else ""
        return "\n".join([head, *catalog_lines(cat, lvl), hint]).rstrip()
