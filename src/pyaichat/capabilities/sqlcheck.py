"""Is this SQL one read-only statement? Checked on the parse tree, before it is sent.

This is the first of two walls (the database holds the second: a read-only connection or transaction, see
``query_sql``). A list of bad words cannot see what the database sees — ``"pg_read_file"(…)``,
``pg_catalog."pg_read_file"(…)``, ``U&"pg_r\\0065ad_file"(…)`` are the same function to PostgreSQL — so the
statement is parsed with **sqlglot** (a maintained, pure-Python SQL parser with PostgreSQL, DuckDB and SQLite
dialects that resolves quoting and case the way each database does), in the dialect of the connection, and:

* it must parse, as exactly one statement (anything the parser cannot read is refused);
* every node of the tree must be read-only syntax (an allow-list of node kinds: ``SELECT``, joins, set
  operations, CTEs, expressions …) — no ``INTO``, row locks, ``COPY``, ``PRAGMA``, ``SET``, ``ATTACH``,
  ``INSTALL``/``LOAD``, DML or DDL anywhere, not even inside a CTE;
* every function called must be on the allow-list of its database (``sqlfunctions``), compared under the name
  the database resolves (quotes removed, any case, Unicode escapes decoded), qualified by no schema but the
  built-in one; user-defined operators and types are refused (their code is the database owner's);
* catalog relations that expose values, statements or credentials (``pg_stats``, ``pg_stat_activity``,
  ``pg_authid`` …: ``sqlfunctions.REFUSED_RELATIONS``) are not read, by the exact name the database
  resolves; ``check_relations`` runs again once the statement's views are expanded (``sqllineage``);
* it is at most ``MAX_CHARS`` long: the parser runs in the person's process, where no deadline can stop it
  (a 460 KB ``CASE`` cost 5.7 s of CPU), so its work is bounded by the size of what it reads.

**What is sent is what was checked**: the statement is written back from the checked tree (without comments,
in the dialect's canonical spelling) and that text is parsed and checked again; the database never sees the
text as typed. ``EXPLAIN`` with its options is read here (the parser does not), and what it explains is
checked like any statement.
"""

from __future__ import annotations

import contextvars
import logging
import re
from dataclasses import dataclass
from typing import Any

from ..errors import CapabilityError
from . import sqlfunctions as funcs

DIALECTS = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "mysql": "mysql",
    "mariadb": "mysql",
}
_EXPLAIN_WORDS = {"ANALYZE", "ANALYSE", "VERBOSE", "QUERY", "PLAN"}
_EXPLAIN_OPTIONS = {
    "ANALYZE", "ANALYSE", "VERBOSE", "COSTS", "SETTINGS", "GENERIC_PLAN", "BUFFERS", "SERIALIZE", "WAL",
    "TIMING", "SUMMARY", "MEMORY", "FORMAT", "TRUE", "FALSE", "ON", "OFF", "0", "1", "TEXT", "XML", "JSON",
    "YAML", "NONE", "BINARY", ",",
}  # fmt: skip
_quiet = contextvars.ContextVar("sqlcheck_quiet", default=False)
MAX_CHARS = 10_000  # benchmarks/query_sql.py: the slowest shapes of this size cost ~0.2 s of CPU
MAX_NESTING = 100  # parentheses deep: a fixed bound, not whatever recursion limit the process has now


@dataclass(frozen=True)
class Checked:
    """A statement that passed: ``sql`` is the text to send (written back from the checked tree)."""

    sql: str
    dialect: str
    tree: Any  # the sqlglot tree of the statement (of what EXPLAIN explains)
    explain: bool = False
    runs_statement: bool = False  # EXPLAIN ANALYZE runs what it explains


def _nesting(text: str) -> int:
    """How deep the statement's parentheses go outside quotes (the parser's and the tracer's recursion
    follows them; bounded here so that the answer does not depend on the interpreter's recursion limit)."""
    deepest = depth = 0
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    return deepest


def dialect_of(name: str) -> str:
    """The sqlglot dialect for a database's name ("" reads standard SQL, with the common allow-list)."""
    return DIALECTS.get((name or "").lower(), "")


def check(sql: str, dialect: str = "") -> Checked:
    """``Checked`` if ``sql`` is one read-only statement for ``dialect``; else ``CapabilityError`` with one
    sentence saying why it was refused."""
    sqlglot = _sqlglot()
    text = (sql or "").strip()
    if not text.rstrip(";").strip():
        raise CapabilityError("The SQL is empty.")
    if len(text) > MAX_CHARS:
        raise CapabilityError(
            f"The SQL is {len(text):,} characters long; query_sql reads statements of at most {MAX_CHARS:,} "
            "(shorten it, e.g. with a CTE or a join instead of a long literal list)."
        )
    if _nesting(text) > MAX_NESTING:
        raise CapabilityError("The SQL is nested too deeply for query_sql to read it.")
    token = _quiet.set(True)
    try:
        if dialect == "postgres":
            text = _decode_unicode_names(sqlglot, text)
        prefix, body, runs = _explain(sqlglot, text, dialect)
        tree = _parse(sqlglot, body, dialect)
        _check_tree(tree, dialect)
        sent = tree.sql(dialect=dialect or None, comments=False)
        again = _parse(sqlglot, sent, dialect)  # what is sent passes as the parser reads it
        _check_tree(again, dialect)
    except RecursionError:
        raise CapabilityError("The SQL is nested too deeply for query_sql to read it.") from None
    finally:
        _quiet.reset(token)
    return Checked(prefix + sent, dialect, again, bool(prefix), runs)


# -- the parser ----------------------------------------------------------------------------------------------
class _Quiet(logging.Filter):
    """sqlglot logs a warning when it falls back to an opaque command; ours are refused, never logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _quiet.get()


def _sqlglot() -> Any:
    try:
        import sqlglot  # deferred: only with the first query (pyaichat[data])
    except ImportError:
        from ..extras import install_command  # only to say how

        raise CapabilityError(
            f"query_sql needs the sqlglot package to read SQL safely: {install_command('data')}."
        ) from None
    logger = logging.getLogger("sqlglot")
    if not any(isinstance(f, _Quiet) for f in logger.filters):
        logger.addFilter(_Quiet())
    return sqlglot


def _parse(sqlglot: Any, text: str, dialect: str) -> Any:
    try:
        trees = [t for t in sqlglot.parse(text, read=dialect or None) if t is not None]
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CapabilityError(f"The SQL could not be read, so it is not run ({_clip(first)}).") from None
    if not trees:
        raise CapabilityError("The SQL is empty.")
    if len(trees) > 1:
        raise CapabilityError("Only one SQL statement can run at a time (there is a ';' in the middle).")
    return trees[0]


def _clip(text: str, limit: int = 120) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _explain(sqlglot: Any, text: str, dialect: str) -> tuple[str, str, bool]:
    """``("EXPLAIN <options> ", what it explains, whether it runs it)``; ``("", text, False)`` otherwise."""
    from sqlglot.tokens import TokenType  # sqlglot: with the first query_sql

    head = re.match(r"\s*EXPLAIN\b", text, re.IGNORECASE)
    if head is None:
        return "", text, False
    text = text[head.end() :]  # the tokenizer reads EXPLAIN as a command that swallows the rest
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect or None).tokenize(text)
    except Exception:
        raise CapabilityError("The SQL could not be read, so it is not run (a string or name is not closed).")
    words: list[str] = []
    k = 0
    while k < len(tokens):
        tok, upper = tokens[k], tokens[k].text.upper()
        if upper in _EXPLAIN_WORDS:
            words.append(upper)
            k += 1
        elif tok.token_type == TokenType.L_PAREN and k + 1 < len(tokens) and _is_option(tokens[k + 1]):
            end = k + 1
            while end < len(tokens) and tokens[end].token_type != TokenType.R_PAREN:
                if tokens[end].text.upper() not in _EXPLAIN_OPTIONS:
                    raise CapabilityError(
                        f"EXPLAIN has an option query_sql does not know: {tokens[end].text}."
                    )
                end += 1
            if end >= len(tokens):
                raise CapabilityError("EXPLAIN has an unclosed list of options.")
            words.append("(" + " ".join(t.text.upper() for t in tokens[k + 1 : end]).replace(" ,", ",") + ")")
            k = end + 1
        else:
            break
    if k >= len(tokens):
        raise CapabilityError("EXPLAIN needs the statement it explains.")
    if " ".join(words).count("QUERY") != " ".join(words).count("PLAN"):
        raise CapabilityError("EXPLAIN QUERY PLAN is the only EXPLAIN form with QUERY or PLAN.")
    runs = any(w.startswith(("ANALY", "(ANALY")) or "ANALYZE" in w or "ANALYSE" in w for w in words)
    prefix = " ".join(["EXPLAIN", *words]) + " "
    return prefix, text[tokens[k].start :], runs


def _is_option(tok: Any) -> bool:
    return tok.text.upper() in _EXPLAIN_OPTIONS - {","}


# -- PostgreSQL's U&"…" names --------------------------------------------------------------------------------
def _decode_unicode_names(sqlglot: Any, text: str) -> str:
    """``U&"d\\0061ta"`` (with ``UESCAPE``) written as the plain ``"data"`` it names: the parser would read
    ``U & "…"`` and compare an escaped spelling, not the name PostgreSQL resolves."""
    from sqlglot.tokens import TokenType  # sqlglot: with the first query_sql

    try:
        tokens = sqlglot.Dialect.get_or_raise("postgres").tokenize(text)
    except Exception:
        return text  # the parse that follows refuses it with its own sentence
    out, last, k = [], 0, 0
    while k + 2 < len(tokens):
        u, amp, name = tokens[k], tokens[k + 1], tokens[k + 2]
        adjacent = u.end + 1 == amp.start and amp.end + 1 == name.start
        if (
            u.text.upper() == "U"
            and amp.token_type == TokenType.AMP
            and adjacent
            and name.token_type == TokenType.IDENTIFIER
        ):
            escape, end, skip = "\\", name.end, 3
            if k + 4 < len(tokens) and tokens[k + 3].text.upper() == "UESCAPE":
                escape, end, skip = tokens[k + 4].text, tokens[k + 4].end, 5
                if len(escape) != 1 or escape in "+'\"0123456789abcdefABCDEF \t\n":
                    raise CapabilityError('The SQL has a U&"…" name with an invalid UESCAPE character.')
            decoded = _unescape(name.text, escape)
            out.append(text[last : u.start])
            out.append('"' + decoded.replace('"', '""') + '"')
            last, k = end + 1, k + skip
            continue
        k += 1
    return "".join(out) + text[last:] if out else text


def _unescape(body: str, escape: str) -> str:
    result, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != escape:
            result.append(ch)
            i += 1
            continue
        if body.startswith(escape, i + 1):
            result.append(escape)
            i += 2
            continue
        plus = body.startswith("+", i + 1)
        digits = body[i + 2 : i + 8] if plus else body[i + 1 : i + 5]
        if not re.fullmatch(r"[0-9A-Fa-f]{6}" if plus else r"[0-9A-Fa-f]{4}", digits):
            raise CapabilityError('The SQL has a U&"…" name with an invalid Unicode escape.')
        result.append(chr(int(digits, 16)) if int(digits, 16) <= 0x10FFFF else "\ufffd")
        i += len(digits) + (2 if plus else 1)
    return "".join(result)


# -- the tree ------------------------------------------------------------------------------------------------
_ROOTS = ("Select", "Union", "Intersect", "Except", "Values", "Subquery")
_SYNTAX_NAMES = """
    Add BitwiseAnd BitwiseLeftShift BitwiseOr BitwiseRightShift BitwiseXor DPipe Div Dot EQ Escape GT GTE Glob
    ILike IntDiv Is LT LTE Like Mod Mul NEQ NullSafeEQ NullSafeNEQ Overlaps SimilarTo Sub Distance Kwarg
    RegexpLike Adjacent ExtendsLeft ExtendsRight BitwiseNot Neg Not Paren
    Alias Aliases All Any AtTimeZone Between BitString Boolean Bracket ByteString CTE Column DataType
    DataTypeParam Distinct Except Filter From FromTimeZone Group GroupingSets Cube Rollup Having HexString
    Identifier IgnoreNulls RespectNulls In Interval IntervalSpan Join Lambda Lateral Limit LimitOptions
    Literal National Null Offset Order Ordered Qualify RawString Select Slice Star Subquery Table TableAlias
    TableSample Tuple UnicodeString Union Intersect Values Var Where Window WindowSpec With WithinGroup
    PositionalColumn Fetch Introducer Heredoc JSONPath JSONPathKey JSONPathRoot JSONPathSubscript
    JSONPathWildcard JSONPathSlice JSONPathSelector JSONPathUnion JSONPathPart JSONPathFilter
    JSONPathRecursive JSONPathScript Pseudocolumn ColumnPrefix PivotAlias Pivot PivotAny UnpivotColumns
    PropertyEQ Columns
"""
_SYNTAX = frozenset(_SYNTAX_NAMES.split())


def _check_tree(tree: Any, dialect: str) -> None:
    from sqlglot import exp  # sqlglot: with the first query_sql

    kind = type(tree).__name__
    if kind not in _ROOTS:
        what = str(tree.this).split()[0] if isinstance(tree, exp.Command) else tree.key
        raise CapabilityError(
            f"Only a read-only SELECT, WITH … SELECT, VALUES or EXPLAIN can run; this is {what.upper()}."
        )
    allowed = funcs.ALLOWED.get(dialect, funcs.ALLOWED[""])
    effects = {**funcs.ALL_EFFECTS, **funcs.EFFECTS.get(dialect, {})}
    for node in tree.walk():
        name = type(node).__name__
        if isinstance(node, exp.Func):
            _check_function(node, name, allowed, effects, dialect)
        elif name not in _SYNTAX:
            raise CapabilityError(f"The SQL uses {_words(node.key.upper())}, which query_sql does not run.")
        elif isinstance(node, exp.DataType) and node.this == exp.DataType.Type.USERDEFINED:
            raise CapabilityError(
                f"The SQL uses the type {node.sql(dialect=dialect or None)}, which is not a built-in type."
            )
    check_relations(tree, dialect)


def _words(key: str) -> str:
    return {"INTO": "SELECT … INTO (a write)", "LOCK": "a row lock (FOR UPDATE/SHARE)"}.get(key, key)


def _check_function(
    node: Any, kind: str, allowed: frozenset[str], effects: dict[str, str], dialect: str
) -> None:
    from sqlglot import exp  # sqlglot: with the first query_sql

    if kind in funcs.EFFECT_CLASSES:
        raise CapabilityError(
            f"The SQL calls {node.sql_name().lower()}(), which {funcs.EFFECT_CLASSES[kind]}, so it is "
            "not allowed here."
        )
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        schema = parent.this.name.lower() if isinstance(parent.this, (exp.Identifier, exp.Column)) else "?"
        if schema not in funcs.BUILTIN_SCHEMAS.get(dialect, set()):
            raise CapabilityError(
                f"The SQL calls a function of the schema {schema!r}; only the database's built-in functions "
                "can run here."
            )
    if not isinstance(node, exp.Anonymous):
        return
    name = node.name.lower()
    reason = effects.get(name)
    if reason:
        raise CapabilityError(
            f"The SQL calls {name}(), which {reason}, so it is not allowed here, whatever the role."
        )
    if name not in allowed:
        raise CapabilityError(
            f"The SQL calls {name}(), which is not on query_sql's list of functions that only read; "
            "write the query without it."
        )


def check_relations(tree: Any, dialect: str) -> None:
    """Refuse a statement that reads a catalog relation exposing values, statements or credentials."""
    from sqlglot import exp  # sqlglot: with the first query_sql

    refused = funcs.REFUSED_RELATIONS.get(dialect, {})
    for node in tree.find_all(exp.Table):
        reason = refused.get(node.name.lower()) if isinstance(node.this, exp.Identifier) else None
        if reason:
            raise CapabilityError(f"The SQL reads {node.name}, which {reason}, so it is not allowed here.")


def view_query(create: str, dialect: str) -> str:
    """The query of a ``CREATE VIEW`` statement as the database keeps it (DuckDB's ``duckdb_views().sql``),
    written back by the parser; a refusal in one sentence when it cannot be read."""
    import sqlglot  # sqlglot: with the first query_sql
    from sqlglot import exp

    try:
        statement = sqlglot.parse_one(create, read=dialect)
    except Exception:
        statement = None
    body = statement.expression if isinstance(statement, exp.Create) else None
    if not isinstance(body, exp.Expression):
        raise CapabilityError("The query reads a view whose definition query_sql cannot read: refused.")
    return body.sql(dialect=dialect)
