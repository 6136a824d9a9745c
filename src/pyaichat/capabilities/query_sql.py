"""query_sql: one read-only statement against a database connection in the session, through two walls.

1. ``sqlcheck`` parses the statement in the connection's dialect and refuses anything but one
   ``SELECT``/``WITH … SELECT``/``VALUES``/``EXPLAIN`` calling only functions known to read, before it is
   sent; what is sent is the checked tree written back, never the text as typed;
2. the database holds it read-only on a connection of our own (the ``DatabaseAdapter``'s ``query``:
   ``mode=ro`` + ``query_only`` for SQLite, a ``READ ONLY`` transaction for DuckDB and PostgreSQL) and
   stops it at the deadline (SQLite's progress handler, DuckDB's ``interrupt``, PostgreSQL's
   ``statement_timeout``).

Before it is sent, ``sqllineage`` resolves every column of the statement with its relations' columns and
its views' definitions read from the database: a secret-named column may be selected (its result column is
masked), never used anywhere else (filters, joins, grouping, ordering, computations: they tell its value a
query at a time); what cannot be resolved counts as every column the statement reads. A database's error
message is shown only for a statement that reads no secret column (it can quote the value it failed on);
otherwise only its kind.

The user's connection, its open transaction and its cursors are never used. Privacy: nothing at ``names``;
only a plain ``EXPLAIN`` (no rows) at ``schema``; rows from ``sample`` up, with every column a secret-named
column flows to masked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CapabilityError
from . import sqlcheck
from .adapters import database_for
from .adapters.sqldb import QueryRefused, result_lines
from .catalog import CapabilityContext, capability
from .database_here import queried_here
from .expression import resolve
from .privacy import SAMPLE, SCHEMA, level
from .redact import masker_for
from .sqlalchemy_url import exactly_sqlalchemy
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
    if not queried_here(value) and not exactly_sqlalchemy(value):  # the latter: the adapter says why not
        raise CapabilityError(
            f"{args.connection} would run code of your session's to connect or query (a subclass, a custom "
            "creator, a connect listener or a DBAPI module of its own), and query_sql runs in your process, "
            "where none of it may run: give it a plain connection or engine."
        )
    dialect = database.dialect(value)
    checked = sqlcheck.check(args.sql, dialect)
    if lvl < SAMPLE and (not checked.explain or checked.runs_statement):
        raise CapabilityError(
            "At privacy level 'schema' no rows are shown: only a plain EXPLAIN can run (get_repr on the "
            "connection lists its tables and columns)."
        )
    timeout = max(ctx.config.tool_timeout * 0.8, 0.1)  # the database stops first, so the answer says why
    traced = _trace(database, value, checked, timeout, masker_for(ctx.config))
    try:
        result = database.query(value, checked.sql, args.limit, timeout)
    except Exception as exc:
        raise _refused(exc, traced) from None
    if checked.explain:
        plan = ["\n".join(str(c) for c in row if c is not None) for row in result.rows]
        return f"plan ({result.held_by}):\n" + "\n".join(plan)
    if result.columns:
        result.masked = traced.masked(result.columns)
    return "\n".join(result_lines(result, lvl))


def _refused(exc: Exception, traced: Any) -> Exception:
    """The database's error as the model sees it: its message only when the query reads no secret column
    (a message can quote the value it failed on), else its kind; our own sentences as they are."""
    if isinstance(exc, CapabilityError) and not isinstance(exc, QueryRefused):
        return exc  # stopped at the deadline, could not connect …
    refused = exc if isinstance(exc, QueryRefused) else QueryRefused("The database", exc)
    if not traced.touches_secret:
        return CapabilityError(refused.detail)
    return CapabilityError(refused.hidden(traced.reach[0] if traced.reach else "a secret column"))


def _trace(database: Any, value: Any, checked: Any, timeout: float, masker: Any) -> Any:
    """Every column of the statement resolved, with the relations it names (and their views' relations)
    read from the database; refused with a sentence when a secret column is used anywhere but as a value."""
    from .sqllineage import referenced_names, trace  # sqlglot's resolver: with the first query

    tables: dict[str, list[str]] = {}
    views: dict[str, str] = {}
    wanted = referenced_names(checked.tree, checked.dialect)
    asked: set[str] = set()
    for _ in range(_VIEW_DEPTH):
        new = wanted - asked
        if not new:
            break
        asked |= new
        try:
            found_tables, found_views = database.relations(value, new, timeout)
        except CapabilityError:
            raise
        except Exception as exc:
            raise CapabilityError(
                f"query_sql could not read the columns of {', '.join(sorted(new))} to check the query "
                f"({type(exc).__name__})."
            ) from None
        tables.update(found_tables)
        views.update(found_views)
        for sql in found_views.values():
            wanted |= referenced_names(sql, checked.dialect)
    try:
        return trace(checked.tree, checked.dialect, tables, views, masker.is_secret_name)
    except RecursionError:
        raise CapabilityError("The SQL is nested too deeply for query_sql to trace it.") from None
