"""psycopg 3: a PostgreSQL connection is described from libpq's local connection info; its tables are read,
and ``query_sql`` runs, through a connection of our own that the server holds read-only.

The session picture asks nothing of the server (a network round trip per question is a cost of unknown size):
database, host, user and transaction state are local to libpq. ``get_repr`` and ``query_sql`` open a second
connection with the same parameters (the password from libpq, never shown) and
``default_transaction_read_only=on`` and ``statement_timeout`` set at connection time, so the server refuses
any write and cancels the query at the tool deadline; it is closed after every call. The user's connection,
its open transaction and its cursors are never used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import CapabilityError
from .common import SCHEMA, isinstance_of
from .protocol import DatabaseAdapter
from .sqldb import (
    CELL_CHARS,
    MAX_TABLES,
    Catalog,
    Fetched,
    QueryRefused,
    Result,
    Table,
    catalog_lines,
    key_parts,
    stopped,
    tables_for,
    take_rows,
)

CATALOG_SQL = """
SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type,
       (SELECT reltuples::bigint FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
         WHERE n.nspname = c.table_schema AND k.relname = c.table_name)
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND (c.table_schema, c.table_name) IN (
      SELECT table_schema, table_name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY table_schema, table_name LIMIT %(limit)s)
ORDER BY c.table_schema, c.table_name, c.ordinal_position
"""
COUNT_SQL = """
SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
"""


def _is_connection(value: Any) -> bool:
    return isinstance_of(value, "psycopg", "Connection", "AsyncConnection")


def _where(conn: Any) -> str:
    info = conn.info
    host = info.host or "local socket"
    if host.startswith("/"):
        host = "local socket"
    return f"{info.dbname}@{host}:{info.port} as {info.user}"


def _state(conn: Any) -> str:
    if conn.closed:
        return "closed"
    status = getattr(conn.info.transaction_status, "name", str(conn.info.transaction_status)).lower()
    return {"idle": "idle", "intrans": "in a transaction", "inerror": "in a failed transaction"}.get(
        status, status
    )


def open_reader(conn: Any, timeout: float) -> Any:
    """A new connection with the user's parameters, held read-only by the server, with a statement timeout."""
    if conn.closed:
        raise CapabilityError("The psycopg connection is closed.")
    return connect_reader(conn.info.get_parameters(), conn.info.password, timeout)


def connect_reader(params: Mapping[str, str], password: str | None, timeout: float) -> Any:
    """A connection of ours to the database ``params`` (libpq keywords) name, through psycopg's own class
    (``database_here.psycopg_connect``), held read-only by the server, with a statement timeout. A refusal
    says libpq's message with every parameter value taken out (it can repeat one, and a URL's query may hold
    a token)."""
    import psycopg  # deferred: an adapter never imports its library (the user's object means it is loaded)

    from ..database_here import psycopg_connect

    connect = psycopg_connect()
    options = f"-c default_transaction_read_only=on -c statement_timeout={max(int(timeout * 1000), 1)}"
    try:
        return connect(
            **params,
            **({"password": password} if password else {}),
            options=options,
            autocommit=False,
            connect_timeout=max(int(timeout), 2),
        )
    except psycopg.Error as exc:
        message = str(exc).strip()
        for value in sorted([*params.values(), password or ""], key=len, reverse=True):
            if len(value) >= 3:
                message = message.replace(value, "<…>")
        raise CapabilityError(f"Could not open a read-only connection to the database: {message}")


def read_catalog(cur: Any, max_tables: int) -> Catalog:
    """The tables of a PostgreSQL database from a DB-API cursor (also used through SQLAlchemy)."""
    cur.execute(COUNT_SQL)
    total = cur.fetchone()[0]
    cur.execute(CATALOG_SQL, {"limit": max_tables})
    tables: dict[tuple[str, str], Table] = {}
    for schema, name, kind, column, dtype, estimate in cur.fetchall():
        label = name if schema == "public" else f"{schema}.{name}"
        table = tables.get((schema, name))
        if table is None:
            rows = f"(~{int(estimate):,} rows, estimate)" if estimate is not None and estimate >= 0 else ""
            table = tables[(schema, name)] = Table(label, "view" if "VIEW" in kind else "table", [], rows)
        table.columns.append((column, dtype))
    return Catalog(list(tables.values()), total)


RELATION_COLUMNS_SQL = """
SELECT lower(n.nspname), lower(c.relname), pg_table_is_visible(c.oid), c.oid, a.attname FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE lower(c.relname) = ANY(%(names)s) AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
ORDER BY c.oid, a.attnum
"""  # every kind of relation (materialized views and foreign tables too), in every schema
VIEWS_SQL = """
SELECT c.oid, pg_get_viewdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE lower(c.relname) = ANY(%(names)s) AND c.relkind IN ('v', 'm')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
"""  # the catalog's own views are read by their columns, not their definitions


def read_relations(cur: Any, keys: set[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Columns of the named relations and the definitions of the views among them, from a DB-API cursor, by
    ``sqllineage.relation_key``: a bare name is the relation PostgreSQL finds on the search path, ``s.name``
    the one in schema ``s``. A key that finds no relation, or more than one (``"Accounts"`` and
    ``accounts``), is left out: its columns are unknown, which the trace counts as secret."""
    wanted = sorted({key_parts(key)[-1] for key in keys})
    cur.execute(RELATION_COLUMNS_SQL, {"names": wanted})
    found: dict[int, tuple[str, str, bool, list[str]]] = {}
    for schema, name, visible, oid, column in cur.fetchall():
        found.setdefault(oid, (schema, name, visible, []))[3].append(column)
    cur.execute(VIEWS_SQL, {"names": wanted})
    bodies = {oid: definition or "" for oid, definition in cur.fetchall()}
    columns: dict[str, list[str]] = {}
    views: dict[str, str] = {}
    for key in keys:
        parts = key_parts(key)
        if len(parts) == 1:
            hits = [oid for oid, (_, n, visible, _) in found.items() if n == parts[0] and visible]
        elif len(parts) in (2, 3):  # [database.]schema.name: PostgreSQL reads only the current database
            hits = [oid for oid, (s, n, _, _) in found.items() if (s, n) == (parts[-2], parts[-1])]
        else:
            hits = []
        if len(hits) == 1:
            columns[key] = found[hits[0]][3]
            if hits[0] in bodies:
                views[key] = bodies[hits[0]]
    return columns, views


# Types whose values have a small, fixed size (bool, integers, floats, dates and times, uuid, money, inet …):
# every other column is cut to CELL_CHARS by the server before it is sent.
_FIXED_TYPES = frozenset(
    {16, 18, 20, 21, 23, 26, 700, 701, 790, 829, 650, 869, 1082, 1083, 1114, 1184, 1186, 1266, 2950}
)
_EXPLAIN = re.compile(r"\s*EXPLAIN\b", re.IGNORECASE)


def fetch_bounded(execute: Callable[[str], Any], cursor: Any, sql: str, limit: int) -> Fetched:
    """Run ``sql`` through a server-side cursor so only the rows asked for leave the server (a client-side
    cursor buffered 276 MB before the deadline), each variable-width value cut to ``CELL_CHARS`` by the
    server itself (one ``repeat('x', 300000000)`` never reaches the person's process). ``execute`` runs one
    statement on ``cursor`` (psycopg, or the driver under SQLAlchemy)."""
    if _EXPLAIN.match(sql):  # a plan is a few lines, and EXPLAIN cannot be a cursor
        execute(sql)
        columns = _columns(cursor)
        return columns, *take_rows(cursor.fetchmany, limit, len(columns))
    execute(f"DECLARE pyaichat_probe NO SCROLL CURSOR FOR {sql}")
    execute("FETCH FORWARD 0 FROM pyaichat_probe")  # the columns, without running the query
    described = [(str(d[0]), d[1]) for d in cursor.description or []]
    execute("CLOSE pyaichat_probe")
    if not described:
        return [], [], False, False
    names = ", ".join(f"c{i}" for i in range(len(described)))
    cells = ", ".join(
        (f"q.c{i}" if kind in _FIXED_TYPES else f"left(q.c{i}::text, {CELL_CHARS})")
        + ' AS "'
        + name.replace('"', '""')
        + '"'
        for i, (name, kind) in enumerate(described)
    )
    execute(f"DECLARE pyaichat_rows NO SCROLL CURSOR FOR SELECT {cells} FROM ({sql}) AS q({names})")

    def next_rows(count: int) -> Any:
        execute(f"FETCH FORWARD {int(count)} FROM pyaichat_rows")
        return cursor.fetchall()

    return [name for name, _ in described], *take_rows(next_rows, limit, len(described))


def _columns(cursor: Any) -> list[str]:
    return [str(d[0]) for d in cursor.description or []]


# -- through a connection of ours (psycopg's, or one a SQLAlchemy URL names) --------------------------------
def catalog_via(opener: Callable[[], Any], max_tables: int) -> Catalog:
    with opener() as reader, reader.cursor() as cur:
        cat = read_catalog(cur, max_tables)
        reader.rollback()
    return cat


def relations_via(opener: Callable[[], Any], names: set[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
    with opener() as reader, reader.cursor() as cur:
        found = read_relations(cur, names)
        reader.rollback()
    return found


def query_via(opener: Callable[[], Any], sql: str, limit: int, timeout: float) -> Result:
    import psycopg  # deferred: never imported to check (the user's connection means it is loaded)

    with opener() as reader:
        try:
            with reader.cursor() as cur:
                columns, rows, more, cut = fetch_bounded(
                    lambda text: cur.execute(text.encode(), prepare=False),  # bytes: no %-placeholders
                    cur,
                    sql,
                    limit,
                )
        except psycopg.errors.QueryCanceled:
            raise stopped(timeout) from None
        except psycopg.Error as exc:
            raise QueryRefused("PostgreSQL", exc) from None
        finally:
            reader.rollback()
    held = "a separate connection with default_transaction_read_only=on and statement_timeout, rolled back"
    return Result(columns, rows, more, held, cut=cut)


# -- the adapter ---------------------------------------------------------------------------------------------
class PsycopgAdapter(DatabaseAdapter):
    """psycopg 3 connections (and their cursors, which are never read)."""

    def is_database(self, value: Any) -> bool:
        return _is_connection(value)

    def catalog(self, value: Any, max_tables: int = MAX_TABLES, timeout: float = 2.0) -> Catalog:
        return catalog_via(lambda: open_reader(value, timeout), max_tables)

    def dialect(self, value: Any) -> str:
        return "postgres"

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        return relations_via(lambda: open_reader(value, timeout), names)

    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        return query_via(lambda: open_reader(value, timeout), sql, limit, timeout)

    def one_line(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "psycopg", "Cursor", "ServerCursor", "AsyncCursor"):
            return "psycopg Cursor (never read by the assistant: its position is kept)"
        if not _is_connection(value):
            return None
        if value.closed:
            return "psycopg Connection (closed)"
        return (
            f"psycopg Connection to PostgreSQL {_where(value)} ({_state(value)}; get_repr lists its tables)"
        )

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_connection(value):
            return None
        if value.closed:
            return ["connection: closed"]
        info = value.info
        return [
            f"database: {_where(value)}, server version {info.server_version}",
            f"state: {_state(value)}; autocommit: {value.autocommit}",
            "tables: get_repr lists them with their columns; query_sql reads rows",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_connection(value):
            return self.one_line(value, lvl)
        if value.closed:
            return "psycopg Connection (closed)"
        head = f"psycopg Connection to PostgreSQL {_where(value)} ({_state(value)})"
        try:
            cat = self.catalog(value, tables_for(lvl))
        except CapabilityError as exc:
            return f"{head}\ntables: not readable ({exc})"
        hint = "query_sql(connection, sql) runs one read-only SELECT" if lvl > SCHEMA else ""
        return "\n".join([head, *catalog_lines(cat, lvl), hint]).rstrip()
