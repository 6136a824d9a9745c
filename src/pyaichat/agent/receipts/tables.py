"""A result's text read as tables: pandas' and polars' aligned frames and series, SQL results, with their
header, the name of their index and each row's labels and cells; and the ways an answer may write a row's
label (a date's month, a describe() row's statistic, "Jan" for January)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .words import AGG_STEMS, COUNTRY_CODES, MONTH_WORDS, MONTHS, label_key, stem

_NUM = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?%?$")


ANY_NUM = re.compile(
    r"(?<![\w.\-/])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?![\w/]|\.\d)"
)


_ISO = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[ T](\d{2}):(\d{2})(?::\d{2})?)?$")


_TIMESTAMP = re.compile(r"Timestamp\('(\d{4})-(\d{2})-(\d{2})")


_BOX_ROW = re.compile(r"[│┆]")


_BOX_RULE = re.compile(r"^\s*[╞╪═─┌┐└┘├┤┬┴┼╡]")


_DTYPES = frozenset(["str", "f64", "i64", "u32", "i32", "f32", "bool", "date", "datetime", "---", "object"])


TRAILERS = ("Freq:", "Name:", "dtype:", "Length:", "shape:")


# describe() rows and agg() columns: the label is the aggregate
STAT_LABELS = {
    "mean": "mean",
    "avg": "mean",
    "average": "mean",
    "std": "std",
    "sd": "std",
    "min": "min",
    "max": "max",
    "25%": "q25",
    "50%": "median",
    "median": "median",
    "75%": "q75",
    "count": "count",
    "sum": "sum",
    "null_count": "count",
    "nunique": "nunique",
    "unique": "nunique",
}


def is_num(token: str) -> bool:
    return token not in ("", "-", "+", ".", "%") and bool(_NUM.match(token))


def number(token: str) -> float | None:
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
    stat = STAT_LABELS.get(key)
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
    country = COUNTRY_CODES.get(key)
    if country:  # "JP" is written "Japan", "Japanese"
        forms.update(stem(name) for name in country)
    return frozenset(forms)


# -- the tables in a result's text ---------------------------------------------------------------------------
@dataclass
class Table:
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
    return is_num(token) or token.lower() in ("nan", "null", "none", "nat", "<na>")


def tables(text: str) -> list[Table]:
    """The aligned tables of ``text`` (pandas frames, SQL results, polars' boxes): header, index name, rows.
    A line without values is a header (or the name of the index under one); a line with values is a row,
    its label cells first."""
    found: list[Table] = []
    cur: Table | None = None
    header: list[str] = []
    for raw in text.splitlines():
        if not raw.strip() or _BOX_RULE.match(raw) or raw.lstrip().startswith(TRAILERS):
            if not raw.strip() or raw.lstrip().startswith(TRAILERS):
                cur, header = None, []
            continue
        tokens = _cells(raw)
        if not tokens or (len(tokens) > 1 and all(t in _DTYPES for t in tokens)):
            continue
        if not any(_value_like(t) for t in tokens):
            if cur is not None and not cur.rows and len(tokens) == 1:
                cur.index_name = tokens[0]
            elif cur is None and len(tokens) == 1 and header and len(header) > 1:
                cur = Table(header, [], tokens[0])
                found.append(cur)
            else:
                header, cur = tokens, None
            continue
        if cur is None:
            # a Series: the line above names its index
            cur = Table([], [], header[0]) if len(header) == 1 and len(tokens) == 2 else Table(header, [])
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


def month_index(index_name: str, labels: list[str]) -> bool:
    """An integer index 1…12 named like a date (``date``, ``month``): its labels are months."""
    return (
        bool(re.search(r"date|month|time|period", index_name, re.I))
        and bool(labels)
        and all(lab.isdigit() and 1 <= int(lab) <= 12 for lab in labels)
    )
