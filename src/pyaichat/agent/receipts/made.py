"""What produced a result, read for what its values are: an expression's subject and aggregate
(``sales.groupby('region').price.mean()``: the mean of price, by region), a ``run_python`` code's ``print``
calls, a SQL SELECT's column expressions (``ROUND(SUM(amount), 2) AS total``: a sum of amount)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .words import name_words, stem

# an output column: its aggregate, the words of what it is of, and what it counts (a COUNT(*)'s table)
Column = tuple[str, frozenset[str], frozenset[str]]

_MODULES = frozenset(
    [
        "pd",
        "np",
        "pl",
        "dd",
        "len",
        "round",
        "abs",
        "float",
        "int",
        "str",
        "print",
        "sorted",
        "sum",
        "min",
        "max",
        "list",
    ]
)


# the last call of an expression that says what its values are (``.round()``, ``.sort_values()`` do not)
_METHOD_AGG = {
    "mean": "mean",
    "average": "mean",
    "median": "median",
    "sum": "sum",
    "count": "count",
    "size": "count",
    "max": "max",
    "min": "min",
    "std": "std",
    "var": "std",
    "nunique": "nunique",
    "idxmax": "max",
    "idxmin": "min",
    "pct_change": "change",
    "diff": "diff",
    "value_counts": "count",
    "cumsum": "sum",
    "quantile": "median",
    "npartitions": "partitions",
    "shape": "rows",
    "height": "rows",
    "n_unique": "nunique",
    "most_common": "count",
}


_NEUTRAL = frozenset(
    [
        "round",
        "sort_values",
        "sort_index",
        "sort",
        "sort_by",
        "reset_index",
        "rename",
        "head",
        "tail",
        "compute",
        "to_frame",
        "astype",
        "abs",
        "copy",
        "fillna",
        "dropna",
        "clip",
        "loc",
        "iloc",
        "T",
        "transpose",
        "unstack",
        "to_dict",
        "tolist",
        "items",
        "select",
        "collect",
    ]
)


_FLAGS = frozenset(
    [
        "contains",
        "isna",
        "isnull",
        "notna",
        "notnull",
        "between",
        "startswith",
        "endswith",
        "duplicated",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
    ]
)


# what a method makes of its values, in an answer's words
_METHOD_WORDS = {
    "isna": frozenset({"missing", "nan", "null", "na", "empti"}),
    "isnull": frozenset({"missing", "nan", "null", "na", "empti"}),
    "split": frozenset({"word"}),
    "len": frozenset({"length", "long", "charact", "char"}),
    "contains": frozenset({"mention", "contain"}),
}


_ATTRS = frozenset(
    [
        "str",
        "dt",
        "loc",
        "iloc",
        "values",
        "index",
        "columns",
        "shape",
        "dtypes",
        "cat",
        "sparse",
        "plot",
        "T",
        "at",
        "iat",
    ]
)


_SQL_AGG = {"avg": "mean", "sum": "sum", "count": "count", "max": "max", "min": "min", "total": "sum"}


_CHANGE_WORDS = frozenset({"growth", "chang", "change", "yoy", "delta", "pct_change"})


def column_agg(col: str) -> str:
    """What a column's name says its values are (``n``, ``orders``: counts; ``avg_amount``: means; ``total``:
    sums; ``largest``: a maximum; ``refunded_pct``: a share)."""
    key = col.lower()
    if key in _SQL_AGG:
        return _SQL_AGG[key]
    if key.startswith(("avg", "mean")):
        return "mean"
    if key in ("n", "orders", "trips", "reviews") or key.startswith(("num_", "count", "n_")):
        return "count"
    if key in ("largest", "biggest", "highest"):
        return "max"
    if key in ("smallest", "lowest"):
        return "min"
    if key.endswith("pct") or "percent" in key or "%" in key:
        return "share"
    if name_words(col) & _CHANGE_WORDS:
        return "change"
    return ""


# -- what produced a result ---------------------------------------------------------------------------------
@dataclass
class Made:
    """What an expression says of its values."""

    subject: frozenset[str] = frozenset()
    agg: str = ""
    obj: frozenset[str] = frozenset()  # the words of the object it starts from (``sales``)
    columns: dict[str, Column] = field(default_factory=dict)  # named aggregations
    scalar: bool = False  # one value (an aggregate of a column), not a table
    percent: bool = False  # times 100: in percent units
    column: str = ""  # the column it reads (``price``), for saying what a value is


def read_expr(expr: str) -> Made:
    """The subject and aggregate of an expression (``sales.groupby('region').price.mean()`` → price, mean);
    arithmetic at the top says what kind of number it is (``a / b - 1``: a relative change)."""
    expr = expr.strip()
    if not expr:
        return Made()
    obj = next((n for n in re.findall(r"[A-Za-z_]\w*", expr) if n not in _MODULES and n != "crosstab"), "")
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return Made(subject=frozenset(w for w in map(stem, re.findall(r"[A-Za-z_]\w+", expr)) if len(w) > 1))
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    subject: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in _MODULES:
            subject |= name_words(node.id)
        elif isinstance(node, ast.Attribute) and id(node) not in called:
            if node.attr not in _ATTRS and node.attr not in _METHOD_AGG and node.attr not in _NEUTRAL:
                subject |= name_words(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 1:
            subject |= name_words(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if not (
                node.func.attr == "len" and ".split(" in expr
            ):  # the length of a split: words, not characters
                subject |= _METHOD_WORDS.get(node.func.attr, frozenset())
        elif isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Constant) and index.value == 0:
                subject |= {"first", "start"}
            elif isinstance(index, ast.UnaryOp) and isinstance(index.operand, ast.Constant):
                subject |= {"last", "end", "final"}
            elif isinstance(index, ast.Slice) and isinstance(index.lower, ast.UnaryOp):
                # iloc[-7:]: the last ones; iloc[-14:-7]: the ones before them
                subject |= (
                    {"previou", "prior", "before", "earlier"}
                    if index.upper
                    else {"last", "final", "latest", "recent"}
                )
    agg = _agg_of(tree)
    scalar = agg in (
        "mean",
        "median",
        "sum",
        "count",
        "max",
        "min",
        "std",
        "nunique",
        "rows",
        "diff",
        "rel",
        "ratio",
    )
    scalar = scalar and not re.search(
        r"groupby|group_by|value_counts|describe|resample|crosstab|pct_change", expr
    )
    obj_words = name_words(obj) if obj else frozenset()
    # "sales.price.mean()" is of price, "sales" only the frame it reads (but a count counts the frame's rows,
    # and "rate_variant / rate_control" reads no frame)
    counts = agg in ("count", "nunique", "rows")
    if subject - obj_words and not counts and re.search(rf"\b{re.escape(obj)}\s*[.\[]", expr):
        subject -= obj_words
    percent = bool(re.search(r"\*\s*100\b|\b100(?:\.0)?\s*\*", expr))
    columns = [
        m.group(1) or m.group(2)
        for m in re.finditer(r"\.([A-Za-z_]\w*)\b(?!\s*\()|\[\s*'([^']+)'\s*\]", expr)
    ]
    column = next(
        (c for c in reversed(columns) if c not in _ATTRS and c not in _NEUTRAL and c not in _METHOD_AGG), ""
    )
    return Made(
        frozenset(subject),
        agg,
        name_words(obj) if obj else frozenset(),
        _named_aggs(tree),
        scalar,
        percent,
        column or obj,
    )


def _named_aggs(tree: ast.expr) -> dict[str, Column]:
    """``.agg(orders=('qty', 'size'), revenue=('revenue', 'sum'))``: each output column's aggregate."""
    out: dict[str, Column] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("agg", "aggregate")
        ):
            for kw in node.keywords:
                if kw.arg and isinstance(kw.value, ast.Tuple) and len(kw.value.elts) == 2:
                    col, fn = kw.value.elts
                    if isinstance(col, ast.Constant) and isinstance(fn, ast.Constant):
                        agg = _METHOD_AGG.get(str(fn.value), "")
                        out[kw.arg.lower()] = (
                            agg,
                            name_words(kw.arg) | name_words(str(col.value)),
                            frozenset(),
                        )
    return out


def _agg_of(node: ast.expr) -> str:
    """The aggregate of an expression's outermost meaningful operation."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Sub):
            if isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Div):
                return "rel"  # a / b - 1
            return "diff"
        if isinstance(node.op, ast.Div):
            inner = _agg_of(node.left)
            if isinstance(node.left, ast.BinOp) and inner == "diff":
                return "rel"  # (a - b) / b
            return "ratio"  # a total over a total: a weighted mean, a rate
        if isinstance(node.op, ast.Mult):
            return _agg_of(node.left) or _agg_of(node.right)
        return ""
    if isinstance(node, ast.Compare):
        return "flag"
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "len":
                return "rows"
            if func.id in ("round", "abs", "float", "int") and node.args:
                return _agg_of(node.args[0])
            return ""
        if isinstance(func, ast.Attribute):
            name = func.attr
            if name in _NEUTRAL:
                return _agg_of(func.value)
            if name in _FLAGS:
                return "flag"
            if name in ("value_counts", "crosstab"):
                return "share" if any(k.arg == "normalize" for k in node.keywords) else "count"
            if name in ("sum", "mean") and _agg_of(func.value) == "flag":
                return "count" if name == "sum" else "share"
            if name in ("describe", "agg", "aggregate"):
                return "stat"
            return _METHOD_AGG.get(name, "")
    if isinstance(node, ast.Attribute):
        if node.attr in _METHOD_AGG:
            return _METHOD_AGG[node.attr]
        return _agg_of(node.value) if node.attr in _NEUTRAL else ""
    if isinstance(node, ast.Subscript):
        return _agg_of(node.value)
    if isinstance(node, ast.UnaryOp):
        return _agg_of(node.operand)
    return ""


def prints(code: str) -> list[list[str]]:
    """The arguments of each top-level ``print(…)`` of ``code``, in order, with names assigned before them
    written out (``d = …`` then ``print(d.iloc[0])``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    assigned: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            assigned[stmt.targets[0].id] = ast.unparse(stmt.value)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                parts = []
                for arg in node.args:
                    text = ast.unparse(arg)
                    for name, value in assigned.items():
                        text = re.sub(rf"\b{re.escape(name)}\b", f"({value})", text)
                    parts.append(text)
                out.append(parts)
    return out


def sql_columns(sql: str) -> dict[str, Column]:
    """Each output column of a SELECT: its aggregate and the words of what it is of (``ROUND(SUM(amount), 2)
    AS total`` → total: sum of amount)."""
    m = re.search(r"\bselect\b(.*?)\bfrom\b", sql, re.I | re.S)
    if not m:
        return {}
    items, depth, cur = [], 0, ""
    for ch in m.group(1):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    tables = re.findall(r"\b(?:from|join)\s+([A-Za-z_]\w*)", sql, re.I)
    out: dict[str, Column] = {}
    for item in items:
        item = item.strip()
        am = re.match(r"(.*?)\s+(?:as\s+)?([A-Za-z_]\w*)$", item, re.I | re.S)
        expr, alias = (am.group(1), am.group(2)) if am else (item, item.split(".")[-1])
        low = expr.lower()
        agg = column_agg(alias)
        for fn in ("avg", "sum", "count", "max", "min"):
            if re.search(rf"\b{fn}\s*\(", low):
                agg = _SQL_AGG[fn]
                break
        if "distinct" in low:
            agg = "nunique"
        if re.search(r"\bsum\s*\(\s*[\w.]+\s*(?:=|<|>|like)", low):
            agg = "count"  # SUM(status = 'refunded'): a count of rows
        if re.search(r"/\s*count\s*\(", low) or re.search(r"100(?:\.0)?\s*\*", low):
            agg = "share"
        subject = set(name_words(alias))
        for ident in re.findall(r"[A-Za-z_]\w*", expr):
            if ident.lower() not in (
                "round",
                "sum",
                "avg",
                "count",
                "max",
                "min",
                "distinct",
                "strftime",
                "as",
            ):
                subject |= name_words(ident.split(".")[-1])
        for literal in re.findall(r"'([^'%]+)'", expr):
            subject |= name_words(literal)
        out[alias.lower()] = (agg, frozenset(subject), frozenset())
        if agg == "count" and not re.search(r"\bcount\s*\(\s*(?:distinct\b|[a-z_.]+\s*\))", low):
            # COUNT(*), SUM(status = 'refunded'): rows of the tables read ("247 orders")
            nouns = frozenset().union(*(name_words(t) for t in tables)) if tables else frozenset()
            out[alias.lower()] = (agg, frozenset(subject), nouns)
    return out
