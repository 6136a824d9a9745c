"""Which result columns of a query come from a secret-named column: masked like the column itself.

Masking by the result column's name is not enough: ``SELECT password AS x``, ``substr(password, 1)``, a
subquery, a CTE or ``SELECT *`` through a view carry the value out under another name. So each output column
is traced to the source columns it is computed from (sqlglot's ``qualify`` and ``lineage``, with the tables'
columns read from the database's catalog and every view replaced by its own definition), and masked when any
of them is secret-named. Conservative where it cannot know: when a secret-named column is reachable by the
query and an output's lineage cannot be established (an unknown relation, a view whose definition cannot be
read, a construct the tracer does not follow), that output is masked too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlglot  # this module loads with query_sql's first lineage check, and sqlglot with it
from sqlglot import exp
from sqlglot.lineage import lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope

_MAX_VIEW_DEPTH = 8


def secret_outputs(
    tree: Any,
    dialect: str,
    tables: Mapping[str, list[str]],
    views: Mapping[str, str],
    count: int,
    is_secret: Callable[[str], bool],
) -> set[int]:
    """Indices (0-based) of the ``count`` result columns of ``tree`` to mask. ``tables``: relation name (lower
    case) → its columns; ``views``: view name → its defining SQL (a view also in ``tables`` whose definition
    cannot be parsed stays opaque: all its columns count as possibly secret)."""

    everything = set(range(count))
    opaque: set[str] = set()
    try:
        expanded = _expand_views(tree.copy(), dialect, views, opaque, 0)
    except Exception:
        return everything
    ctes = {c.alias_or_name.lower() for c in expanded.find_all(exp.CTE)}
    referenced = {
        t.name.lower()
        for t in expanded.find_all(exp.Table)
        if isinstance(t.this, exp.Identifier) and t.name.lower() not in ctes
    }
    secret = {(t, c.lower()) for t in referenced if t in tables for c in tables[t] if is_secret(c)}
    opaque &= referenced
    if not secret and not opaque:
        return set()
    names = {c for _, c in secret}
    stars = [
        star for star in expanded.find_all(exp.Star) if not isinstance(star.parent, exp.Func)
    ]  # count(*)
    if not opaque and not stars:
        mentioned = {c.name.lower() for c in expanded.find_all(exp.Column)}
        rows = {t.alias_or_name.lower() for t in expanded.find_all(exp.Table)}  # `SELECT u FROM users u`
        if not mentioned & (names | rows):
            return set()  # nothing can be computed from a secret column the query never names
    schema = {t: {c: "text" for c in tables[t]} for t in referenced if t in tables}
    secret_tables = {t for t, _ in secret} | opaque
    # a relation named as a value is its whole row (PostgreSQL, DuckDB): `SELECT u FROM users u`
    whole_rows = {
        name
        for t in expanded.find_all(exp.Table)
        if t.name.lower() in secret_tables
        for name in (t.name.lower(), t.alias_or_name.lower())
    }
    try:
        qualified = qualify(expanded, schema=schema, dialect=dialect or None, validate_qualify_columns=True)
        heads = _first_select(qualified)
        if heads is None or len(heads.selects) != count:
            return everything
        outputs = []
        for i, projection in enumerate(list(heads.selects)):
            name = f"_pyaichat_out_{i}"
            projection.replace(exp.alias_(projection.unalias(), name))
            outputs.append(name)
        scope = build_scope(qualified)  # once: lineage would qualify the whole statement again per column
        masked = set()
        for i, name in enumerate(outputs):
            node = lineage(name, qualified, None, dialect=dialect or None, scope=scope, copy=False)
            steps = list(node.walk())
            leaves = [leaf for leaf in steps if not leaf.downstream]
            if any(_leaf_is_secret(leaf, secret, opaque, schema, is_secret) for leaf in leaves) or any(
                _names_a_row(step.expression, whole_rows) for step in steps
            ):
                masked.add(i)
        return masked
    except Exception:
        return everything


def referenced_names(tree: Any, dialect: str) -> set[str]:
    """The relations a statement (a tree, or a view's SQL) reads, lower case, its own CTEs left out; an
    unreadable view definition reads nothing known (it stays opaque)."""

    if isinstance(tree, str):
        try:
            tree = sqlglot.parse_one(tree, read=dialect or None)
        except Exception:
            return set()
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {
        t.name.lower()
        for t in tree.find_all(exp.Table)
        if isinstance(t.this, exp.Identifier) and t.name.lower() not in ctes
    }


def _first_select(tree: Any) -> Any:

    while isinstance(tree, (exp.SetOperation, exp.Subquery)):
        tree = tree.this if isinstance(tree, exp.Subquery) else tree.left
    return tree if isinstance(tree, exp.Select) else None


def _leaf_is_secret(
    leaf: Any, secret: set[tuple[str, str]], opaque: set[str], schema: Mapping[str, Any], is_secret: Any
) -> bool:
    """A leaf of the lineage: a column of a table (its node is the table, its name ``"t"."col"``), or a value
    computed from no column (a literal, ``count(*)``); a leaf still holding columns was not followed."""

    node = leaf.expression
    if isinstance(node, exp.Table):
        table = node.name.lower()
        column = leaf.name.rsplit(".", 1)[-1].strip('"').lower()
        if table in opaque or is_secret(column):
            return True
        return (table, column) in secret if table in schema else False
    return isinstance(node, exp.Expression) and any(True for _ in node.find_all(exp.Column))


def _names_a_row(node: Any, rows: set[str]) -> bool:

    if not rows or not isinstance(node, exp.Expression):
        return False
    if isinstance(node, exp.TableColumn) or any(True for _ in node.find_all(exp.TableColumn)):
        return True  # the parser's own mark for a relation used as a value
    columns = [node] if isinstance(node, exp.Column) else node.find_all(exp.Column)
    return any(c.name.lower() in rows for c in columns)


def _expand_views(tree: Any, dialect: str, views: Mapping[str, str], opaque: set[str], depth: int) -> Any:
    """``tree`` with each view replaced by its definition (as a subquery under the view's name or alias)."""

    if depth > _MAX_VIEW_DEPTH:
        raise ValueError("views nested too deep")
    for table in list(tree.find_all(exp.Table)):
        name = table.name.lower()
        if not isinstance(table.this, exp.Identifier) or name not in views:
            continue
        try:
            body = sqlglot.parse_one(views[name], read=dialect or None)
        except Exception:
            opaque.add(name)
            continue
        if isinstance(body, exp.Create):
            body = body.expression
        if not isinstance(body, exp.Query):
            opaque.add(name)
            continue
        body = _expand_views(body, dialect, views, opaque, depth + 1)
        alias = table.alias or table.name
        table.replace(exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return tree
