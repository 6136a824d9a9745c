"""Where every value of a statement comes from, and where a secret column may go: the look at a statement
that passed ``sqlcheck`` once its relations' columns and its views' definitions are read from the database.

A secret is a value, not a name: masking the result column called ``password`` is not enough, and neither is
masking every result column computed from it. A secret column that decides *which* rows come back, *in which
order*, *whether the query fails* or *how long it takes* tells its value a query at a time, whatever the
result shows (``SELECT count(*) FROM users WHERE substr(password, 1, 1) = 'c'`` recovered a whole password in
381 queries; ``CASE WHEN password LIKE 'a%' THEN 1/0 END`` does it with the error alone). So the rule is one
for every position of a statement:

* a secret-named column may be **selected**: passed to a result column as it is, through aliases, derived
  tables, CTEs, views, ``UNION ALL`` and scalar subqueries; that result column is masked;
* **anywhere else it is refused** with a sentence naming it: ``WHERE``, ``JOIN … ON``/``USING``/``NATURAL``,
  ``GROUP BY``, ``HAVING``, ``ORDER BY``, ``QUALIFY``, a window, ``LIMIT``, ``DISTINCT`` and the set
  operations that compare rows, ``PIVOT``, the arguments of a function that makes rows (``json_each``,
  ``unnest``, ``generate_series``), and any computation (``upper(password)``, ``count(password)``, a cast).

Every column reference is resolved through the statement's own scopes (derived tables, CTEs, laterals,
correlated subqueries, alias column lists, ``USING``/``NATURAL``, ``*`` with ``EXCLUDE``/``REPLACE``/
``RENAME``, DuckDB's ``#3``) to the relation columns it reads, with each view replaced by its definition (a
view's own clauses are the person's: traced, never refused). **It fails closed**: a reference that cannot be
resolved to columns (``COLUMNS(…)``, a relation used as a value, a column of a relation whose columns cannot
be read, a name no relation has) counts as every column of every relation the statement reads; a construct
the resolver does not model makes it refuse the statement when a secret column is within its reach. After
the query, a result whose columns are not the ones predicted (their number, or the names a ``*`` gives) is
masked whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot  # this module loads with query_sql's first statement, and sqlglot with it
from sqlglot import exp

from ..errors import CapabilityError
from . import sqlfunctions as funcs
from .adapters.protocol import KEY_SEP

_MAX_VIEW_DEPTH = 8
# What one statement may make the resolver read, so its CPU in the person's process (where no deadline can
# stop it) stays within a second or so: the nodes of the view definitions it expands (a view read twice by
# a view read twice … doubles at each level) and the columns of the relations it builds (`SELECT *` over a
# self-join in a chain of CTEs doubles them at each step: twenty steps were 3 million columns, 15 s).
_MAX_VIEW_NODES = 20_000
_MAX_COLUMNS = 100_000
_MAX_RECURSION = 6  # passes over a recursive CTE (and one per column) before it is called untraceable


@dataclass(frozen=True)
class Source:
    """One column of one relation the statement reads (lower case); ``EVERY`` when that cannot be told."""

    table: str
    column: str

    def __str__(self) -> str:
        return f"{self.table.replace(KEY_SEP, '.')}.{self.column}"


EVERY = Source("*", "*")
Flow = frozenset[Source]
NOTHING: Flow = frozenset()
BARE = ""  # the position of a value passed to a result column as it is (anything else names its clause)
Where = Any  # BARE, a clause's name, or the expression of the select list that computes with the value


class Untraceable(Exception):
    """A construct the resolver does not model (its text says which)."""


@dataclass
class Relation:
    """One item of a FROM clause as the resolver sees it: its columns' names and where each comes from;
    ``names is None`` when its columns are not known (a function without a column list, an unknown shape)."""

    alias: str
    names: list[str] | None
    flows: list[Flow]
    extra: Flow = NOTHING  # where columns of unknown names come from
    _index: dict[str, Flow] | None = field(default=None, repr=False, compare=False)

    @property
    def everything(self) -> Flow:
        return frozenset().union(self.extra, *self.flows)

    def by_name(self) -> dict[str, Flow]:
        """Each column name's flows, built once: a NATURAL JOIN of wide relations looks every name up, and
        a scan per name was quadratic (a 544-character query cost minutes)."""
        if self._index is None:
            index: dict[str, set[Source]] = {}
            for n, f in zip(self.names or [], self.flows, strict=True):
                index.setdefault(n, set()).update(f)
            self._index = {n: frozenset(f) for n, f in index.items()}
        return self._index

    def has(self, name: str) -> bool:
        return self.names is not None and name in self.by_name()

    def column(self, name: str) -> Flow:
        if self.names is None:
            return self.everything
        return self.by_name().get(name, NOTHING)


@dataclass
class Output:
    name: str | None  # lower case; None when the database names it (an expression without an alias)
    flow: Flow
    star: bool = False  # expanded from a `*`: the database's own name must be this one


@dataclass
class Shape:
    """What a query returns: its columns in order, or ``outputs is None`` when their number is unknown."""

    outputs: list[Output] | None
    everything: Flow = NOTHING

    @property
    def flows(self) -> list[Flow]:
        return [o.flow for o in self.outputs or []]

    def union(self) -> Flow:
        return frozenset().union(self.everything, *self.flows)


@dataclass
class Trace:
    """What ``trace`` found: ``shape`` of the result, the secret columns the statement reads (``reach``:
    ``"users.password"``…), and whether a value from one (or one that cannot be told) flows anywhere."""

    shape: Shape
    reach: list[str]
    touches_secret: bool
    secret: Callable[[Flow], Source | None] = field(repr=False, default=lambda flow: None)

    def masked(self, columns: list[str]) -> set[int]:
        """The result columns to mask: those a secret column flows to, or every one when the result is not
        the one predicted (``columns``: the names the database gave them)."""
        everything = set(range(len(columns)))
        outputs = self.shape.outputs
        predicted = outputs is not None and len(outputs) == len(columns)
        if predicted and outputs is not None:
            seen: set[str] = set()
            for output, name in zip(outputs, columns, strict=True):
                if output.star and not _same_name(output.name or "", str(name).lower(), seen):
                    predicted = False
                seen.add(output.name or "")
        if not predicted or outputs is None:
            return everything if self.secret(self.shape.union()) else set()
        return {i for i, output in enumerate(outputs) if self.secret(output.flow)}


def _same_name(predicted: str, given: str, seen: set[str]) -> bool:
    """The name a `*` column comes back under: its own, or DuckDB's ``a_1`` for a second ``a``."""
    if given == predicted:
        return True
    head, _, number = given.rpartition("_")
    return head == predicted and number.isdigit() and predicted in seen


def relation_key(table: Any) -> str:
    """How a relation is named, lower case, with its schema (and catalog) when the statement gives them:
    ``users``, ``auth.users`` (the parts joined by ``KEY_SEP``). The adapters resolve a key to one relation
    or to none (its columns unknown): ``auth.users`` and ``public.users`` are two relations, never one list
    of columns. A name part holding ``KEY_SEP`` cannot be told apart, so its key matches no relation."""
    parts = [table.args.get(k) for k in ("catalog", "db")] + [table.this]
    names = [p.name.lower() for p in parts if p is not None and p.name]
    key = KEY_SEP.join(names)
    return key if all(KEY_SEP not in n for n in names) else "\x00" + key


def bare(key: str) -> str:
    """The relation's own name in a key (``pg_catalog.pg_proc`` → ``pg_proc``)."""
    return key.rpartition(KEY_SEP)[2]


def referenced_names(tree: Any, dialect: str) -> set[str]:
    """The relations a statement (a tree, or a view's SQL) names, as ``relation_key``s; an unreadable view
    definition names nothing known (it stays opaque)."""
    if isinstance(tree, str):
        try:
            tree = sqlglot.parse_one(tree, read=dialect or None)
        except Exception:
            return set()
    return {relation_key(t) for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)}


def trace(
    tree: Any,
    dialect: str,
    tables: Mapping[str, list[str]],
    views: Mapping[str, str],
    is_secret: Callable[[str], bool],
) -> Trace:
    """Resolve every column of ``tree`` (``tables``: relation name, lower case → its columns in order;
    ``views``: view name → its defining SQL) and refuse, with ``CapabilityError``, a secret column used
    anywhere but as a selected value. ``sqlcheck.check_relations`` refuses, on the statement with its views
    expanded, the relations that expose values."""
    from .sqlcheck import check_relations  # sqlcheck loads sqlglot too: both with the first query

    opaque: set[str] = set()
    read = referenced_names(tree, dialect)
    _refuse_shadowing(tree, dialect, tables, views)
    expanded = tree
    if read & set(views):  # the statement (not the checked tree) gets each view's definition in its place
        expanded = _Views(dialect, views, opaque).expand(tree.copy())
        check_relations(expanded, dialect)
        read = referenced_names(expanded, dialect)
    opaque |= read - set(tables)
    ctes = {c.alias_or_name.lower() for c in expanded.find_all(exp.CTE)}
    opaque -= ctes
    catalog = funcs.SECRET_COLUMNS.get(dialect, frozenset())
    secret_read = [
        Source(t, c.lower())
        for t in sorted(read & set(tables))
        for c in tables[t]
        if is_secret(c) or (bare(t), c.lower()) in catalog
    ]
    secret_read += [Source(t, "*") for t in sorted(opaque)]
    tracer = _Tracer(dialect, tables, opaque, secret_read, is_secret)
    reach = [_label(s) for s in secret_read]
    try:
        shape = tracer.query(expanded, None)
    except Untraceable as why:
        if secret_read:
            raise CapabilityError(
                f"query_sql cannot trace where the values of this query go ({why}), and it reads "
                f"{_reads(secret_read)}, so it is not run."
            ) from None
        return Trace(Shape(None, frozenset({EVERY})), reach, False, tracer.secret)
    return Trace(shape, reach, tracer.touched, tracer.secret)


def _refuse_shadowing(tree: Any, dialect: str, tables: Mapping[str, Any], views: Mapping[str, str]) -> None:
    """Refuse a statement whose CTE is named like a relation it or its views read: which one a name binds to
    (the CTE, the table, the view's own table; a later CTE in SQLite and in PostgreSQL's ``WITH RECURSIVE``)
    is the database's choice, and the CTE would stand for the person's table in the trace."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    if not ctes:
        return
    named = {bare(k) for k in [*tables, *views]}
    for sql in views.values():
        named |= {bare(k) for k in referenced_names(sql, dialect)}
    clash = sorted(ctes & named)
    if clash:
        raise CapabilityError(
            f"The query names a CTE {clash[0]}, like a table or view it reads (or one of its views reads); "
            "query_sql cannot tell which one each use of that name reads, so give the CTE another name."
        )


def _label(source: Source) -> str:
    table = source.table.replace(KEY_SEP, ".")
    return f"{table} (its columns cannot be read)" if source.column == "*" else str(source)


def _reads(secret_read: list[Source]) -> str:
    first = secret_read[0]
    if first.column == "*":
        return f"{first.table.replace(KEY_SEP, '.')}, whose columns cannot be read"
    return f"the secret column {first}"


# -- views ---------------------------------------------------------------------------------------------------
@dataclass
class _Views:
    """The person's views as the statement reads them: each definition parsed once, and the nodes of the
    definitions put in its place counted for the whole statement (``_MAX_VIEW_NODES``)."""

    dialect: str
    definitions: Mapping[str, str]
    opaque: set[str]
    parsed: dict[str, Any] = field(default_factory=dict)
    spent: int = 0

    def body(self, name: str) -> tuple[Any, list[Any]] | None:
        """The view's query and its column list (``None``: its definition cannot be read)."""
        if name not in self.parsed:
            self.parsed[name] = _definition(self.definitions[name], self.dialect)
        found = self.parsed[name]
        if found is None:
            return None
        body, columns = found
        self.spent += sum(1 for _ in body.walk())
        if self.spent > _MAX_VIEW_NODES:
            raise CapabilityError(
                f"The query's views expand to more than {_MAX_VIEW_NODES:,} parts of SQL (each use of a view "
                "is read again), more than query_sql traces."
            )
        return body.copy(), [c.copy() for c in columns]

    def expand(self, tree: Any, depth: int = 0) -> Any:
        """``tree`` with each view replaced by its definition (a subquery under the view's name or alias,
        its column list kept); a definition that cannot be read leaves the view opaque."""
        if depth > _MAX_VIEW_DEPTH:
            raise CapabilityError("The query's views are nested too deep for query_sql to trace them.")
        for table in list(tree.find_all(exp.Table)):
            if not isinstance(table.this, exp.Identifier):
                continue
            name = relation_key(table)
            if name not in self.definitions or _bound_to_cte(table, name):
                continue
            found = self.body(name)
            if found is None:
                self.opaque.add(name)
                continue
            body, columns = found
            body = self.expand(body, depth + 1)
            alias = exp.TableAlias(this=exp.to_identifier(table.alias or table.name))
            given = table.args.get("alias")
            if given is not None and given.columns:
                columns = [c.copy() for c in given.columns]
            if columns:
                alias.set("columns", columns)
            view = exp.Subquery(this=body, alias=alias)
            view.meta["view"] = name
            table.replace(view)
        return tree


def _bound_to_cte(table: Any, name: str) -> bool:
    """Whether a WITH around ``table`` defines a CTE of its name: that name is the CTE, never the view (a
    view's own ``WITH v2 AS (…) SELECT … FROM v2`` next to a view ``v2``)."""
    if table.args.get("db") or table.args.get("catalog"):
        return False
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if with_ is not None and any(c.alias_or_name.lower() == name for c in with_.expressions):
            return True
        node = node.parent
    return False


def _definition(sql: str, dialect: str) -> tuple[Any, list[Any]] | None:
    try:
        body = sqlglot.parse_one(sql, read=dialect or None)
    except Exception:
        return None
    columns: list[Any] = []
    if isinstance(body, exp.Create):
        if isinstance(body.this, exp.Schema):
            columns = [exp.to_identifier(c.name) for c in body.this.expressions]
        body = body.expression
    if not isinstance(body, exp.Query):
        return None
    return body, columns


# -- the resolver --------------------------------------------------------------------------------------------
@dataclass
class _Scope:
    parent: _Scope | None
    relations: list[Relation] = field(default_factory=list)
    ctes: dict[str, Relation] = field(default_factory=dict)
    aliases: dict[str, Flow] = field(default_factory=dict)  # the select list's names, for ORDER BY …
    windows: dict[str, Flow] = field(default_factory=dict)  # named WINDOW clauses
    lambdas: set[str] = field(default_factory=set)
    star: list[Output] | None = field(default_factory=list)  # what `*` gives (None: not known)

    def chain(self) -> Iterable[_Scope]:
        scope: _Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def cte(self, name: str) -> Relation | None:
        for scope in self.chain():
            if name in scope.ctes:
                return scope.ctes[name]
        return None

    def everything(self) -> Flow:
        return frozenset().union(*(r.everything for r in self.relations))


_SELECT_ARGS = {
    "with_", "expressions", "distinct", "from_", "joins", "laterals", "where", "group", "having", "qualify",
    "windows", "order", "limit", "offset", "hint",
}  # fmt: skip
_SETOP_ARGS = {
    "with_", "this", "expression", "distinct", "by_name", "order", "limit", "offset", "side", "kind",
}  # fmt: skip
_TABLE_ARGS = {"this", "alias", "db", "catalog", "only", "sample", "ordinality", "pivots", "hints"}
_JOIN_ARGS = {"this", "on", "side", "kind", "using", "method", "expressions", "match_condition"}
_VALUE_NAMES = """
    Add BitwiseAnd BitwiseLeftShift BitwiseOr BitwiseRightShift BitwiseXor DPipe Div Dot EQ Escape GT GTE Glob
    ILike IntDiv Is LT LTE Like Mod Mul NEQ NullSafeEQ NullSafeNEQ Overlaps SimilarTo Sub Distance Kwarg
    Adjacent ExtendsLeft ExtendsRight BitwiseNot Neg Not All Any AtTimeZone Between Bracket DataTypeParam
    Distinct Filter Where FromTimeZone GroupingSets Cube Rollup IgnoreNulls RespectNulls In Interval
    IntervalSpan Order Ordered Slice Tuple WithinGroup PropertyEQ Introducer Aliases WindowSpec
"""
_VALUE_KINDS = frozenset(_VALUE_NAMES.split())  # computed from their children alone
_CONSTANT_KINDS = (
    exp.Literal, exp.Null, exp.Boolean, exp.DataType, exp.Identifier, exp.BitString, exp.ByteString,
    exp.HexString, exp.National, exp.RawString, exp.UnicodeString, exp.Heredoc, exp.JSONPath,
    exp.JSONPathPart, exp.LimitOptions,
)  # fmt: skip
# What makes an ORDER BY/GROUP BY item read something rather than name a result column by its number.
_READS = (exp.Column, exp.Var, exp.Star, exp.PositionalColumn, exp.Columns, exp.Query, exp.Subquery)
_PSEUDO_COLUMNS = {
    "sqlite": {"rowid", "oid", "_rowid_"},
    "postgres": {"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"},
    "duckdb": {"rowid"},
}


class _Tracer:
    def __init__(
        self,
        dialect: str,
        tables: Mapping[str, list[str]],
        opaque: set[str],
        secret_read: list[Source],
        is_secret: Callable[[str], bool],
    ) -> None:
        self.dialect = dialect
        self.tables = tables
        self.opaque = opaque
        self.secret_read = secret_read
        self.is_secret = is_secret
        self.catalog = set(funcs.SECRET_COLUMNS.get(dialect, ()))
        self.touched = False
        self.in_view = 0  # inside a view's definition: the person's SQL, not the model's
        self.columns = 0  # the columns of every relation built so far (bounded: ``_MAX_COLUMNS``)

    # -- what is secret ------------------------------------------------------------------------------------
    def secret(self, flow: Flow) -> Source | None:
        """The first secret column ``flow`` may carry (``EVERY``: the first one the statement reads)."""
        for source in sorted(flow, key=str):
            if source == EVERY:
                if self.secret_read:
                    return self.secret_read[0]
            elif (
                source.table in self.opaque
                or self.is_secret(source.column)
                or (bare(source.table), source.column) in self.catalog
            ):
                return source
        return None

    def use(self, flow: Flow, where: Where, node: Any) -> None:
        """A value used at ``where`` (``BARE``: selected as it is): refused when a secret may be in it."""
        found = self.secret(flow)
        if found is None:
            return
        self.touched = True
        if (isinstance(where, str) and where == BARE) or self.in_view:
            return  # a view's own clauses are fixed by the person: only what the query does with them counts
        text = _text(node, self.dialect)
        computed = not isinstance(where, str)
        if computed:
            where = f"{_COMPUTATION} ({_text(where, self.dialect)})"
        if EVERY in flow or found.column == "*":
            raise CapabilityError(
                f"query_sql cannot tell which columns {text} in {where} reads, and the query reads "
                f"{_reads([found] if found.column == '*' else self.secret_read)}; a secret column may be "
                "selected (it is shown masked) but used nowhere else."
            )
        shown = "" if computed else f" ({text})"
        raise CapabilityError(
            f"The query uses the secret column {found} in {where}{shown}: a secret column may be selected "
            "(it is shown masked) but not filtered, joined, grouped, ordered or computed on, which would "
            "reveal it a query at a time."
        )

    # -- queries -------------------------------------------------------------------------------------------
    def query(self, node: Any, parent: _Scope | None) -> Shape:
        shape = self._query(node, parent)
        self.built(len(shape.outputs or ()))
        return shape

    def built(self, count: int) -> None:
        """Count columns as they are made (a join's ``*``, a select list's), not once a query is done: a
        chain of self-joins doubles them at each step, and the check must stop it at the bound."""
        self.columns += count
        if self.columns > _MAX_COLUMNS:
            raise CapabilityError(
                f"The query builds more than {_MAX_COLUMNS:,} columns in its subqueries and CTEs, more than "
                "query_sql traces."
            )

    def _query(self, node: Any, parent: _Scope | None) -> Shape:
        if isinstance(node, exp.Subquery):
            self._check_args(node, {"this", "alias"}, "a subquery")
            return self._query(node.this, parent)
        if isinstance(node, exp.Select):
            return self._select(node, parent)
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, parent)
        if isinstance(node, exp.Values):
            return self._values(node, parent)
        raise Untraceable(f"a {node.key.upper()}")

    def _with(self, node: Any, scope: _Scope) -> None:
        with_ = node.args.get("with_")
        if with_ is None:
            return
        self._check_args(with_, {"expressions", "recursive"}, "WITH")
        names = [cte.alias_or_name.lower() for cte in with_.expressions]
        for at, cte in enumerate(with_.expressions):
            self._check_args(cte, {"this", "alias", "materialized"}, "a CTE")
            name = names[at]
            _refuse_later_ctes(cte, names[at + 1 :] if with_.args.get("recursive") else names[at:])
            columns = [c.name.lower() for c in cte.args["alias"].columns] if cte.args.get("alias") else []
            if with_.args.get("recursive"):
                scope.ctes[name] = self._recursive(cte.this, name, columns, scope)
            else:
                scope.ctes[name] = _relation(name, self.query(cte.this, scope), columns)

    def _recursive(self, body: Any, name: str, columns: list[str], scope: _Scope) -> Relation:
        """A recursive CTE, read again with its own columns until they stop changing (each reading checks
        its clauses with what its columns carry so far; the last one, with all they can carry)."""
        current = Relation(name, columns or None, [NOTHING] * len(columns))
        for _ in range(_MAX_RECURSION + len(columns)):
            scope.ctes[name] = current
            found = _relation(name, self.query(body, scope), columns)
            if found.names == current.names and found.flows == current.flows and found.extra == current.extra:
                return found
            current = found
        raise Untraceable(f"the recursive CTE {name}, whose columns keep changing")

    def _select(self, node: Any, parent: _Scope | None) -> Shape:
        self._check_args(node, _SELECT_ARGS, "this SELECT")
        scope = _Scope(parent)
        self._with(node, scope)
        source = node.args.get("from_")
        if source is not None:
            self._add(source.this, scope)
        for join in node.args.get("joins") or []:
            self._join(join, scope)
        for lateral in node.args.get("laterals") or []:
            self._add(lateral, scope)
        for window in node.args.get("windows") or []:
            flow = self._window_parts(window, scope, "a WINDOW clause")
            scope.windows[window.name.lower()] = flow
        outputs: list[Output] | None = []
        everything: Flow = NOTHING
        for projection in node.expressions:
            expanded = self._projection(projection, scope)
            if expanded is None or outputs is None:
                outputs = None
                everything |= self._everything_of(projection, scope)
                continue
            self.built(len(expanded))
            for output in expanded:
                outputs.append(output)
                if output.name:
                    scope.aliases[output.name] = scope.aliases.get(output.name, NOTHING) | output.flow
        shape = Shape(outputs, everything)
        flows = shape.flows if outputs is not None else [shape.union()]
        distinct = node.args.get("distinct")
        if distinct is not None:
            if distinct.args.get("on") is not None:
                self._positional(distinct.args["on"], flows, scope, "DISTINCT ON")
            else:
                for flow in flows:
                    self.use(flow, "DISTINCT (which compares rows)", node)
        for key, where in (("where", "the WHERE clause"), ("having", "HAVING"), ("qualify", "QUALIFY")):
            clause = node.args.get(key)
            if clause is not None:
                self.value(clause.this, scope, where)
        group = node.args.get("group")
        if group is not None:
            self._check_args(group, {"expressions", "grouping_sets", "cube", "rollup", "all"}, "GROUP BY")
            if group.args.get("all"):
                for flow in flows:
                    self.use(flow, "GROUP BY ALL", group)
            for key in ("expressions", "grouping_sets", "cube", "rollup"):
                for item in _as_list(group.args.get(key)):
                    self._positional(item, flows, scope, "GROUP BY")
        self._order_limit(node, flows, scope)
        return shape

    def _order_limit(self, node: Any, flows: list[Flow], scope: _Scope) -> None:
        order = node.args.get("order")
        if order is not None:
            for item in order.expressions:
                target = item.this if isinstance(item, exp.Ordered) else item
                if isinstance(target, exp.Var) and target.name.upper() == "ALL":
                    for flow in flows:
                        self.use(flow, "ORDER BY ALL", order)
                else:
                    self._positional(target, flows, scope, "ORDER BY")
        for key in ("limit", "offset"):
            clause = node.args.get(key)
            if clause is not None:
                for part in clause.iter_expressions():
                    self.value(part, scope, "LIMIT/OFFSET")

    def _positional(self, item: Any, flows: list[Flow], scope: _Scope, where: Where) -> None:
        """``ORDER BY 2`` / ``GROUP BY 2`` name a result column by its position, and so may ``(2)``, ``+2``,
        ``-(-2)``, ``2 COLLATE x`` or ``ROLLUP (1)`` in some database: a plain number is its column, any other
        item that reads no column may be any result column (it counts as all of them)."""
        core = item.this if isinstance(item, exp.Ordered) else item
        while isinstance(core, exp.Paren):
            core = core.this
        if isinstance(core, (exp.Tuple, exp.Rollup, exp.Cube, exp.GroupingSets)):
            for part in core.expressions:
                self._positional(part, flows, scope, where)
            return
        if isinstance(core, exp.Literal) and not core.is_string and core.this.isdigit():
            at = int(core.this) - 1
            flow = flows[at] if 0 <= at < len(flows) else frozenset().union(*flows)
            self.use(flow, where, item)
        elif not any(isinstance(n, _READS) for n in core.walk()):
            self.use(frozenset().union(*flows), where, item)
        else:
            self.value(item, scope, where)

    def _set_operation(self, node: Any, parent: _Scope | None) -> Shape:
        self._check_args(node, _SETOP_ARGS, f"this {node.key.upper()}")
        scope = _Scope(parent)
        self._with(node, scope)
        left, right = self.query(node.this, scope), self.query(node.expression, scope)
        if (
            node.args.get("by_name")
            or left.outputs is None
            or right.outputs is None
            or len(left.outputs) != len(right.outputs)
        ):
            shape = Shape(None, left.union() | right.union())
        else:
            shape = Shape(
                [
                    Output(a.name, a.flow | b.flow, a.star)
                    for a, b in zip(left.outputs, right.outputs, strict=True)
                ]
            )
        flows = shape.flows if shape.outputs is not None else [shape.union()]
        if node.args.get("distinct") is not False or not isinstance(node, exp.Union):  # only ALL keeps all
            kind = node.key.upper()
            for flow in flows:
                self.use(flow, f"{kind} (which compares rows)", node)
        names = _Scope(scope)
        names.aliases = {o.name: o.flow for o in shape.outputs or [] if o.name}
        names.relations = [_relation("", shape, [])]
        self._order_limit(node, flows, names)
        return shape

    def _values(self, node: Any, parent: _Scope | None) -> Shape:
        scope = _Scope(parent)
        width: int | None = None
        flows: list[Flow] = []
        for row in node.expressions:
            cells = row.expressions if isinstance(row, exp.Tuple) else [row]
            values = [self.value(cell, scope, BARE) for cell in cells]
            if width is None:
                width, flows = len(values), values
            elif width != len(values):
                raise Untraceable("VALUES rows of different lengths")
            else:
                flows = [a | b for a, b in zip(flows, values, strict=True)]
        return Shape([Output(None, f) for f in flows])

    # -- FROM ----------------------------------------------------------------------------------------------
    def _add(self, item: Any, scope: _Scope) -> Relation:
        relation = self._relation(item, scope)
        scope.relations.append(relation)
        self._extend_star(scope, relation, [])
        return relation

    def _extend_star(self, scope: _Scope, relation: Relation, merged: list[str]) -> None:
        """What `*` gives after ``relation`` joins: a ``USING``/``NATURAL`` column once (PostgreSQL and
        DuckDB put those first; SQLite keeps the left one where it is)."""
        if scope.star is None or relation.names is None:
            scope.star = None
            return
        right = [Output(n, f, True) for n, f in zip(relation.names, relation.flows, strict=True)]
        left = scope.star
        self.built(len(right) + (len(left) if merged else 0))
        if not merged:
            scope.star = left + right
            return
        gathered: dict[str, set[Source]] = {name: set() for name in merged}
        for o in left + right:
            if o.name in gathered:
                gathered[o.name].update(o.flow)
        both = {name: frozenset(flow) for name, flow in gathered.items()}
        rest = [o for o in right if o.name not in both]
        if self.dialect == "sqlite":
            scope.star = [Output(o.name, both.get(o.name or "", o.flow), True) for o in left] + rest
        else:
            first = [Output(name, flow, True) for name, flow in both.items()]
            scope.star = first + [o for o in left if o.name not in both] + rest

    def _relation(self, item: Any, scope: _Scope) -> Relation:
        alias_node = item.args.get("alias")
        alias = alias_node.name.lower() if alias_node is not None and alias_node.name else ""
        columns = [c.name.lower() for c in alias_node.columns] if alias_node is not None else []
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            self._check_args(item, _TABLE_ARGS, f"the relation {item.name}")
            relation = self._named(item, alias or item.name.lower(), columns, scope)
        elif isinstance(item, exp.Table) and isinstance(item.this, exp.Func):
            self._check_args(item, _TABLE_ARGS, "a table function")
            relation = self._function(item.this, alias, columns, scope)
        elif isinstance(item, (exp.Unnest, exp.Func)):
            relation = self._function(item, alias, columns, scope)
        elif isinstance(item, exp.Lateral):
            self._check_args(item, {"this", "alias", "view", "outer", "cross_apply", "ordinality"}, "LATERAL")
            if isinstance(item.this, exp.Query):
                relation = _relation(alias, self.query(item.this, scope), columns)
            else:
                relation = self._function(item.this, alias, columns, scope)
        elif isinstance(item, exp.Subquery):
            self._check_args(item, {"this", "alias", "pivots", "sample"}, "a subquery in FROM")
            view = bool(item.meta.get("view"))  # a view's body sees none of the statement's names or CTEs
            self.in_view += view
            try:
                relation = _relation(alias, self.query(item.this, None if view else scope), columns)
            finally:
                self.in_view -= view
        elif isinstance(item, exp.Values):
            relation = _relation(alias, self._values(item, scope), columns)
        else:
            raise Untraceable(f"{item.key.upper()} in FROM")
        for pivot in item.args.get("pivots") or []:
            relation = self._pivot(pivot, relation, scope)
        sample = item.args.get("sample")
        if sample is not None:
            self.value(sample, scope, "TABLESAMPLE")
        return relation

    def _named(self, table: Any, alias: str, columns: list[str], scope: _Scope) -> Relation:
        name = relation_key(table)
        cte = scope.cte(name) if not table.args.get("db") else None
        if cte is not None:
            return _renamed(Relation(alias, cte.names, list(cte.flows), cte.extra), columns)
        if name in self.opaque or name not in self.tables:
            return Relation(alias, None, [], frozenset({Source(name, "*")}))
        own = [c.lower() for c in self.tables[name]]
        return _renamed(Relation(alias, own, [frozenset({Source(name, c)}) for c in own]), columns)

    def _function(self, func: Any, alias: str, columns: list[str], scope: _Scope) -> Relation:
        """A function in FROM makes rows from its arguments: they are used, and its columns come from them."""
        where = f"the arguments of {_text(func, self.dialect, 40)}, which makes rows"
        flow = frozenset().union(*(self.value(arg, scope, where) for arg in func.iter_expressions()))
        if isinstance(func, exp.Unnest) and func.args.get("alias") is not None:
            alias_node = func.args["alias"]
            alias = alias or alias_node.name.lower()
            columns = columns or [c.name.lower() for c in alias_node.columns]
        name = func.name.lower() if isinstance(func, exp.Anonymous) else ""
        known = funcs.FUNCTION_COLUMNS.get(self.dialect, {}).get(name)
        if known:  # a catalog function's columns, its defaults among them: each its own source
            own = list(known)
            return _renamed(Relation(alias, own, [flow | {Source(name, c)} for c in own]), columns)
        if columns:
            return Relation(alias, columns, [flow] * len(columns), flow)
        return Relation(alias, None, [], flow)

    def _pivot(self, pivot: Any, relation: Relation, scope: _Scope) -> Relation:
        """PIVOT/UNPIVOT turn values into column names (and back): every column they name is used."""
        inner = _Scope(scope, [relation])
        flow = relation.everything
        for part in pivot.iter_expressions():
            flow |= self.value(part, inner, "PIVOT/UNPIVOT (which makes column names from values)")
        return Relation(pivot.alias.lower() if pivot.alias else relation.alias, None, [], flow)

    def _join(self, join: Any, scope: _Scope) -> None:
        self._check_args(join, _JOIN_ARGS, "this JOIN")
        left = list(scope.relations)
        left_names = {o.name for o in scope.star or []}
        right = self._relation(join.this, scope)
        scope.relations.append(right)
        for key in ("on", "match_condition"):
            if join.args.get(key) is not None:
                self.value(join.args[key], scope, "a JOIN … ON condition")
        names = [c.name.lower() for c in join.args.get("using") or []]
        if (join.args.get("method") or "").upper() == "NATURAL":
            if right.names is None or any(r.names is None for r in left):
                flow = right.everything.union(*(r.everything for r in left))
                self.use(flow, "a NATURAL JOIN (which compares the columns both sides have)", join)
            names = [n for n in right.names or [] if n in left_names]
        for name in names:
            flow = right.column(name).union(*(r.column(name) for r in left if r.has(name) or r.names is None))
            self.use(flow, f"JOIN … USING/NATURAL ({name})", join)
        self._extend_star(scope, right, names)

    # -- the select list -----------------------------------------------------------------------------------
    def _projection(self, projection: Any, scope: _Scope) -> list[Output] | None:
        """The result columns one item of the select list makes (``None``: how many is not known)."""
        if isinstance(projection, exp.Star):
            return self._star(projection, scope.star, scope)
        if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            wanted = projection.table.lower()
            chosen = [r for s in scope.chain() for r in s.relations if r.alias == wanted][:1]
            if not chosen or chosen[0].names is None:
                return None
            own = [Output(n, f, True) for n, f in zip(chosen[0].names, chosen[0].flows, strict=True)]
            return self._star(projection.this, own, scope)
        if any(
            isinstance(n, exp.Columns) or (isinstance(n, exp.Star) and not isinstance(n.parent, exp.Count))
            for n in _own_nodes(projection)
        ):
            return None  # `COLUMNS(…)`, `* LIKE …`: the database decides how many columns
        flow = self.value(projection, scope, BARE)
        name = projection.alias_or_name if isinstance(projection, (exp.Alias, exp.Column)) else ""
        return [Output(name.lower() or None, flow)]

    def _everything_of(self, projection: Any, scope: _Scope) -> Flow:
        """What a select-list item of unknown width may carry: every column of every relation in reach."""
        flow = scope.everything() | frozenset({EVERY})
        self.use(flow, BARE, projection)
        return flow

    def _star(self, star: Any, given: list[Output] | None, scope: _Scope) -> list[Output] | None:
        self._check_args(star, {"except_", "replace", "rename"}, "this *")
        if given is None:
            return None
        outputs = list(given)
        for column in star.args.get("except_") or []:
            outputs = [o for o in outputs if o.name != column.name.lower()]
        for item in star.args.get("replace") or []:
            name = item.alias.lower()
            flow = self.value(item.this, scope, BARE)
            outputs = [Output(o.name, flow, True) if o.name == name else o for o in outputs]
        for item in star.args.get("rename") or []:
            old, new = item.this.name.lower(), item.alias.lower()
            outputs = [Output(new, o.flow, True) if o.name == old else o for o in outputs]
        for output in outputs:
            self.use(output.flow, BARE, star)
        return outputs

    # -- values --------------------------------------------------------------------------------------------
    def value(self, node: Any, scope: _Scope, where: Where) -> Flow:
        """Where the value of ``node`` comes from; each column it reads is used at ``where``."""
        if isinstance(node, (exp.Alias, exp.Paren)):
            return self.value(node.this, scope, where)
        inner = node if isinstance(where, str) and not where else where  # computing with what it reads
        if isinstance(node, exp.Pseudocolumn):
            return NOTHING
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                flow = frozenset().union(*(r.everything for r in scope.relations)) | {EVERY}
            else:
                flow = self._resolve(node, scope)
            self.use(flow, where, node)
            return flow
        if isinstance(node, (exp.Query, exp.Subquery, exp.Values)):
            flow = self.query(node, scope).union()
            self.use(flow, where, node)
            return flow
        if isinstance(node, exp.Exists):
            self.query(node.this, scope)  # what EXISTS gives is whether a row exists: the rows' WHERE decides
            return NOTHING
        if isinstance(node, exp.Window):
            return self._window(node, scope, inner)
        if isinstance(node, exp.Lambda):
            bound = _Scope(scope)
            bound.relations = scope.relations
            bound.aliases = scope.aliases
            bound.lambdas = {p.name.lower() for p in node.expressions}
            return self.value(node.this, bound, inner)
        if isinstance(node, exp.Star):
            if isinstance(node.parent, exp.Count):
                return NOTHING
            flow = scope.everything() | {EVERY}
            self.use(flow, inner, node)
            return flow
        if isinstance(node, (exp.PositionalColumn, exp.Columns)):
            traced = _positional_column(node, scope)
            flow = scope.everything() | {EVERY} if traced is None else traced
            self.use(flow, where, node)
            return flow
        if isinstance(node, exp.Var):
            return self._var(node, scope, where)
        if isinstance(node, _CONSTANT_KINDS):
            return NOTHING
        if _plain(node):
            flow = NOTHING
            stack = list(node.iter_expressions())
            while stack:  # a loop, not a recursion: `a OR b OR …` a thousand deep is one chain
                child = stack.pop()
                if _plain(child) or isinstance(child, (exp.Alias, exp.Paren)):
                    stack.extend(child.iter_expressions())
                else:
                    flow |= self.value(child, scope, inner)
            return flow
        raise Untraceable(f"{_text(node, self.dialect)} ({node.key.upper()})")

    def _window(self, node: Any, scope: _Scope, inner: Where) -> Flow:
        flow = self.value(node.this, scope, inner)
        flow |= self._window_parts(node, scope, "a window's PARTITION BY or ORDER BY")
        if node.alias and node.alias.lower() in scope.windows:
            flow |= scope.windows[node.alias.lower()]
        return flow

    def _window_parts(self, node: Any, scope: _Scope, where: Where) -> Flow:
        flow = NOTHING
        for key in ("partition_by", "order", "spec"):
            for part in _as_list(node.args.get(key)):
                flow |= self.value(part, scope, where)
        return flow

    def _var(self, node: Any, scope: _Scope, where: Where) -> Flow:
        """A bare word (``EXTRACT(YEAR …)``, a DuckDB keyword): a column of that name, if one is in reach."""
        name = node.name.lower()
        flow = frozenset().union(*(r.column(name) for s in scope.chain() for r in s.relations if r.has(name)))
        self.use(flow, where, node)
        return flow

    def _resolve(self, column: Any, scope: _Scope) -> Flow:
        name = column.name.lower()
        table = column.table.lower()
        if table:
            for level in scope.chain():
                for relation in level.relations:
                    if relation.alias == table:
                        return relation.column(name) if relation.has(name) else _unknown(relation, name)
            found = self._unqualified(table, scope)  # `s.field` of a struct column `s`
            return found if found is not None else frozenset({EVERY})
        found = self._unqualified(name, scope)
        if found is not None:
            return found
        if name in _PSEUDO_COLUMNS.get(self.dialect, ()):
            return NOTHING
        return frozenset({EVERY})

    def _unqualified(self, name: str, scope: _Scope) -> Flow | None:
        """A bare name: the columns of that name at the nearest level that has one (every relation of
        unknown columns there and above may have it too), a name of the select list, a whole relation used
        as a value; ``None`` when nothing in reach has it."""
        found: Flow = NOTHING
        hit = False
        for level in scope.chain():
            if name in level.lambdas:
                return found
            for relation in level.relations:
                if relation.has(name):
                    found |= relation.column(name)
                    hit = True
                elif relation.names is None:
                    found |= relation.everything
            if name in level.aliases:
                found |= level.aliases[name]
                hit = True
            if not hit:
                for relation in level.relations:
                    if relation.alias == name:  # `SELECT u FROM users u`: the whole row
                        found |= relation.everything
                        hit = True
            if hit:
                return found
        wild = any(r.names is None for level in scope.chain() for r in level.relations)
        return found if wild else None

    # -- helpers -------------------------------------------------------------------------------------------
    def _check_args(self, node: Any, known: set[str], what: str) -> None:
        extra = [k for k, v in node.args.items() if k not in known and v not in (None, False, [], "")]
        if extra:
            raise Untraceable(f"{what} has {extra[0].rstrip('_').upper()}")


def _refuse_later_ctes(cte: Any, later: list[str]) -> None:
    """Refuse a CTE that reads a CTE of its own WITH defined after it (or itself, without ``RECURSIVE``):
    SQLite and PostgreSQL's ``WITH RECURSIVE`` bind it to that CTE, PostgreSQL and DuckDB otherwise to a
    relation outside; the trace binds names in order, so it cannot tell which."""
    if not later:
        return
    for table in cte.this.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier) and not table.args.get("db"):
            name = table.name.lower()
            if name in later:
                raise CapabilityError(
                    f"The CTE {cte.alias_or_name} reads {name}, a CTE of the same WITH that is not defined "
                    "before it; query_sql cannot tell which relation that name reads here, so define each "
                    "CTE before the ones that read it."
                )


def _relation(alias: str, shape: Shape, columns: list[str]) -> Relation:
    if shape.outputs is None:
        return Relation(alias, None, [], shape.union())
    names = [o.name or f"#{i + 1}" for i, o in enumerate(shape.outputs)]
    return _renamed(Relation(alias, names, shape.flows, shape.everything), columns)


def _renamed(relation: Relation, columns: list[str]) -> Relation:
    """An alias column list (``AS u(a, b, x)``) renames the first columns by position."""
    if not columns:
        return relation
    if relation.names is None or len(columns) > len(relation.names):
        return Relation(relation.alias, None, [], relation.everything)
    return Relation(relation.alias, columns + relation.names[len(columns) :], relation.flows, relation.extra)


def _unknown(relation: Relation, name: str) -> Flow:
    """A column a relation is not known to have: anything it has may be behind it (and, when its columns
    are known and this is not one of them, anything at all: a typo, a field of a value)."""
    return relation.everything if relation.names is None else relation.everything | frozenset({EVERY})


def _positional_column(node: Any, scope: _Scope) -> Flow | None:
    """DuckDB's ``#3``: the third column of what ``*`` would give (``None`` when that is not known)."""
    number = node.this
    if not isinstance(node, exp.PositionalColumn) or not isinstance(number, exp.Literal):
        return None
    at = int(number.this) - 1 if str(number.this).isdigit() else -1
    return scope.star[at].flow if scope.star is not None and 0 <= at < len(scope.star) else None


def _plain(node: Any) -> bool:
    """An operator or function whose value is computed from its children alone."""
    if isinstance(node, (exp.Exists, exp.Columns)):
        return False
    return isinstance(node, exp.Func) or type(node).__name__ in _VALUE_KINDS


def _own_nodes(node: Any) -> Iterable[Any]:
    """``node`` and what it holds, without going into the queries nested in it."""
    yield node
    for child in node.iter_expressions():
        if not isinstance(child, (exp.Query, exp.Subquery)):
            yield from _own_nodes(child)


_COMPUTATION = "a computation in the select list"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, exp.Order):
        return list(value.expressions)
    return [value]


def _text(node: Any, dialect: str, limit: int = 60) -> str:
    try:
        text = node.sql(dialect=dialect or None)
    except Exception:
        text = node.key.upper()
    return text if len(text) <= limit else text[: limit - 1] + "…"
