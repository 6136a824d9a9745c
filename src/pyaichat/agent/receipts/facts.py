"""What a turn's results state, as *facts*: a value and what it is of — its subject (columns, variables), its
aggregate (a mean, a total, a count of rows…), its row and column labels — read from the text the model read
(pandas' and polars' aligned tables, SQL results, printed output, figure descriptions, the session picture)
and from what produced it (the expression, the code's ``print`` calls, the SQL's column expressions).

An answer's number is then tied to the fact its words name (``tie.py``), not to any equal value of the turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .made import Column, Made, column_agg, prints, read_expr, sql_columns
from .tables import (
    ANY_NUM,
    STAT_LABELS,
    TRAILERS,
    Table,
    is_num,
    iso_date,
    label_forms,
    month_index,
    number,
    tables,
)
from .words import SCALE_WORDS, label_key, name_words, stem
from .written import norm_expr

PICTURE = "the session picture"

_UNIT_SCALE = re.compile(r"\(?\s*\$?\s*(k|m|bn|b|thousands?|millions?|billions?)\s*\$?\s*\)?", re.I)


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
    nouns: frozenset[str] = (
        frozenset()
    )  # what it counts, named only as the noun after a number ("247 orders")
    what: str = ""  # said in /receipts: "mean of price, north"
    expr: str = ""  # the expression that gave it, normalised (an answer may name it in backticks)


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
            return self._table_facts(source, tables(body), Made(), columns=sql_columns(sql), sql=True)
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
        value_text = head.split(" ", 1)[1] if " " in head and ANY_NUM.search(head.split(" ", 1)[1]) else rest
        value_text = value_text.strip()
        date = iso_date(value_text)
        if date:
            return [Fact(0.0, value_text, source, made.subject, made.agg, date=date, what=_short(expr))]
        nums = ANY_NUM.findall(value_text) if len(value_text) <= 80 else []
        if len(nums) == 1 and (value := number(nums[0])) is not None:
            agg = made.agg if made.agg not in ("stat", "flag") else ""
            simple = re.fullmatch(r"[\w.\[\]'\"]+\.\w+\(\)|len\(\w+\)", expr.replace(" ", ""))
            said = what(agg, made.column) if simple and agg else _short(expr)
            return [Fact(value, nums[0], source, made.subject, agg, percent=made.percent, what=said)]
        return self._loose(source, text, made, expr)

    def _shape(self, source: str, head: str, expr: str) -> list[Fact]:
        """A result's size as its first line says it ("Series …: 4 values", "DataFrame: 8 rows × 3 …")."""
        out = []
        for token, noun in re.findall(r"([\d,]+) (values|rows|columns)\b", head):
            if (v := number(token)) is not None:
                agg = {"columns": "cols", "rows": "rows"}.get(noun, "length")
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
        return _entries(rest, source, name_words(expr), self._group(), expr)

    def _series(self, source: str, body: str, made: Made, series: str) -> list[Fact]:
        """A Series' lines: an index name, then ``label  value`` (the value may be a date or text)."""
        group = self._group()
        lines = [
            line for line in body.splitlines() if line.strip() and not line.lstrip().startswith(TRAILERS)
        ]
        pairs: list[tuple[str, str]] = []
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
        months = month_index(index_name, [label for label, _ in pairs])
        if not made.agg and series and column_agg(series):
            made.agg = column_agg(series)  # "yoy_growth": a change
        words = made.subject | (
            name_words(series) if series and series not in ("None", "count", "proportion") else set()
        )
        facts = []
        for label, cell in pairs:
            rows = frozenset(label_forms(label, months))
            stat = STAT_LABELS.get(label.lower(), "")
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
                facts.append(
                    Fact(
                        0.0,
                        cell,
                        source,
                        words | name_words(label),
                        agg,
                        rows,
                        label_key(label),
                        group,
                        date=date,
                        what=label_what,
                    )
                )
                continue
            value = number(cell) if is_num(cell) else None
            if value is None:
                continue
            subject = words | name_words(label) if not made.agg or made.agg == "max" else words
            facts.append(Fact(value, cell, source, frozenset(subject), agg, rows, "", group, what=label_what))
        return facts

    def _table_facts(
        self,
        source: str,
        found: list[Table],
        made: Made,
        columns: dict[str, Column] | None = None,
        sql: bool = False,
    ) -> list[Fact]:
        columns = columns or made.columns
        facts = []
        for table in found:
            group = self._group()
            months = month_index(table.index_name, [r[0][0] for r in table.rows if r[0]])
            for labels, cells in table.rows:
                header, columns_name = table.columns(len(cells))
                rows: set[str] = set()
                for lab in labels:
                    rows |= label_forms(lab, months)
                row_stat = next(
                    (STAT_LABELS[lab.lower()] for lab in labels if lab.lower() in STAT_LABELS), ""
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

    def _cell(
        self,
        source: str,
        cell: str,
        col: str,
        columns_name: str,
        labels: list[str],
        rows: set[str],
        row_stat: str,
        made: Made,
        columns: dict[str, Column],
        group: int,
    ) -> Fact | None:
        col_stat = STAT_LABELS.get(col.lower(), "")
        subject = set(made.obj)
        agg = made.agg
        nouns: frozenset[str] = frozenset()
        if col.lower() in columns:
            agg, named, nouns = columns[col.lower()]
            subject |= named
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
        row = ", ".join(lab for lab in labels[:2] if lab != col and lab.lower() not in STAT_LABELS)
        name = made.column if (col_stat or not col) else col
        cell_what = what(agg, name, row)
        if not is_num(cell):
            date = iso_date(cell)
            if date is None or not col:
                return None
            return Fact(
                0.0,
                cell,
                source,
                frozenset(subject),
                agg,
                frozenset(rows),
                label_key(col),
                group,
                date=date,
                what=cell_what,
            )
        value = number(cell)
        if value is None:
            return None
        percent = "%" in col or "percent" in col.lower()
        return Fact(
            value,
            cell,
            source,
            frozenset(subject),
            agg,
            frozenset(rows),
            label_key(col),
            group,
            percent=percent,
            what=cell_what,
            nouns=nouns or made.obj,
        )

    # run_python: each print's output, in order --------------------------------------------------------------
    def _printed(self, source: str, text: str, code: str) -> list[Fact]:
        calls = prints(code)
        lines = [line for line in text.splitlines() if line.strip()]
        if not calls or (len(calls) == 1 and len(calls[0]) > 1 and len(lines) > 1):
            return self._loose(source, text)  # one print in a loop: a line per item, its label first
        facts: list[Fact] = []
        at = 0
        for k, args in enumerate(calls):
            exprs = [a for a in args if not re.match(r"^['\"]", a)]
            made = read_expr(exprs[0]) if len(exprs) == 1 else Made()
            later = len(calls) - k - 1
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
        nums = [t for t in tokens if is_num(t)]
        labels = [t for t in tokens if not is_num(t)]
        out = []
        group = self._group()
        for i, token in enumerate(nums):
            value = number(token)
            if value is None:
                continue
            expr = exprs[i] if len(exprs) == len(nums) else (exprs[0] if len(exprs) == 1 else "")
            made = read_expr(expr)
            rows = frozenset(set().union(*(label_forms(lab) for lab in labels))) if labels else frozenset()
            agg = made.agg if made.agg not in ("stat", "flag") else ""
            subject = made.subject | frozenset(stem(x) for x in labels)
            what = " ".join(labels) or (_short(expr) if expr else token)
            out.append(
                Fact(
                    value,
                    token,
                    source,
                    subject,
                    agg,
                    rows,
                    group=group,
                    what=what,
                    percent=made.percent,
                    weak=not expr and not labels,
                    nouns=made.obj,
                )
            )
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
                facts.append(
                    Fact(
                        float(m.group(2)),
                        m.group(2),
                        source,
                        subject,
                        "points",
                        group=group,
                        what=f"points of line {label!r}",
                    )
                )
                for value, agg, axis in (
                    (m.group(5), "min", "y"),
                    (m.group(6), "max", "y"),
                    (m.group(3), "min", "x"),
                    (m.group(4), "max", "x"),
                ):
                    if (v := number(value)) is not None:  # the x range of a line is where it is drawn: weak
                        facts.append(
                            Fact(
                                v,
                                value,
                                source,
                                subject | {axis},
                                agg,
                                group=group,
                                scale=scale,
                                weak=axis == "x",
                                what=f"{agg} {axis} of line {label!r}",
                            )
                        )
                continue
            m = re.search(r"(\d+) (?:vertical |horizontal )?bars, sizes ([-\d.e+]+)…([-\d.e+]+)", line)
            if m:
                subject = frozenset({"bar", "bin", "height", "size", "count", "histogram", "chart"})
                facts.append(
                    Fact(
                        float(m.group(1)),
                        m.group(1),
                        source,
                        subject,
                        "bars",
                        group=group,
                        what="bars of the chart",
                    )
                )
                for value, agg in ((m.group(2), "min"), (m.group(3), "max")):
                    if (v := number(value)) is not None:
                        facts.append(
                            Fact(v, value, source, subject, agg, group=group, what=f"{agg} bar height")
                        )
                continue
            for axis, label, lo, hi in re.findall(
                r"\b([xy]) (?:'([^']*)'|none) \w+ \[([-\d.e+]+), ([-\d.e+]+)\]", line
            ):
                subject = (name_words(label) if label else frozenset()) | {axis, "axis", "limit", "view"}
                for value, agg in ((lo, "min"), (hi, "max")):
                    if (v := number(value)) is not None:
                        facts.append(
                            Fact(
                                v,
                                value,
                                source,
                                frozenset(subject),
                                f"axis-{agg}",
                                group=group,
                                scale=_unit_scale(label),
                                weak=True,
                                what=f"{axis} axis view {agg}",
                            )
                        )
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
                    facts.append(
                        Fact(
                            float(m.group(1)),
                            m.group(1),
                            PICTURE,
                            frozenset(),
                            "variables",
                            what="variables in the session",
                        )
                    )
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
                Fact(v, token, src, subject, agg, group=group, what=f"{agg} of {name}", nouns=subject)
                for token, agg in ((shape.group(1), "rows"), (shape.group(2), "cols"))
                if (v := number(token)) is not None
            ]
            parts = re.search(r"\((\d+) partitions", desc)
            if parts:
                out.append(
                    Fact(
                        float(parts.group(1)),
                        parts.group(1),
                        src,
                        subject,
                        "partitions",
                        group=group,
                        what=f"partitions of {name}",
                    )
                )
            return out
        m = re.search(r"(\d[\d,]*) (?:values|items|keys|elements)\b", desc) or re.search(
            r"shape \((\d+),\)", desc
        )
        out = []
        if (
            m and (v := number(m.group(1))) is not None
        ):  # named by "values", "items": "182 visits" is no length
            length = Fact(v, m.group(1), src, frozenset(), "length", group=group, what=f"length of {name}")
            length.nouns = subject
            out.append(length)
        if desc.startswith("dict"):
            out += _entries(desc, src, subject, group, name)
            return out
        m = re.match(r"^(?:int|float|bool|numpy\.\w+)\s+(?:np\.\w+\()?(-?[\d.]+(?:e[-+]?\d+)?)\)?$", desc)
        if m and (v := number(m.group(1))) is not None:
            return [Fact(v, m.group(1), src, subject, "value", group=group, what=name)]
        if out:
            return out
        return [
            Fact(v, token, src, subject, "", group=group, weak=True, what=name)
            for token in ANY_NUM.findall(desc)
            if (v := number(token)) is not None
        ]

    def _loose(self, source: str, text: str, made: Made | None = None, expr: str = "") -> list[Fact]:
        """Numbers of a text this reader has no shape for: each labelled by the words on its line (and of the
        expression that gave them, when one did: ``readings[-3:]``)."""
        facts: list[Fact] = []
        group = self._group()
        of = made.subject if made is not None else frozenset()
        for line in text.splitlines():
            tokens = [t.strip("[](),") for t in line.split()]  # a numpy array prints "[19.9 18.7 19.2]"
            labels = [t for t in tokens if not is_num(t) and re.match(r"^[A-Za-z]", t)]
            for token in tokens:
                if not is_num(token) or (v := number(token)) is None:
                    continue
                rows = (
                    frozenset(set().union(*(label_forms(lab) for lab in labels))) if labels else frozenset()
                )
                facts.append(
                    Fact(
                        v,
                        token,
                        source,
                        frozenset(stem(x) for x in labels) | of,
                        "",
                        rows,
                        group=group,
                        weak=not labels and not of,
                        what=" ".join(labels) or _short(expr) or token,
                    )
                )
        return facts


def _unit_scale(label: str) -> float:
    m = _UNIT_SCALE.search(label or "")
    return SCALE_WORDS.get(m.group(1).lower(), 1.0) if m else 1.0


AGG_NAMES = {
    "mean": "mean",
    "median": "median",
    "sum": "total",
    "count": "count",
    "rows": "rows",
    "cols": "columns",
    "max": "max",
    "min": "min",
    "std": "std",
    "q25": "25th percentile",
    "q75": "75th percentile",
    "share": "share",
    "change": "change",
    "diff": "difference",
    "rel": "relative change",
    "ratio": "ratio",
    "nunique": "distinct count",
    "partitions": "partitions",
    "points": "points",
    "bars": "bars",
}


def what(agg: str, name: str, row: str = "") -> str:
    """What a value is, in a few words: "mean of price, north", "rows of sales", "total, paid"."""
    word = AGG_NAMES.get(agg, "")
    text = f"{word} of {name}" if word and name and column_agg(name) != agg else name or word or "a value"
    return f"{text}, {row}" if row else text


def _short(expr: str) -> str:
    expr = " ".join(expr.split())
    return expr if len(expr) <= 60 else expr[:59] + "…"


_ENTRY = re.compile(r"'([^']*)':\s*(-?[\d.]+(?:e[-+]?\d+)?)")


def _entries(text: str, source: str, subject: frozenset[str], group: int, name: str) -> list[Fact]:
    """A dict's numeric entries as shown (``{'north': 58.3, …}``): each a value whose row is its key."""
    return [
        Fact(
            v,
            shown,
            source,
            subject,
            "value",
            frozenset(label_forms(key)),
            group=group,
            what=f"{name}[{key!r}]",
        )
        for key, shown in _ENTRY.findall(text)
        if (v := number(shown)) is not None
    ]
