"""query_sql: one read-only statement against a database connection in the session, through two walls.

1. ``sqlcheck`` refuses anything but one ``SELECT``/``WITH … SELECT``/``VALUES``/``EXPLAIN`` before it is
   sent (writes, DDL, ``COPY``, ``ATTACH``, ``PRAGMA``, ``SET``, ``INSTALL``/``LOAD``, file-reading and
   state-changing functions, several statements);
2. the database holds it read-only on a connection of our own (the ``DatabaseAdapter``'s ``query``:
   ``mode=ro`` + ``query_only`` for SQLite, a ``READ ONLY`` transaction for DuckDB and PostgreSQL) and
   stops it at the deadline (SQLite's progress handler, DuckDB's ``interrupt``, PostgreSQL's
   ``statement_timeout``).

The user's connection, its open transaction and its cursors are never used. Privacy: nothing at ``names``;
only a plain ``EXPLAIN`` (no rows) at ``schema``; rows from ``sample`` up, secret-named columns masked.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CapabilityError
from . import sqlcheck
from .adapters import database_for
from .adapters.sqldb import result_lines
from .brepr import type_name
from .expression import resolve
from .privacy import SAMPLE, SCHEMA, level
from .registry import CapabilityContext, capability

KNOWN = "sqlite3, DuckDB, a SQLAlchemy Engine or Connection, or a psycopg connection"


class QuerySqlArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connection: str = Field(
        description="the variable holding the connection or engine, e.g. 'conn' or 'engine'"
    )
    sql: str = Field(description="one read-only SELECT, WITH … SELECT or EXPLAIN statement")
    limit: int = Field(20, ge=1, le=200, description="the most rows to return (default 20)")


@capability("query_sql", QuerySqlArgs)
def query_sql(ctx: CapabilityContext, args: QuerySqlArgs) -> str:
    """Run one read-only SQL query (SELECT, WITH … SELECT or EXPLAIN) on a database connection in the session.
    Works with sqlite3, DuckDB, SQLAlchemy engines/connections and psycopg; the database itself holds the
    query read-only on a separate connection, with a row limit and the tool deadline. Writes, DDL, several
    statements and functions that read files are refused. get_repr on the connection lists its tables and
    columns first."""
    lvl = level(ctx.privacy)
    if lvl < SCHEMA:
        raise CapabilityError("At privacy level 'names' no query can run.")
    sql = sqlcheck.check_read_only(args.sql)
    explain = sqlcheck.is_explain(sql)
    if lvl < SAMPLE and (not explain or sqlcheck.explain_runs_statement(sql)):
        raise CapabilityError(
            "At privacy level 'schema' no rows are shown: only a plain EXPLAIN can run (get_repr on the "
            "connection lists its tables and columns)."
        )
    value = resolve(ctx, args.connection)
    database = database_for(value)
    if database is None:
        raise CapabilityError(
            f"{args.connection} is a {type_name(value)}, not a database connection ({KNOWN})."
        )
    timeout = max(ctx.config.tool_timeout * 0.8, 0.1)  # the database stops first, so the answer says why
    result = database.query(value, sql, args.limit, timeout)
    if explain:
        plan = ["\n".join(str(c) for c in row if c is not None) for row in result.rows]
        return f"plan ({result.held_by}):\n" + "\n".join(plan)
    return "\n".join(result_lines(result, lvl))
