"""query_sql: one read-only statement against a database connection in the session, through two walls.

1. ``sqlcheck`` parses the statement in the connection's dialect and refuses anything but one
   ``SELECT``/``WITH … SELECT``/``VALUES``/``EXPLAIN`` calling only functions known to read, before it is
   sent; what is sent is the checked tree written back, never the text as typed;
2. the database holds it read-only on a connection of our own (the ``DatabaseAdapter``'s ``query``:
   ``mode=ro`` + ``query_only`` for SQLite, a ``READ ONLY`` transaction for DuckDB and PostgreSQL) and
   stops it at the deadline (SQLite's progress handler, DuckDB's ``interrupt``, PostgreSQL's
   ``statement_timeout``).

The user's connection, its open transaction and its cursors are never used. Privacy: nothing at ``names``;
only a plain ``EXPLAIN`` (no rows) at ``schema``; rows from ``sample`` up, with every column that is
secret-named or computed from a secret-named column (``sqllineage``) masked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CapabilityError
from . import sqlcheck
from .adapters import database_for
from .adapters.sqldb import Result, result_lines
from .expression import resolve
from .privacy import SAMPLE, SCHEMA, level
from .redact import masker_for
from .registry import CapabilityContext, capability
from .text import type_name

KNOWN = "sqlite3, DuckDB, a SQLAlchemy Engine or Connection, or a psycopg connection"
_VIEW_DEPTH = 8


class QuerySqlArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connection: str = Field(description="the variable holding the connection or engine")
    sql: str = Field(description="one SELECT, WITH … SELECT or EXPLAIN statement")
    limit: int = Field(20, ge=1, le=200, description="the most rows to return")


@capability("query_sql", QuerySqlArgs)
def query_sql(ctx: CapabilityContext, args: QuerySqlArgs) -> str:
    """Run one read-only SQL query on a database connection in the session. Use get_repr on the connection
    first to see its tables."""
    lvl = level(ctx.privacy)
    if lvl < SCHEMA:
        raise CapabilityError("At privacy level 'names' no query can run.")
    value = resolve(ctx, args.connection)
    database = database_for(value)
    if database is None:
        raise CapabilityError(
            f"{args.connection} is a {type_name(value)}, not a database connection ({KNOWN})."
        )
    dialect = database.dialect(value)
    checked = sqlcheck.check(args.sql, dialect)
    if lvl < SAMPLE and (not checked.explain or checked.runs_statement):
        raise CapabilityError(
            "At privacy level 'schema' no rows are shown: only a plain EXPLAIN can run (get_repr on the "
            "connection lists its tables and columns)."
        )
    timeout = max(ctx.config.tool_timeout * 0.8, 0.1)  # the database stops first, so the answer says why
    result = database.query(value, checked.sql, args.limit, timeout)
    if checked.explain:
        plan = ["\n".join(str(c) for c in row if c is not None) for row in result.rows]
        return f"plan ({result.held_by}):\n" + "\n".join(plan)
    if result.columns:
        result.masked = _by_lineage(database, value, checked, result, timeout, masker_for(ctx.config))
    return "\n".join(result_lines(result, lvl))


def _by_lineage(
    database: Any, value: Any, checked: Any, result: Result, timeout: float, masker: Any
) -> set[int]:
    """The result columns computed from a secret-named column (all of them when that cannot be read)."""
    # sqlglot's lineage: only when a secret column is reachable
    from .sqllineage import referenced_names, secret_outputs

    tables: dict[str, list[str]] = {}
    views: dict[str, str] = {}
    try:
        wanted = referenced_names(checked.tree, checked.dialect)
        asked: set[str] = set()
        for _ in range(_VIEW_DEPTH):
            new = wanted - asked
            if not new:
                break
            asked |= new
            found_tables, found_views = database.relations(value, new, timeout)
            tables.update(found_tables)
            views.update(found_views)
            for sql in found_views.values():
                wanted |= referenced_names(sql, checked.dialect)
    except Exception:
        return set(range(len(result.columns)))
    return secret_outputs(
        checked.tree, checked.dialect, tables, views, len(result.columns), masker.is_secret_name
    )
