"""SQLAlchemy: an Engine or Connection is described by its URL (password and query values masked); its tables
are read, and ``query_sql`` runs, on a connection of pyaichat's own opened from the URL's fields alone.

The engine is never used to connect — not its pool, not its creator, not its dialect. Connecting through it
runs code the session may have given it: a custom ``creator``, ``do_connect`` and class-level listeners,
``connect_args`` objects (a sqlite3 ``factory``), URL plugins, a DBAPI ``module=``, any SQLAlchemy method the
session patched; a pool may even hand out the person's own DBAPI connection, whose rollback would throw their
work away. So the URL's fields are read by structure (``sqlalchemy_url.plain_target``: exactly SQLAlchemy's
classes, exact strings) and a connection is opened from them through the driver's own entry point:

- SQLite (``sqlite``, ``sqlite+pysqlite``): the file, ``mode=ro`` and ``PRAGMA query_only``, a progress
  handler at the deadline (``adapters.sqlite``); an in-memory database lives only in the person's own
  connection and is not reached;
- PostgreSQL (``postgresql``, ``+psycopg``, ``+psycopg2``), through psycopg 3 when the session loaded it:
  ``default_transaction_read_only`` and ``statement_timeout`` (``adapters.psycopg``); the URL's query may add
  only libpq keywords that say where and how securely to connect.

Anything else — another dialect, a URL with a query key pyaichat does not know, an engine whose class or URL
is not SQLAlchemy's own — is described from its URL only, and ``query_sql`` does not reach it (in one
sentence). What the engine would add on top (``connect_args``, a creator) does not apply to pyaichat's
connection: a database that needs it answers "could not connect".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import CapabilityError
from ..sqlalchemy_url import PlainTarget, plain_target, shown_url
from . import psycopg as pg
from . import sqlite as lite
from .common import SCHEMA, isinstance_of
from .protocol import DatabaseAdapter
from .sqldb import MAX_TABLES, Catalog, Result, catalog_lines, tables_for

_UNREAD = (
    "the assistant reads a SQLAlchemy engine only when its URL plainly names a SQLite file or a PostgreSQL "
    "database (through psycopg 3), and opens its own connection from it"
)


def _sqlalchemy(value: Any) -> bool:
    """An Engine or Connection by its type's MRO (nothing of it read: a subclass may answer any attribute)."""
    return isinstance_of(value, "sqlalchemy.engine", "Engine", "Connection")


def _target(value: Any) -> PlainTarget:
    target = plain_target(value)
    if target is None:
        raise CapabilityError(f"Not read: {_UNREAD}.")
    if target.kind == "postgresql" and pg_module() is None:
        raise CapabilityError(
            "Not read: the PostgreSQL URL is read through psycopg 3, which is not loaded here."
        )
    return target


def pg_module() -> Any:
    from ..structural import loaded_module

    return loaded_module("psycopg")


def _opener(target: PlainTarget, timeout: float) -> Callable[[], Any]:
    if target.kind == "sqlite":
        return lambda: lite.open_file_reader(target.path, min(timeout, 2.0))
    return lambda: pg.connect_reader(dict(target.params), target.password, timeout)


def _kind(target: PlainTarget) -> str:
    return "PostgreSQL" if target.kind == "postgresql" else "SQLite"


# -- the adapter ---------------------------------------------------------------------------------------------
class SQLAlchemyAdapter(DatabaseAdapter):
    """SQLAlchemy engines and connections."""

    def is_database(self, value: Any) -> bool:
        return _sqlalchemy(value)

    def catalog(self, value: Any, max_tables: int = MAX_TABLES, timeout: float = 2.0) -> Catalog:
        target = _target(value)
        if target.kind == "sqlite":
            return lite.catalog_via(_opener(target, timeout), max_tables)
        return pg.catalog_via(_opener(target, timeout), max_tables)

    def dialect(self, value: Any) -> str:
        return "sqlite" if _target(value).kind == "sqlite" else "postgres"

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        target = _target(value)
        if target.kind == "sqlite":
            reader = _opener(target, timeout)()
            try:
                return lite.read_relations(reader, names)
            finally:
                reader.close()
        return pg.relations_via(_opener(target, timeout), names)

    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        target = _target(value)
        if target.kind == "sqlite":
            return lite.query_via(_opener(target, timeout), sql, limit, timeout)
        return pg.query_via(_opener(target, timeout), sql, limit, timeout)

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _sqlalchemy(value):
            return None
        target = plain_target(value)
        what = "Connection to" if isinstance_of(value, "sqlalchemy.engine", "Connection") else "Engine"
        if target is None:
            shown = shown_url(value)
            return f"SQLAlchemy {what}{' ' + shown if shown else ''} (not read: {_UNREAD})"
        return f"SQLAlchemy {what} {target.shown} ({_kind(target)}; get_repr lists its tables)"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _sqlalchemy(value):
            return None
        target = plain_target(value)
        if target is None:
            return [f"url: {shown_url(value) or 'not plain'}", f"tables: not read ({_UNREAD})"]
        return [
            f"url: {target.shown}",
            f"database: {_kind(target)}, read through a connection of the assistant's own",
            "tables: get_repr lists them with their columns; query_sql reads rows",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        head = (self.one_line(value, lvl) or "").split(" (")[0]
        if not head:
            return None
        try:
            cat = self.catalog(value, tables_for(lvl))
        except CapabilityError as exc:
            return f"{head}\ntables: not readable ({exc})"
        except Exception as exc:
            return f"{head}\ntables: not readable ({type(exc).__name__})"
        hint = "query_sql(connection, sql) runs one read-only SELECT" if lvl > SCHEMA else ""
        return "\n".join([head, *catalog_lines(cat, lvl), hint]).rstrip()
