"""SQLAlchemy: an Engine or Connection is described by its URL (password masked) without touching the
network; its tables are read, and ``query_sql`` runs, on a connection of our own that never comes from the
engine's pool.

A pool may hand out the person's own DBAPI connection: ``StaticPool`` (the usual recipe for sharing a SQLite
database between threads), ``SingletonThreadPool`` on the same thread, ``AssertionPool``, or a ``creator``
that returns one object. Reading through it would see their uncommitted rows, and the rollback that ends
every read would throw their work away. So the pool is never checked out: a fresh DBAPI connection is made
with the engine's own creator (its URL, ``connect_args`` and ``do_connect`` hooks), through an engine of ours
(``NullPool``, kept per engine) and closed after the call. A custom ``creator`` is called twice: if it
returns the same object both times it is the person's connection, and the read is refused in one sentence,
with nothing rolled back, committed or changed on it. On our connection the database holds the query
read-only as far as the dialect allows:

- PostgreSQL: ``SET TRANSACTION READ ONLY`` and ``SET LOCAL statement_timeout`` (the server cancels at the
  deadline);
- SQLite: ``PRAGMA query_only`` and a progress handler that interrupts at the deadline; an in-memory SQLite
  database lives only in the person's own connection and is not reached;
- MySQL/MariaDB: ``SET TRANSACTION READ ONLY``;
- any other dialect: ``sqlcheck`` and a rollback only (the answer says so).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import CapabilityError
from .common import SCHEMA, isinstance_of
from .protocol import DatabaseAdapter
from .psycopg import fetch_bounded, read_catalog, read_relations
from .sqldb import (
    MAX_TABLES,
    Catalog,
    QueryRefused,
    Result,
    Table,
    catalog_lines,
    fetch,
    stopped,
    tables_for,
)
from .sqlite import bound_row, bound_values, too_big


def _engine(value: Any) -> Any:
    if isinstance_of(value, "sqlalchemy.engine", "Engine"):
        return value
    if isinstance_of(value, "sqlalchemy.engine", "Connection"):
        return value.engine
    return None


def masked_url(engine: Any) -> str:
    return engine.url.render_as_string(hide_password=True)


def _memory_sqlite(engine: Any) -> bool:
    """An in-memory SQLite database made from the URL (a custom creator may connect anywhere)."""
    memory = engine.dialect.name == "sqlite" and engine.url.database in (None, "", ":memory:")
    return memory and _default_creator(getattr(engine.pool, "_creator", None))


def _default_creator(creator: Any) -> bool:
    """The creator ``create_engine`` makes from the URL (a fresh DBAPI connection each call)."""
    return getattr(creator, "__qualname__", "") == "create_engine.<locals>.connect" and getattr(
        creator, "__module__", ""
    ).startswith("sqlalchemy.")


def own_dbapi_connection(engine: Any) -> Any:
    """A DBAPI connection nobody else holds, made by the engine's creator outside its pool; refused when the
    creator hands out one shared object."""
    pool = engine.pool
    invoke = getattr(pool, "_invoke_creator", None)
    if invoke is None:
        raise CapabilityError(
            f"This SQLAlchemy engine's pool ({type(pool).__name__}) cannot open a separate connection, and "
            "the assistant never uses one you may hold."
        )
    try:
        first = invoke(None)
        if _default_creator(getattr(pool, "_creator", None)):
            return first
        second = invoke(None)
    except Exception as exc:
        raise CapabilityError(f"Could not connect to the database: {type(exc).__name__}: {exc}".strip())
    if first is second:
        raise CapabilityError(
            "This SQLAlchemy engine's creator returns the same connection every time (yours, with your "
            "transaction), so the assistant does not query through it: give it an engine that opens its own "
            "connections."
        )
    try:
        second.close()
    except Exception:
        pass
    return first


_own_engines: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _own_engine(engine: Any) -> Any:
    """An engine of ours beside the person's (``NullPool``: every connection a fresh one from
    ``own_dbapi_connection``, closed after use), kept per engine so the dialect is set up once."""
    own = _own_engines.get(engine)
    if own is None:
        import sqlalchemy  # deferred: never imported to check (the user's engine means it is loaded)
        from sqlalchemy.pool import NullPool

        ref = weakref.ref(engine)

        def create() -> Any:
            theirs = ref()
            if theirs is None:
                raise CapabilityError("The SQLAlchemy engine is gone.")
            return own_dbapi_connection(theirs)

        own = _own_engines[engine] = sqlalchemy.create_engine(engine.url, creator=create, poolclass=NullPool)
    return own


@contextmanager
def reader(engine: Any, timeout: float) -> Iterator[tuple[Any, str, Any]]:
    """A connection of our own (never from the engine's pool) in a read-only transaction:
    ``(connection, how it is held, -)``."""
    if _memory_sqlite(engine):
        raise CapabilityError(
            "This SQLAlchemy engine holds an in-memory SQLite database, which exists only in the user's own "
            "connection: the assistant cannot reach it."
        )
    deadline = time.monotonic() + timeout  # connecting counts: the database stops the query in time
    dialect = engine.dialect.name
    try:
        conn = _own_engine(engine).connect()
    except CapabilityError:
        raise
    except Exception as exc:
        inner = getattr(exc, "orig", None)
        if isinstance(inner, CapabilityError):
            raise inner from None
        raise CapabilityError(f"Could not connect to the database: {type(exc).__name__}: {exc}".strip())
    try:
        held = "a separate connection, rolled back (no read-only mode known for this database)"
        interrupt: Any = None
        if dialect == "postgresql":
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            left = max(int((deadline - time.monotonic()) * 1000), 1)
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {left}")
            held = "a separate connection in a READ ONLY transaction with statement_timeout, rolled back"
        elif dialect == "sqlite":
            sqlite_raw = conn.connection.driver_connection
            sqlite_raw.execute("PRAGMA query_only = ON")
            bound_values(sqlite_raw)
            sqlite_raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
            held = "a separate connection with PRAGMA query_only, rolled back"
        elif dialect in ("mysql", "mariadb"):
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            held = "a separate connection in a READ ONLY transaction, rolled back"
        yield conn, held, interrupt
    finally:
        try:
            conn.rollback()  # ours: nobody else holds this connection
        finally:
            conn.close()  # NullPool: the DBAPI connection is closed, never pooled


_ENGINES = {"postgresql": "PostgreSQL", "sqlite": "SQLite", "mysql": "MySQL", "mariadb": "MariaDB"}


def _stopped_by_deadline(error: BaseException) -> bool:
    """The database's own cancel at the deadline (SQLite's progress handler, PostgreSQL's
    ``statement_timeout``), told by the driver's error class and code, never by a value in its text."""
    inner = getattr(error, "orig", None) or error
    if getattr(inner, "sqlstate", None) == "57014" or getattr(inner, "pgcode", None) == "57014":
        return True
    return type(inner).__name__ == "OperationalError" and str(inner) == "interrupted"


# -- the adapter ---------------------------------------------------------------------------------------------
class SQLAlchemyAdapter(DatabaseAdapter):
    """SQLAlchemy engines and connections."""

    def is_database(self, value: Any) -> bool:
        return _engine(value) is not None

    def catalog(self, value: Any, max_tables: int = MAX_TABLES, timeout: float = 2.0) -> Catalog:
        engine = _engine(value)
        import sqlalchemy  # deferred: never imported to check (the user's engine means it is loaded)

        with reader(engine, timeout) as (conn, _, _):
            if engine.dialect.name == "postgresql":
                raw = conn.connection.driver_connection
                with raw.cursor() as cur:
                    return read_catalog(cur, max_tables)
            inspector = sqlalchemy.inspect(conn)
            names = [(n, "table") for n in inspector.get_table_names()]
            names += [(n, "view") for n in inspector.get_view_names()]
            names.sort()
            tables = []
            for name, kind in names[:max_tables]:
                cols = [(c["name"], str(c["type"])) for c in inspector.get_columns(name)]
                tables.append(Table(name, kind, cols))
        return Catalog(tables, len(names))

    def dialect(self, value: Any) -> str:
        from ..sqlcheck import dialect_of  # sqlcheck loads sqlglot: with the first query

        return dialect_of(_engine(value).dialect.name)

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        engine = _engine(value)
        import sqlalchemy  # deferred: never imported to check (the user's engine means it is loaded)

        with reader(engine, timeout) as (conn, _, _):
            if engine.dialect.name == "postgresql":
                with conn.connection.driver_connection.cursor() as cur:
                    return read_relations(cur, names)
            inspector = sqlalchemy.inspect(conn)
            columns: dict[str, list[str]] = {}
            views: dict[str, str] = {}
            view_names = set(inspector.get_view_names())
            for name in [*inspector.get_table_names(), *view_names]:
                if name.lower() not in names:  # bare names only: a schema-qualified key stays unknown
                    continue
                columns[name.lower()] = [c["name"] for c in inspector.get_columns(name)]
                if name in view_names:
                    try:
                        views[name.lower()] = str(inspector.get_view_definition(name) or "")
                    except Exception:
                        views[name.lower()] = ""
        return columns, views

    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        engine = _engine(value)
        with reader(engine, timeout) as (conn, held, _):
            try:
                # the driver's own cursor, without parameters: no driver reads '%' or ':x' as a placeholder
                cursor = conn.connection.driver_connection.cursor()
                try:
                    if engine.dialect.name == "postgresql":
                        columns, rows, more, cut = fetch_bounded(cursor.execute, cursor, sql, limit)
                    elif engine.dialect.name == "sqlite":
                        per_value = bound_row(conn.connection.driver_connection, sql)
                        cursor.execute(sql)
                        columns, rows, more, cut = fetch(cursor, limit, per_value)
                    else:
                        cursor.execute(sql)
                        columns, rows, more, cut = fetch(cursor, limit)
                finally:
                    cursor.close()
            except Exception as exc:
                if _stopped_by_deadline(exc):
                    raise stopped(timeout) from None
                raise too_big(exc) or QueryRefused(
                    _ENGINES.get(engine.dialect.name, "The database"), exc
                ) from None
        return Result(columns, rows, more, held, cut=cut)

    def one_line(self, value: Any, lvl: int) -> str | None:
        engine = _engine(value)
        if engine is None:
            return None
        if engine is value:
            pool = engine.pool
            status = getattr(pool, "checkedout", None)
            busy = f", {status()} connections checked out" if callable(status) else ""
            where = f"{masked_url(engine)} ({engine.dialect.name}{busy}; get_repr lists its tables)"
            return f"SQLAlchemy Engine {where}"
        state = "closed" if value.closed else ("in a transaction" if value.in_transaction() else "idle")
        return f"SQLAlchemy Connection to {masked_url(engine)} ({state}; get_repr lists its tables)"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        engine = _engine(value)
        if engine is None:
            return None
        return [
            f"url: {masked_url(engine)}",
            f"dialect: {engine.dialect.name} (driver {engine.dialect.driver})",
            "tables: get_repr lists them with their columns; query_sql reads rows",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        engine = _engine(value)
        if engine is None:
            return None
        head = (self.one_line(value, lvl) or "").split(" (")[0]
        try:
            cat = self.catalog(value, tables_for(lvl))
        except CapabilityError as exc:
            return f"{head}\ntables: not readable ({exc})"
        except Exception as exc:
            return f"{head}\ntables: not readable ({type(exc).__name__}: {exc})"
        hint = "query_sql(connection, sql) runs one read-only SELECT" if lvl > SCHEMA else ""
        return "\n".join([head, *catalog_lines(cat, lvl), hint]).rstrip()
