"""DuckDB: a connection is described by its database's tables and views; ``query_sql`` reads it through a
connection of our own in a read-only transaction.

``connection.cursor()`` is DuckDB's way to a second connection to the same database (its own transaction,
its own result): the user's connection, their open transaction and their pending result are never touched.
The query runs in ``BEGIN TRANSACTION READ ONLY`` (DuckDB refuses every write), always rolled back, and
``interrupt()`` stops it at the deadline. DuckDB can also read files and URLs from SQL (``read_csv('…')``,
``FROM 'x.parquet'``, ``FROM "duckdb_*.csv"``, extensions): besides ``sqlcheck``, the parsed statement
(``json_serialize_sql``) may name only tables and views of the catalog — by their exact name, in a schema
DuckDB would look in — its own common table expressions and a few table functions that generate data. Any
other name is one DuckDB reads as a file (or a glob of files, or a URL) or a Python variable.
"""

from __future__ import annotations

import json
import re
from contextlib import closing
from typing import Any

from ...errors import CapabilityError
from .. import structural
from .common import SCHEMA, isinstance_of
from .protocol import DatabaseAdapter
from .sqldb import (
    CELL_CHARS,
    MAX_TABLES,
    Catalog,
    QueryRefused,
    Result,
    Table,
    catalog_lines,
    fetch,
    interrupt_after,
    key_parts,
    names_line,
    stopped,
    tables_for,
)

_RELATIONS = (
    "SELECT lower(database_name), lower(schema_name), lower(table_name) FROM duckdb_tables() UNION ALL "
    "SELECT lower(database_name), lower(schema_name), lower(view_name) FROM duckdb_views()"
)
_PATH_LIKE = re.compile(r"[/\\*?\[\]{}~:]|\.[a-z0-9]{1,8}$", re.IGNORECASE)  # a file, glob or URL
_EXPLAIN = re.compile(r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?", re.I | re.S)
_PURE_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "repeat", "pragma_table_info"})
_SMALL_TYPES = (
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
    "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE",
)  # fmt: skip  # made into Python's own bool, int and float; any other value (a DECIMAL, a date, a UUID)
# becomes text inside DuckDB: it would be built with ``decimal.Decimal``, ``datetime.date`` or ``uuid.UUID``
# as found in their modules when converted, which the session may have replaced
_PARAMETRIC_TYPES = frozenset({"list", "struct", "map", "union", "array", "decimal", "numeric", "enum"})
_OBJECTS = (
    "SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = current_database() "
    "AND NOT internal UNION ALL SELECT view_name, 'view' FROM duckdb_views() "
    "WHERE database_name = current_database() AND NOT internal ORDER BY 1"
)


def _is_connection(value: Any) -> bool:
    return isinstance_of(value, "duckdb", "DuckDBPyConnection")


def _cursor(conn: Any) -> Any:
    try:
        cur = conn.cursor()
    except Exception as exc:
        raise CapabilityError(
            f"The DuckDB connection cannot be read ({type(exc).__name__}: it may be closed)."
        )
    try:
        _check_functions(cur)
    except BaseException:
        cur.close()
        raise
    return cur


_FUNCTIONS_SQL = "SELECT function_name, function_type, parameter_types FROM duckdb_functions()"
_own_functions: list[frozenset[tuple[Any, ...]]] = []  # DuckDB's own functions, from a fresh database


def _check_functions(cur: Any) -> None:
    """Refuse a database whose functions are not all DuckDB's own, before any statement of ours runs on it:
    a macro can take the name of a built-in (``CREATE MACRO lower(x) AS spy(x)`` runs wherever ``lower()``
    is called — in the catalog queries of this adapter too), and a Python function registered with
    ``create_function`` runs in the person's process when a statement or a view calls it. Compared with a
    fresh in-memory database of the same DuckDB by name, kind and parameter types, read with no function
    called; an extension's functions count as extra (an extension loaded here cannot be told from them)."""
    import duckdb  # deferred: never imported to check (the user's connection means it is loaded)

    if not _own_functions:
        _read_own_functions(duckdb)
    if not _own_functions:
        raise CapabilityError("DuckDB's own functions could not be read here, so no database is read.")
    found = _signatures(cur.execute(_FUNCTIONS_SQL).fetchall())
    extra = sorted({str(sig[0]) for sig in found if sig not in _own_functions[0]})
    if extra:
        shown = ", ".join(extra[:5]) + (", …" if len(extra) > 5 else "")
        raise CapabilityError(
            f"This DuckDB database has functions beyond DuckDB's own ({shown}: a macro, a Python function "
            "registered with create_function, or a loaded extension's), which a query — or a view it reads — "
            "would run in your process; the assistant does not query it."
        )


def _read_own_functions(duckdb: Any) -> None:
    """DuckDB's own functions, from a fresh in-memory database: read once, in the person's process when the
    adapter is made (``load_imported`` makes it before any fork: a walled child cannot open a database)."""
    try:
        with closing(duckdb.connect()) as fresh:
            _own_functions.append(frozenset(_signatures(fresh.execute(_FUNCTIONS_SQL).fetchall())))
    except Exception:
        pass


def _signatures(rows: list[Any]) -> list[tuple[Any, ...]]:
    return [(str(name), str(kind), tuple(map(str, params or ()))) for name, kind, params in rows]


def _where(cur: Any) -> str:
    row = cur.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return row[0] if row and row[0] else "an in-memory database"


def _check_sources(cur: Any, sql: str, views_seen: set[str] | None = None) -> None:
    """Refuse a statement naming anything but the catalog's tables, its own CTEs and pure table functions —
    and the same of every view it reads, and the views those read (``_check_views``)."""
    parsed = json.loads(cur.execute("SELECT json_serialize_sql(?)", [_explained(sql)]).fetchone()[0])
    if parsed.get("error"):
        raise CapabilityError(
            f"DuckDB could not parse the query: {parsed.get('error_message', 'syntax error')}."
        )
    entries = set(cur.execute(_RELATIONS).fetchall())
    database, schema = cur.execute("SELECT lower(current_database()), lower(current_schema())").fetchone()
    path = {(database, schema), ("temp", "main"), ("system", "main"), ("system", "pg_catalog")}
    ctes: set[str] = set()
    sources: list[tuple[str, tuple[str, str, str]]] = []
    _walk(parsed, ctes, sources)
    for kind, (catalog_name, schema_name, name) in sources:
        low = name.lower()
        if kind == "TABLE_FUNCTION" and low not in _PURE_TABLE_FUNCTIONS:
            raise CapabilityError(
                f"The query calls the table function {name}(), which may read files: not allowed."
            )
        if kind != "BASE_TABLE" or (low in ctes and not schema_name and not catalog_name):
            continue
        if not _is_relation(entries, path, catalog_name.lower(), schema_name.lower(), low):
            if _PATH_LIKE.search(name):
                raise CapabilityError(
                    f"{name!r} is a file path or glob, which DuckDB would read as files: query_sql reads "
                    "only the database's own tables and views."
                )
            raise CapabilityError(
                f"{name!r} is not a table or view of this database (DuckDB would look for a file or a Python "
                "variable of that name): only the database's own tables can be read."
            )
    read = [
        name.lower() for kind, (_, _, name) in sources if kind == "BASE_TABLE" and name.lower() not in ctes
    ]
    _check_views(cur, read, set() if views_seen is None else views_seen)


_VIEWS_READ = 50  # views looked through for one query (a view over views over views …)


def _check_views(cur: Any, names: list[str], seen: set[str]) -> None:
    """Refuse a statement that reads a view whose own query is refused: a view may call what the statement
    itself could not (a function, a table function, a Python variable DuckDB would scan in the person's
    process), though the statement only names the view. Every view of each name read — in any schema or
    database, so that a harmless ``zz.v`` cannot stand for another ``v`` — is checked as a query of its own
    (``sqlcheck``, then its sources, then the views it reads); one that cannot be read is refused."""
    from ..sqlcheck import check, view_query  # loaded with the first query (query_sql checks the statement)

    bodies: dict[str, list[Any]] = {}
    for name, body in cur.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall():
        bodies.setdefault(str(name).lower(), []).append(body)
    for name in names:
        if name in seen or name not in bodies:
            continue
        seen.add(name)
        if len(seen) > _VIEWS_READ:
            raise CapabilityError(
                f"The query reads more than {_VIEWS_READ} views, more than query_sql checks."
            )
        for create in bodies[name]:
            body = view_query(str(create), "duckdb")
            try:
                check(body, "duckdb")
                _check_sources(cur, body, seen)
            except CapabilityError as exc:
                raise CapabilityError(
                    f"The query reads the view {name}, whose own query is refused: {exc}"
                ) from None


def _is_relation(
    entries: set[tuple[str, str, str]], path: set[tuple[str, str]], catalog: str, schema: str, name: str
) -> bool:
    """Whether DuckDB binds ``catalog.schema.name`` to a table or view of its catalog (exactly that name, in
    a schema it looks in) rather than to a file, a glob or a Python variable."""
    if catalog:
        return (catalog, schema or "main", name) in entries
    if schema:  # `a.b`: schema a (of any database), or database a's main schema
        return any(n == name and (s == schema or (d == schema and s == "main")) for d, s, n in entries)
    return any((d, s) in path and n == name for d, s, n in entries)


def _check_loaded(cur: Any, sql: str) -> None:
    """Refuse a statement naming a function, type or collation that no loaded extension provides: DuckDB
    would install and load an extension for it (autoinstall/autoload of known extensions: folders under
    ``~/.duckdb``, a download, code loaded into the session's process). Those settings are global to the
    database, so they are not changed on the person's behalf; the statement is checked against what is loaded.
    """
    parsed = json.loads(cur.execute("SELECT json_serialize_sql(?)", [_explained(sql)]).fetchone()[0])
    functions: set[str] = set()
    types: set[str] = set()
    collations: set[str] = set()
    _names_in(parsed, functions, types, collations)
    missing = []
    if functions:
        known = {
            n
            for (n,) in cur.execute(
                "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
                "WHERE list_contains(?, lower(function_name))",
                [sorted(functions)],
            ).fetchall()
        }
        missing += [f"{f}()" for f in sorted(functions - known)]
    if types:
        known = {
            n
            for (n,) in cur.execute(
                "SELECT lower(type_name) FROM duckdb_types() WHERE list_contains(?, lower(type_name))",
                [sorted(types)],
            ).fetchall()
        }
        missing += [f"the type {t.upper()}" for t in sorted(types - known - _PARAMETRIC_TYPES)]
    if collations:
        known = {n.lower() for (n,) in cur.execute("SELECT collname FROM pragma_collations()").fetchall()}
        missing += [f"the collation {c}" for c in sorted(collations - known)]
    if missing:
        raise CapabilityError(
            f"The query needs {', '.join(missing)}, which no loaded DuckDB extension provides; query_sql "
            "never installs or loads an extension (that would download code into the session)."
        )


def _names_in(node: Any, functions: set[str], types: set[str], collations: set[str]) -> None:
    if isinstance(node, dict):
        cls = node.get("class")
        if cls == "FUNCTION" and isinstance(node.get("function_name"), str):
            functions.add(node["function_name"].lower())
        elif cls == "TYPE" and isinstance(node.get("type_name"), str):
            types.add(node["type_name"].lower())
        elif cls == "COLLATE" and isinstance(node.get("collation"), str):
            collations.update(c.lower() for c in node["collation"].split(".") if c)
        cast_type = node.get("cast_type")
        if isinstance(cast_type, dict) and cast_type.get("id") == "USER":
            info = cast_type.get("type_info") or {}
            if isinstance(info.get("user_type_name"), str):
                types.add(info["user_type_name"].lower())
        for value in node.values():
            _names_in(value, functions, types, collations)
    elif isinstance(node, list):
        for value in node:
            _names_in(value, functions, types, collations)


def _clipped(cur: Any, sql: str) -> str:
    """``sql`` with each variable-width value cut to ``CELL_CHARS`` inside DuckDB, before it becomes a
    Python object (a 300 MB string is not copied into one). Only while DuckDB keeps a subquery's order
    (``preserve_insertion_order``, its default); a plan is left as it is."""
    if (
        _EXPLAIN.match(sql)
        or not cur.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
    ):
        return sql
    cells = []
    for i, (name, kind, *_) in enumerate(cur.execute(f"DESCRIBE {sql}").fetchall(), 1):
        small = str(kind).startswith(_SMALL_TYPES) and not str(kind).endswith("]")
        cell = f"#{i}" if small else f"left(#{i}::VARCHAR, {CELL_CHARS})"
        cells.append(f'{cell} AS "{str(name).replace(chr(34), chr(34) * 2)}"')
    return f"SELECT {', '.join(cells)} FROM ({sql})"


def _explained(sql: str) -> str:
    """The statement an ``EXPLAIN [ANALYZE]`` explains (DuckDB serializes only the statement itself)."""
    return _EXPLAIN.sub("", sql, count=1)


def _walk(node: Any, ctes: set[str], sources: list[tuple[str, tuple[str, str, str]]]) -> None:
    if isinstance(node, dict):
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map", []) or []:
                key = entry.get("key") if isinstance(entry, dict) else None
                if isinstance(key, str):
                    ctes.add(key.lower())
        kind = node.get("type")
        if kind == "BASE_TABLE":
            catalog, schema, table = (
                str(node.get(key) or "") for key in ("catalog_name", "schema_name", "table_name")
            )
            sources.append((kind, (catalog, schema, table)))
        elif kind == "TABLE_FUNCTION":
            func = node.get("function") or {}
            sources.append((kind, ("", "", str(func.get("function_name", "?")))))
        for value in node.values():
            _walk(value, ctes, sources)
    elif isinstance(node, list):
        for value in node:
            _walk(value, ctes, sources)


def _by_key(
    keys: set[str],
    rows: list[tuple[str, str, str, str]],
    views: list[tuple[str, str, str, str]],
    first: tuple[str, str] | None,
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each ``sqllineage.relation_key`` resolved to the one relation it names (``name``: the current schema's
    when the search path is DuckDB's default (``first``), else the only one in any schema of any database;
    ``a.name``: schema ``a`` or database ``a``'s ``main``; ``d.s.name``: exactly). A key that can name more
    than one relation is left out (its columns unknown, counted as secret): two ``users`` must never be one
    list of columns."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for database, schema, table, column in rows:
        found.setdefault((database, schema, table), []).append(column)
    bodies = {(d, s, n): sql or "" for d, s, n, sql in views}
    columns: dict[str, list[str]] = {}
    definitions: dict[str, str] = {}
    for key in keys:
        parts = key_parts(key)
        hits = [
            place
            for place in found
            if place[2] == parts[-1]
            and (
                len(parts) == 1
                or (
                    len(parts) == 2
                    and (parts[0] == place[1] or (parts[0] == place[0] and place[1] == "main"))
                )
                or (len(parts) == 3 and (parts[0], parts[1]) == place[:2])
            )
        ]
        if len(parts) == 1 and first is not None and (*first, parts[0]) in found:
            hits = [(*first, parts[0])]
        if len(hits) == 1:
            columns[key] = found[hits[0]]
            if hits[0] in bodies:
                definitions[key] = bodies[hits[0]]
    return columns, definitions


# -- the adapter ---------------------------------------------------------------------------------------------
class DuckDBAdapter(DatabaseAdapter):
    """DuckDB connections."""

    def __init__(self) -> None:
        duckdb = structural.loaded_module("duckdb")
        if duckdb is not None and not _own_functions:
            _read_own_functions(duckdb)

    def is_database(self, value: Any) -> bool:
        return _is_connection(value)

    def catalog(self, value: Any, max_tables: int = MAX_TABLES, timeout: float = 2.0) -> Catalog:
        with closing(_cursor(value)) as cur:  # one query: each catalog function scans every table
            rows = cur.execute(
                f"WITH o(name, kind) AS ({_OBJECTS}), "
                f"f AS (SELECT * FROM o ORDER BY name LIMIT {int(max_tables)}) "
                "SELECT f.name, f.kind, (SELECT count(*) FROM o), c.column_name, c.data_type FROM f "
                "LEFT JOIN duckdb_columns() c "
                "ON c.table_name = f.name AND c.database_name = current_database() "
                "ORDER BY f.name, c.column_index"
            ).fetchall()
        tables: dict[str, Table] = {}
        for name, kind, _, column, dtype in rows:
            table = tables.setdefault(name, Table(name, kind, []))
            if column is not None:
                table.columns.append((column, dtype))
        return Catalog(list(tables.values()), rows[0][2] if rows else 0)

    def dialect(self, value: Any) -> str:
        return "duckdb"

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        wanted = sorted({key_parts(key)[-1] for key in names})
        with closing(_cursor(value)) as cur:
            rows = cur.execute(
                "SELECT lower(database_name), lower(schema_name), lower(table_name), column_name "
                "FROM duckdb_columns() WHERE list_contains(?, lower(table_name)) "
                "ORDER BY database_name, schema_name, table_name, column_index",
                [wanted],
            ).fetchall()
            views = cur.execute(
                "SELECT lower(database_name), lower(schema_name), lower(view_name), sql FROM duckdb_views() "
                "WHERE NOT internal AND list_contains(?, lower(view_name))",
                [wanted],
            ).fetchall()
            database, schema, path = cur.execute(
                "SELECT lower(current_database()), lower(current_schema()), current_setting('search_path')"
            ).fetchone()
        first = (database, schema) if not path else None  # a search path of the person's: not read here
        return _by_key(names, rows, views, first)

    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        with closing(_cursor(value)) as cur:
            _check_sources(cur, sql)
            _check_loaded(cur, sql)
            cur.execute("SET enable_progress_bar = false")  # this connection's own: nothing on the terminal
            cur.execute("BEGIN TRANSACTION READ ONLY")
            try:
                with interrupt_after(timeout, cur.interrupt) as fired:
                    try:
                        cur.execute(_clipped(cur, sql))
                        columns, rows, more, cut = fetch(cur, limit)
                    except Exception as exc:
                        if fired.is_set():
                            raise stopped(timeout) from None
                        raise QueryRefused("DuckDB", exc) from None
            finally:
                try:
                    cur.execute("ROLLBACK")
                except Exception:
                    pass
        held = "a separate DuckDB connection in a READ ONLY transaction, rolled back"
        return Result(columns, rows, more, held, cut=cut)

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _is_connection(value):
            return None
        try:
            with closing(_cursor(value)) as cur:
                rows = cur.execute(
                    "SELECT name, count(*) OVER (), (SELECT path FROM duckdb_databases() "
                    f"WHERE database_name = current_database()) FROM ({_OBJECTS}) AS o(name, kind) "
                    "ORDER BY name LIMIT 6"
                ).fetchall()
                where = (rows[0][2] if rows else _where(cur)) or "an in-memory database"
        except Exception:
            return "DuckDB connection (closed or not readable)"
        names, total = [r[0] for r in rows], (rows[0][1] if rows else 0)
        return f"DuckDB connection to {where}: {names_line(names, total)} (query_sql reads it)"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_connection(value):
            return None
        with closing(_cursor(value)) as cur:
            return [
                f"database: {_where(cur)}",
                "tables: get_repr lists them with their columns; query_sql reads rows",
            ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_connection(value):
            return None
        try:
            with closing(_cursor(value)) as cur:
                head = f"DuckDB connection to {_where(cur)}"
            cat = self.catalog(value, tables_for(lvl))
        except Exception as exc:
            return f"DuckDB connection (not readable: {exc})"
        hint = "query_sql(connection, sql) runs one read-only SELECT" if lvl > SCHEMA else ""
        return "\n".join([head, *catalog_lines(cat, lvl), hint]).rstrip()
