"""What a turn's results state, as *facts*: a value and what it is of — its subject (columns, variables), its
aggregate (a mean, a total, a count of rows…), its row and column labels — read from the text the model read
(pandas' and polars' aligned tables, SQL results, printed output, figure descriptions, the session picture)
and from what produced it (the expression, the code's ``print`` calls, the SQL's column expressions).

An answer's number is then tied to the fact its words name (``tie.py``), not to any equal value of the turn.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from dataclasses import dataclass, field

from .words import AGG_STEMS, MONTHS, MONTH_WORDS, label_key, name_words, stem
from .written import norm_expr

PICTURE = "the session picture"

_NUM = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?%?$")
_ANY_NUM = re.compile(
    r"(?<![\w.\-/])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?![\w/]|\.\d)"
)
_ISO = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[ T](\d{2}):(\d{2})(?::\d{2})?)?$")
_TIMESTAMP = re.compile(r"Timestamp\('(\d{4})-(\d{2})-(\d{2})")
_BOX_ROW = re.compile(r"[│┆]")
_BOX_RULE = re.compile(r"^\s*[╞╪═─┌┐└┘├┤┬┴┼╡]")
_DTYPES = frozenset("str f64 i64 u32 i32 f32 bool date datetime --- object".split())
_TRAILERS = ("Freq:", "Name:", "dtype:", "Length:", "shape:")
_UNIT_SCALE = re.compile(r"\(?\s*\$?\s*(k|m|bn|b|thousands?|millions?|billions?)\s*\$?\s*\)?", re.I)
_SCALE_WORDS = {"k": 1e3, "thousand": 1e3, "thousands": 1e3, "m": 1e6, "million": 1e6, "millions": 1e6,
                "b": 1e9, "bn": 1e9, "billion": 1e9, "billions": 1e9}  # fmt: skip
_MODULES = frozenset("pd np pl dd len round abs float int str print sorted sum min max list".split())

# the last call of an expression that says what its values are (``.round()``, ``.sort_values()`` do not)
_METHOD_AGG = {
    "mean": "mean", "average": "mean", "median": "median", "sum": "sum", "count": "count", "size": "count",
    "max": "max", "min": "min", "std": "std", "var": "std", "nunique": "nunique", "idxmax": "max",
    "idxmin": "min", "pct_change": "change", "diff": "diff", "value_counts": "count", "cumsum": "sum",
    "quantile": "median", "npartitions": "partitions", "shape": "rows", "height": "rows", "n_unique": "nunique",
    "most_common": "count",
}  # fmt: skip
_NEUTRAL = frozenset(
    "round sort_values sort_index sort sort_by reset_index rename head tail compute to_frame astype abs copy "
    "fillna dropna clip loc iloc T transpose unstack to_dict tolist items select collect".split()
)
_FLAGS = frozenset(
    "contains isna isnull notna notnull between startswith endswith duplicated eq ne gt lt ge le".split()
)
# what a method makes of its values, in an answer's words
_METHOD_WORDS = {
    "isna": frozenset({"missing", "nan", "null", "na", "empti"}),
    "isnull": frozenset({"missing", "nan", "null", "na", "empti"}),
    "split": frozenset({"word"}),
    "len": frozenset({"length", "long", "charact", "char"}),
    "contains": frozenset({"mention", "contain"}),
}
_ATTRS = frozenset("str dt loc iloc values index columns shape dtypes cat sparse plot T at iat".split())
# describe() rows and agg() columns: the label is the aggregate
_STAT_LABELS = {
    "mean": "mean", "avg": "mean", "average": "mean", "std": "std", "sd": "std", "min": "min", "max": "max",
    "25%": "q25", "50%": "median", "median": "median", "75%": "q75", "count": "count", "sum": "sum",
    "null_count": "count", "nunique": "nunique", "unique": "nunique",
}  # fmt: skip
_SQL_AGG = {"avg": "mean", "sum": "sum", "count": "count", "max": "max", "min": "min", "total": "sum"}


@dataclass(slots=True)
class Fact:
    """One value a result showed, and what it is of."""

    value: float
    shown: str  # as the result wrote it
    source: str  # the call (or "the session picture")
    subject: frozenset[str] = frozenset()  # words of what it is of (columns, variables, the series' name)
    agg: str = ""  # the aggregate key (``words.AGGREGATES``), "" when unknown
    rows: frozenset[str] = frozenset()  # the forms of its row's labels (index label, text cells of the row)
    col: str = ""  # its column label
    group: int = 0  # the table it belongs to: its siblings share it
    date: tuple[int, int, int] | None = None  # a date value (year, month, day)
    scale: float = 1.0  # what its unit multiplies (an axis in k$: 1000)
    percent: bool = False  # already in percent units (a ``*_pct`` column, ``… * 100``)
    weak: bool = False  # nothing says what it is of: only a number of many digits may match it by value
    nouns: frozenset[str] = frozenset()  # what it counts, named only as the noun after a number ("247 orders")
    what: str = ""  # said in /receipts: "mean of price, north"
    expr: str = ""  # the expression that gave it, normalised (an answer may name it in backticks)


def _is_num(token: str) -> bool:
    return token not in ("", "-", "+", ".", "%") and bool(_NUM.match(token))


def _num(token: str) -> float | None:
    try:
        return float(token.rstrip("%").replace(",", ""))
    except ValueError:
        return None


def iso_date(text: str) -> tuple[int, int, int] | None:
    m = _ISO.match(text.strip()) or _TIMESTAMP.search(text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else 0


@lru_cache(maxsize=8192)
def label_forms(label: str, months: bool = False) -> frozenset[str]:
    """The ways an answer may write a row label: itself, and for a date or a month its month's names
    (``2024-03-01`` → march, mar, 2024-03; ``3`` under a month index → march, mar)."""
    key = label_key(label)
    forms = {key}
    if key.isalpha():
        forms.add(stem(key))  # "refunded" as the answer's words have it: "refund"
    stat = _STAT_LABELS.get(key)
    if stat:  # a describe() row: "50%" is the median
        forms |= AGG_STEMS.get(stat, frozenset())
    if key in MONTHS:  # a key "Jan": January
        key_month = MONTHS[key]
        forms.update({MONTH_WORDS[key_month], MONTH_WORDS[key_month][:3]})
    date = iso_date(key)
    if date and date[2]:
        forms.add(f"{date[1]:02d}-{date[2]:02d}")
        forms.add(f"{date[0]}-{date[1]:02d}-{date[2]:02d}")
    # a month's name names a month: a label of a month (2024-03, the 1st of a monthly index, 3 under "month")
    month = date[1] if date and date[2] <= 1 else (int(key) if months and key.isdigit() else 0)
    if 1 <= month <= 12:
        name = MONTH_WORDS[month]
        forms.update({name, name[:3]})
        if date:
            forms.add(f"{date[0]}-{date[1]:02d}")
    if key in ("true", "false"):
        forms.add({"true": "yes", "false": "no"}[key])
    return frozenset(forms)


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
    columns: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)  # named aggregations
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
            if not (node.func.attr == "len" and ".split(" in expr):  # the length of a split: words, not characters
                subject |= _METHOD_WORDS.get(node.func.attr, frozenset())
        elif isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Constant) and index.value == 0:
                subject |= {"first", "start"}
            elif isinstance(index, ast.UnaryOp) and isinstance(index.operand, ast.Constant):
                subject |= {"last", "end", "final"}
            elif isinstance(index, ast.Slice) and isinstance(index.lower, ast.UnaryOp):
                # iloc[-7:]: the last ones; iloc[-14:-7]: the ones before them
                subject |= {"previou", "prior", "before", "earlier"} if index.upper else {"last", "final", "latest", "recent"}
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
    if subject - obj_words:  # "sales.price.mean()" is of price; "sales" is only the frame it reads
        subject -= obj_words
    percent = bool(re.search(r"\*\s*100\b|\b100(?:\.0)?\s*\*", expr))
    columns = [
        m.group(1) or m.group(2)
        for m in re.finditer(r"\.([A-Za-z_]\w*)\b(?!\s*\()|\[\s*'([^']+)'\s*\]", expr)
    ]
    column = next(
        (c for c in reversed(columns) if c not in _ATTRS and c not in _NEUTRAL and c not in _METHOD_AGG), ""
    )
    return Made(frozenset(subject), agg, name_words(obj) if obj else frozenset(), _named_aggs(tree), scalar, percent,
                column or obj)  # fmt: skip


def _named_aggs(tree: ast.expr) -> dict[str, tuple[str, frozenset[str]]]:
    """``.agg(orders=('qty', 'size'), revenue=('revenue', 'sum'))``: each output column's aggregate."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
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
                        out[kw.arg.lower()] = (agg, name_words(kw.arg) | name_words(str(col.value)))
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


def _prints(code: str) -> list[list[str]]:
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


def _sql_columns(sql: str) -> dict[str, tuple]:
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
    out = {}
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
        out[alias.lower()] = (agg, frozenset(subject))
        if agg == "count" and not re.search(r"\bcount\s*\(\s*(?:distinct\b|[a-z_.]+\s*\))", low):
            # COUNT(*), SUM(status = 'refunded'): rows of the tables read ("247 orders")
            nouns = frozenset().union(*(name_words(t) for t in tables)) if tables else frozenset()
            out[alias.lower()] = (agg, frozenset(subject), nouns)
    return out


# -- the tables in a result's text ----------------------------------------------------------------------------
@dataclass
class _Table:
    header: list[str] = field(default_factory=list)  # the column labels (a leading one names the columns)
    rows: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (labels, cells)
    index_name: str = ""

    def columns(self, n: int) -> tuple[list[str], str]:
        """The labels of ``n`` value cells, and the name of the columns when the header has one more."""
        if len(self.header) == n:
            return self.header, ""
        if len(self.header) == n + 1:
            return self.header[1:], self.header[0]
        return ([*self.header[-n:]] if len(self.header) > n else []), ""


def _cells(line: str) -> list[str]:
    """A line of an aligned table in cells (polars' boxes too): separated by two spaces or more, else by one
    (a date and its time, ``2024-05-02 04:00:00``, stay one cell)."""
    if _BOX_ROW.search(line):
        return [t.strip() for t in _BOX_ROW.split(line) if t.strip()]
    out: list[str] = []
    for cell in re.split(r"\s{2,}", line.strip()):
        if _ISO.match(cell):
            out.append(cell)
        else:
            out.extend(cell.split())
    return out


def _value_like(token: str) -> bool:
    return _is_num(token) or token.lower() in ("nan", "null", "none", "nat", "<na>")


def tables(text: str) -> list[_Table]:
    """The aligned tables of ``text`` (pandas frames, SQL results, polars' boxes): header, index name, rows.
    A line without values is a header (or the name of the index under one); a line with values is a row,
    its label cells first."""
    found: list[_Table] = []
    cur: _Table | None = None
    header: list[str] = []
    for raw in text.splitlines():
        if not raw.strip() or _BOX_RULE.match(raw) or raw.lstrip().startswith(_TRAILERS):
            if not raw.strip() or raw.lstrip().startswith(_TRAILERS):
                cur, header = None, []
            continue
        tokens = _cells(raw)
        if not tokens or (len(tokens) > 1 and all(t in _DTYPES for t in tokens)):
            continue
        if not any(_value_like(t) for t in tokens):
            if cur is not None and not cur.rows and len(tokens) == 1:
                cur.index_name = tokens[0]
            elif cur is None and len(tokens) == 1 and header and len(header) > 1:
                cur = _Table(header, [], tokens[0])
                found.append(cur)
            else:
                header, cur = tokens, None
            continue
        if cur is None:
            if len(header) == 1 and len(tokens) == 2:  # a Series: the line above names its index
                cur = _Table([], [], header[0])
            else:
                cur = _Table(header, [])
            found.append(cur)
        labels = [t for t in tokens if not _value_like(t)]
        n_values = len(tokens) - (1 if tokens and len(tokens) == len(cur.header) + 1 else 0)
        if cur.header and len(tokens) == len(cur.header) and cur.index_name:
            cells = tokens[
                1:
            ]  # pandas: the first header cell names the columns, the row starts with its label
            labels = [tokens[0], *(t for t in tokens[1:] if not _value_like(t))]
        elif cur.header and len(tokens) == len(cur.header):
            cells = tokens  # a SQL row: every cell under a column (text columns are its labels)
            if tokens[0].endswith("%") or cur.header[0].lower() in ("statistic", "describe", "stat"):
                labels = [tokens[0], *labels]  # polars' describe(): the statistic is the row's label
        elif cur.header and len(tokens) == len(cur.header) + 1:
            cells = tokens[1:]
            labels = [tokens[0], *(t for t in tokens[1:] if not _value_like(t))]
        elif not cur.header and len(tokens) >= 2:
            cells = tokens[1:]
            labels = [tokens[0]]
        else:
            cells = tokens[-n_values:] if n_values else tokens
        cur.rows.append((labels, cells))
    return found


# -- facts of one result ------------------------------------------------------------------------------------
class FactReader:
    """Reads results into facts; numbers each table so that siblings (other rows and columns of the same
    result) can be told from unrelated values."""

    def __init__(self) -> None:
        self.groups = 0

    def _group(self) -> int:
        self.groups += 1
        return self.groups

    def result(self, source: str, text: str, expr: str = "", code: str = "", sql: str = "") -> list[Fact]:
        """The facts of one tool result."""
        if source.startswith("get_figure"):
            return self._figure(source, text)
        head, _, rest = text.partition("\n")
        if expr:
            facts = self._evaluated(source, text, head, rest, expr)
            key = norm_expr(expr)
            obj = read_expr(expr).obj
            for f in facts:
                f.expr = key
                f.nouns = obj  # "1,008 readings": what the frame's rows are
            return facts
        if code:
            return self._printed(source, text, code)
        if sql or source.startswith("query_sql"):
            body = rest if re.match(r"^\d+ rows?;", head) else text
            return self._table_facts(source, tables(body), Made(), columns=_sql_columns(sql), sql=True)
        return self._loose(source, text)

    # eval_expr: one value, a container, a Series, a DataFrame ----------------------------------------------
    def _evaluated(self, source: str, text: str, head: str, rest: str, expr: str) -> list[Fact]:
        made = read_expr(expr)
        if head.startswith("dict"):
            return self._mapping(source, rest, expr)
        if head.startswith(("Series", "polars Series")):
            m = re.match(r"(?:polars )?Series '([^']*)'", head)
            series = m.group(1) if m else ""
            if "idxmax" in expr or "idxmin" in expr:
                made.agg = "max" if "idxmax" in expr else "min"
            return self._shape(source, head, expr) + self._series(source, rest, made, series)
        if head.startswith(("DataFrame", "polars DataFrame")) or "rows:\n" in text or head == "rows:":
            body = text.split("rows:\n", 1)[1] if "rows:\n" in text else text
            body = re.sub(r"^(?:first|last) \d+ rows:$", "", body, flags=re.M)
            return self._shape(source, head, expr) + self._table_facts(source, tables(body), made)
        if head.startswith("tuple") and "shape" in expr:
            out = []
            for token, agg in zip(re.findall(r"\d+", rest), ("rows", "cols"), strict=False):
                out.append(Fact(float(token), token, source, made.obj, agg, what=f"{agg} of {_short(expr)}"))
            return out
        value_text = head.split(" ", 1)[1] if " " in head and _ANY_NUM.search(head.split(" ", 1)[1]) else rest
        value_text = value_text.strip()
        date = iso_date(value_text)
        if date:
            return [Fact(0.0, value_text, source, made.subject, made.agg, date=date, what=_short(expr))]
        nums = _ANY_NUM.findall(value_text) if len(value_text) <= 80 else []
        if len(nums) == 1 and (value := _num(nums[0])) is not None:
            agg = made.agg if made.agg not in ("stat", "flag") else ""
            simple = re.fullmatch(r"[\w.\[\]'\"]+\.\w+\(\)|len\(\w+\)", expr.replace(" ", ""))
            said = what(agg, made.column) if simple and agg else _short(expr)
            return [Fact(value, nums[0], source, made.subject, agg, percent=made.percent, what=said)]
        return self._loose(source, text)

    def _shape(self, source: str, head: str, expr: str) -> list[Fact]:
        """A result's size as its first line says it: "Series …: 4 values", "DataFrame: 8 rows × 3 columns"."""
        out = []
        for token, noun in re.findall(r"([\d,]+) (values|rows|columns)\b", head):
            if (v := _num(token)) is not None:
                agg = "cols" if noun == "columns" else "rows"
                out.append(
                    Fact(
                        v,
                        token,
                        source,
                        frozenset(),
                        agg,
                        group=self._group(),
                        what=f"{noun} of {_short(expr)}",
                    )
                )
        return out

    def _mapping(self, source: str, rest: str, expr: str) -> list[Fact]:
        group = self._group()
        subject = name_words(expr)
        return [
            Fact(
                v,
                shown,
                source,
                subject,
                "value",
                frozenset(label_forms(key)),
                group=group,
                what=f"{expr}[{key!r}]",
            )
            for key, shown in re.findall(r"'([^']*)':\s*(-?[\d.]+(?:e[-+]?\d+)?)", rest)
            if (v := _num(shown)) is not None
        ]

    def _series(self, source: str, body: str, made: Made, series: str) -> list[Fact]:
        """A Series' lines: an index name, then ``label  value`` (the value may be a date or text)."""
        group = self._group()
        lines = [
            line for line in body.splitlines() if line.strip() and not line.lstrip().startswith(_TRAILERS)
        ]
        pairs = []
        index_name = ""
        for line in lines:
            cells = re.split(r"\s{2,}", line.strip())
            if len(cells) == 1:
                parts = line.split()
                if len(parts) == 2:
                    cells = parts
                elif not pairs:
                    index_name = line.strip()
                    continue
                else:
                    continue
            pairs.append((" ".join(cells[:-1]), cells[-1]))
        months = _months(index_name, [label for label, _ in pairs])
        if not made.agg and series and column_agg(series):
            made.agg = column_agg(series)  # "yoy_growth": a change
        words = made.subject | (
            name_words(series) if series and series not in ("None", "count", "proportion") else set()
        )
        facts = []
        for label, cell in pairs:
            rows = frozenset(label_forms(label, months))
            stat = _STAT_LABELS.get(label.lower(), "")
            agg = stat if stat and made.agg in ("stat", "", "count", "mean") else made.agg
            if agg in ("stat", "flag"):
                agg = ""
            label_what = what(
                agg,
                series if series and series not in ("None", "count", "proportion") else made.column,
                label,
            )
            date = iso_date(cell)
            if date is not None:
                facts.append(Fact(0.0, cell, source, words | name_words(label), agg, rows, label_key(label), group,
                                  date=date, what=label_what))  # fmt: skip
                continue
            value = _num(cell) if _is_num(cell) else None
            if value is None:
                continue
            subject = words | name_words(label) if not made.agg or made.agg == "max" else words
            facts.append(Fact(value, cell, source, frozenset(subject), agg, rows, "", group, what=label_what))
        return facts

    def _table_facts(self, source: str, found: list[_Table], made: Made,
                     columns: dict[str, tuple[str, frozenset[str]]] | None = None, sql: bool = False) -> list[Fact]:  # fmt: skip
        columns = columns or made.columns
        facts = []
        for table in found:
            group = self._group()
            months = _months(table.index_name, [r[0][0] for r in table.rows if r[0]])
            for labels, cells in table.rows:
                header, columns_name = table.columns(len(cells))
                rows: set[str] = set()
                for lab in labels:
                    rows |= label_forms(lab, months)
                row_stat = next(
                    (_STAT_LABELS[lab.lower()] for lab in labels if lab.lower() in _STAT_LABELS), ""
                )
                for i, cell in enumerate(cells):
                    col = header[i] if i < len(header) else ""
                    fact = self._cell(
                        source, cell, col, columns_name, labels, rows, row_stat, made, columns, group
                    )
                    if fact is not None:
                        facts.append(fact)
        if sql:
            for f in facts:
                f.percent = f.col.endswith("pct") or "percent" in f.col
        return facts

    def _cell(self, source: str, cell: str, col: str, columns_name: str, labels: list[str], rows: set[str],
              row_stat: str, made: Made, columns: dict[str, tuple[str, frozenset[str]]], group: int) -> Fact | None:  # fmt: skip
        col_stat = _STAT_LABELS.get(col.lower(), "")
        subject = set(made.obj)
        agg = made.agg
        nouns: frozenset[str] = frozenset()
        if col.lower() in columns:
            agg, named, *more = columns[col.lower()]
            subject |= named
            nouns = more[0] if more else frozenset()
        elif col_stat:
            agg = col_stat
            subject |= made.subject
        elif row_stat:
            agg = row_stat
            subject |= name_words(col)
        else:
            subject |= name_words(col) if col else made.subject
            agg = agg or column_agg(col)
        if columns_name:
            subject |= name_words(columns_name)
            if col.lower() == "false":
                subject |= {"not", "no", "non"}
        if agg in ("stat", "flag"):
            agg = ""
        row = ", ".join(lab for lab in labels[:2] if lab != col and lab.lower() not in _STAT_LABELS)
        name = made.column if (col_stat or not col) else col
        cell_what = what(agg, name, row)
        if not _is_num(cell):
            date = iso_date(cell)
            if date is None or not col:
                return None
            return Fact(0.0, cell, source, frozenset(subject), agg, frozenset(rows), label_key(col), group,
                        date=date, what=cell_what)  # fmt: skip
        value = _num(cell)
        if value is None:
            return None
        percent = "%" in col or "percent" in col.lower()
        return Fact(value, cell, source, frozenset(subject), agg, frozenset(rows), label_key(col), group,
                    percent=percent, what=cell_what, nouns=nouns or made.obj)  # fmt: skip

    # run_python: each print's output, in order --------------------------------------------------------------
    def _printed(self, source: str, text: str, code: str) -> list[Fact]:
        prints = _prints(code)
        lines = [line for line in text.splitlines() if line.strip()]
        if not prints or (len(prints) == 1 and len(prints[0]) > 1 and len(lines) > 1):
            return self._loose(source, text)  # one print in a loop: a line per item, its label first
        facts: list[Fact] = []
        at = 0
        for k, args in enumerate(prints):
            exprs = [a for a in args if not re.match(r"^['\"]", a)]
            made = read_expr(exprs[0]) if len(exprs) == 1 else Made()
            later = len(prints) - k - 1
            if made.scalar or len(exprs) != 1 or at >= len(lines):
                take = 1
            else:  # a table: up to its ``dtype:``/``Name:`` line, else all but one line per print after it
                end = next(
                    (i for i in range(at, len(lines)) if lines[i].lstrip().startswith(("dtype:", "Name:"))),
                    None,
                )
                take = (end - at + 1) if end is not None else max(1, len(lines) - at - later)
            chunk = lines[at : at + take]
            at += take
            if take == 1 and chunk:
                facts += self._printed_line(source, chunk[0], args, exprs)
            elif chunk:
                body = "\n".join(chunk)
                m = re.search(r"^Name: (\w+)", body, re.M)
                if made.agg == "stat":
                    made.agg = ""
                if len(tables(body)) == 1 and not tables(body)[0].header:
                    facts += self._series(source, body, made, m.group(1) if m else "")
                else:
                    facts += self._table_facts(source, tables(body), made)
        return facts

    def _printed_line(self, source: str, line: str, args: list[str], exprs: list[str]) -> list[Fact]:
        tokens = line.split()
        nums = [t for t in tokens if _is_num(t)]
        labels = [t for t in tokens if not _is_num(t)]
        out = []
        group = self._group()
        for i, token in enumerate(nums):
            value = _num(token)
            if value is None:
                continue
            expr = exprs[i] if len(exprs) == len(nums) else (exprs[0] if len(exprs) == 1 else "")
            made = read_expr(expr)
            rows = frozenset(set().union(*(label_forms(lab) for lab in labels))) if labels else frozenset()
            agg = made.agg if made.agg not in ("stat", "flag") else ""
            subject = made.subject | frozenset(stem(x) for x in labels)
            what = " ".join(labels) or (_short(expr) if expr else token)
            out.append(Fact(value, token, source, subject, agg, rows, group=group, what=what, percent=made.percent,
                            weak=not expr and not labels, nouns=made.obj))  # fmt: skip
        return out

    # a figure's description ---------------------------------------------------------------------------------
    def _figure(self, source: str, text: str) -> list[Fact]:
        facts: list[Fact] = []
        for line in text.splitlines():
            group = self._group()
            m = re.search(
                r"'([^']*)': (\d+) points.*?, x ([-\d.e+]+)…([-\d.e+]+), y ([-\d.e+]+)…([-\d.e+]+)", line
            )
            if m:
                label = m.group(1)
                subject = name_words(label) | {"line", "point", "month", "data"}
                scale = _unit_scale(label)
                facts.append(Fact(float(m.group(2)), m.group(2), source, subject, "points", group=group,
                                  what=f"points of line {label!r}"))  # fmt: skip
                for value, agg, axis in ((m.group(5), "min", "y"), (m.group(6), "max", "y"),
                                         (m.group(3), "min", "x"), (m.group(4), "max", "x")):  # fmt: skip
                    if (v := _num(value)) is not None:  # the x range of a line is where it is drawn: weak
                        facts.append(Fact(v, value, source, subject | {axis}, agg, group=group, scale=scale,
                                          weak=axis == "x", what=f"{agg} {axis} of line {label!r}"))  # fmt: skip
                continue
            m = re.search(r"(\d+) (?:vertical |horizontal )?bars, sizes ([-\d.e+]+)…([-\d.e+]+)", line)
            if m:
                subject = frozenset({"bar", "bin", "height", "size", "count", "histogram", "chart"})
                facts.append(Fact(float(m.group(1)), m.group(1), source, subject, "bars", group=group,
                                  what="bars of the chart"))  # fmt: skip
                for value, agg in ((m.group(2), "min"), (m.group(3), "max")):
                    if (v := _num(value)) is not None:
                        facts.append(
                            Fact(v, value, source, subject, agg, group=group, what=f"{agg} bar height")
                        )
                continue
            for axis, label, lo, hi in re.findall(
                r"\b([xy]) (?:'([^']*)'|none) \w+ \[([-\d.e+]+), ([-\d.e+]+)\]", line
            ):
                subject = (name_words(label) if label else frozenset()) | {axis, "axis", "limit", "view"}
                for value, agg in ((lo, "min"), (hi, "max")):
                    if (v := _num(value)) is not None:
                        facts.append(Fact(v, value, source, frozenset(subject), f"axis-{agg}", group=group,
                                          scale=_unit_scale(label), weak=True,
                                          what=f"{axis} axis view {agg}"))  # fmt: skip
        return facts

    # the session picture --------------------------------------------------------------------------------
    def picture(self, text: str) -> list[Fact]:
        """The facts of the session picture: each variable's size or value; other numbers only as weak ones
        (nothing of ``Recent inputs``: input numbers and line counts are not data)."""
        facts: list[Fact] = []
        section = ""
        for line in text.splitlines():
            if line and not line.startswith(" ") and not re.match(r"^[A-Za-z_]\w*: ", line):
                section = line
                m = re.match(r"^Variables \((\d+)\)", line)
                if m:
                    facts.append(Fact(float(m.group(1)), m.group(1), PICTURE, frozenset(), "variables",
                                      what="variables in the session"))  # fmt: skip
                continue
            m = re.match(r"^\s*([A-Za-z_]\w*): (.*)$", line)
            if section.startswith(("Recent inputs", "Open figures", "Last error")) or not m:
                continue
            facts += self._variable(m.group(1), m.group(2))
        return facts

    def _variable(self, name: str, desc: str) -> list[Fact]:
        subject = name_words(name)
        group = self._group()
        src = PICTURE
        shape = re.search(r"\b(?:DataFrame|LazyFrame) ([\d,?]+)×([\d,?]+)", desc)
        if shape:
            out = [
                Fact(v, token, src, subject, agg, group=group, what=f"{agg} of {name}")
                for token, agg in ((shape.group(1), "rows"), (shape.group(2), "cols"))
                if (v := _num(token)) is not None
            ]
            parts = re.search(r"\((\d+) partitions", desc)
            if parts:
                out.append(Fact(float(parts.group(1)), parts.group(1), src, subject, "partitions", group=group,
                                what=f"partitions of {name}"))  # fmt: skip
            return out
        m = re.search(r"(\d[\d,]*) (?:values|items|keys|elements)\b", desc) or re.search(
            r"shape \((\d+),\)", desc
        )
        out = []
        if m and (v := _num(m.group(1))) is not None:  # named by "values", "items": "182 visits" is no length
            out.append(Fact(v, m.group(1), src, frozenset(), "rows", group=group, what=f"length of {name}"))
        if desc.startswith("dict"):
            out += [
                Fact(
                    v,
                    shown,
                    src,
                    subject,
                    "value",
                    frozenset(label_forms(key)),
                    group=group,
                    what=f"{name}[{key!r}]",
                )
                for key, shown in re.findall(r"'([^']*)':\s*(-?[\d.]+)", desc)
                if (v := _num(shown)) is not None
            ]
            return out
        m = re.match(r"^(?:int|float|bool|numpy\.\w+)\s+(?:np\.\w+\()?(-?[\d.]+(?:e[-+]?\d+)?)\)?$", desc)
        if m and (v := _num(m.group(1))) is not None:
            return [Fact(v, m.group(1), src, subject, "value", group=group, what=name)]
        if out:
            return out
        return [
            Fact(v, token, src, subject, "", group=group, weak=True, what=name)
            for token in _ANY_NUM.findall(desc)
            if (v := _num(token)) is not None
        ]

    def _loose(self, source: str, text: str) -> list[Fact]:
        """Numbers of a text this reader has no shape for: each labelled by the words on its line."""
        facts: list[Fact] = []
        group = self._group()
        for line in text.splitlines():
            tokens = line.split()
            labels = [t for t in tokens if not _is_num(t) and re.match(r"^[A-Za-z]", t)]
            for token in tokens:
                if not _is_num(token) or (v := _num(token)) is None:
                    continue
                rows = (
                    frozenset(set().union(*(label_forms(lab) for lab in labels))) if labels else frozenset()
                )
                facts.append(Fact(v, token, source, frozenset(stem(x) for x in labels), "", rows, group=group,
                                  weak=not labels, what=" ".join(labels) or token))  # fmt: skip
        return facts


def _months(index_name: str, labels: list[str]) -> bool:
    """An integer index 1…12 named like a date (``date``, ``month``): its labels are months."""
    return (
        bool(re.search(r"date|month|time|period", index_name, re.I))
        and bool(labels)
        and all(lab.isdigit() and 1 <= int(lab) <= 12 for lab in labels)
    )


def _unit_scale(label: str) -> float:
    m = _UNIT_SCALE.search(label or "")
    return _SCALE_WORDS.get(m.group(1).lower(), 1.0) if m else 1.0


AGG_NAMES = {
    "mean": "mean", "median": "median", "sum": "total", "count": "count", "rows": "rows", "cols": "columns",
    "max": "max", "min": "min", "std": "std", "q25": "25th percentile", "q75": "75th percentile",
    "share": "share", "change": "change", "diff": "difference", "rel": "relative change", "ratio": "ratio",
    "nunique": "distinct count", "partitions": "partitions", "points": "points", "bars": "bars",
}  # fmt: skip


def what(agg: str, name: str, row: str = "") -> str:
    """What a value is, in a few words: "mean of price, north", "rows of sales", "total, paid"."""
    word = AGG_NAMES.get(agg, "")
    if word and name and column_agg(name) != agg:
        text = f"{word} of {name}"
    else:
        text = name or word or "a value"
    return f"{text}, {row}" if row else text


def _short(expr: str) -> str:
    expr = " ".join(expr.split())
    return expr if len(expr) <= 60 else expr[:59] + "…"
