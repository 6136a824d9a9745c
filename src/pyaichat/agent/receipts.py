"""Receipts: every number of an answer, checked against what this turn's tool results (and the session
picture the model was given) showed.

Each number the answer states is one of:

- **supported**: some result showed it, equal at the answer's precision (``11.2`` ≡ ``11.2000``, ``11`` ≡
  ``11.2``, ``1,200`` ≡ ``1,234``; a sign is phrasing, "fell by 3.2" ≡ ``-3.2``; ``12.5 %`` ≡ ``0.125``);
- **contradicted**: the answer ties it to a quantity a tool of this turn computed, and it differs at the
  answer's precision from what that tool returned;
- **not found**: no result showed it (the model's own arithmetic, a rounded figure, or an invention).

How a number is *tied* to a result (the only way to "contradicted"; conservative on purpose, since a false
warning teaches people to ignore the true ones):

1. *An expression*: a sentence names an expression a call of this turn evaluated to one number — backticked
   (`` `df.price.mean()` ``), or in words for a column aggregate ("the mean of price", "average `price`",
   "number of rows" for ``len(df)``). The first number after the mention that no result supports is
   contradicted, unless some number of the sentence equals the call's value (then the sentence reports it).
   A sentence naming several such quantities gives each the numbers up to the next one ("the mean of price
   is 12.5 over 4 rows"); one that names them before their values ("`a` and `b` are 1 and 2") ties none.
2. *A table cell*: a Markdown table's cell whose row label and column header name exactly one value of a
   table a tool returned (a ``describe()``, a SQL result): that cell states that value, whatever else
   matches it by chance. A two-column table's cell whose header names no result column is tied to a
   one-value table's row (a ``value_counts()``) only when no result supports it.

Not checked at all (trivial): list markers, years in prose, numbers the question contained, numbers inside
code (a fenced Python block, an expression in backticks: ``df.head(10)``), times, dates, versions, ordinals.

Pure and fast (≤ 2 ms for an answer of 2,000 characters, ``benchmarks/receipts_cost.py``): regular
expressions and a sorted list searched by bisection; nothing here imports more than the standard library.

One module of ~500 lines on purpose: finding the numbers, tying them and judging them share one reading of a
number and one rule of precision (``_Num``, ``_equal``); apart, each part would reach into the others.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

SUPPORTED = "supported"
NOT_FOUND = "not found"
CONTRADICTED = "contradicted"
PICTURE = "the session picture"

# A number as written: a sign, digits (thousands grouped by commas or not), decimals, an exponent, a percent
# sign. Not a piece of a word (``float64``, ``x2``), a date, a time, a version or a path (``3.12.1``).
_NUMBER = re.compile(
    r"(?<![\w.\-/−])(?<!\d:)(?P<sign>[-−])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<frac>\.\d+)?"
    r"(?:[eE](?P<exp>[-+]?\d+))?(?P<pct>\s?%|\s(?:pp|percent|percentage points?)\b)?(?![\w/]|:\d|\.\d|,\d{3})"
)
# The same in a result, where only the value matters (the answer's number says how precise a match must be).
_RESULT_NUMBER = re.compile(
    r"(?<![\w.\-/])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?![\w/]|\.\d)"
)
_CELL = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?%?")
_FENCE = re.compile(r"^([ \t]*)(```|~~~)([\w+-]*)[^\n]*\n(.*?)^\1\2[ \t]*$", re.M | re.S)
_SPAN = re.compile(r"`([^`\n]+)`")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\d{1,3}[.)][ \t]", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*_\"'])|\n")
_CODE_LANGS = {"python", "py", "python3", "sql", "pycon", "ipython", "bash", "sh", "shell"}
_AGGREGATES = {
    "mean": ("mean", "average", "avg"),
    "median": ("median",),
    "sum": ("sum", "total"),
    "std": ("standard deviation", "std", "std dev"),
    "var": ("variance",),
    "min": ("minimum", "min", "lowest", "smallest"),
    "max": ("maximum", "max", "highest", "largest"),
    "count": ("count", "number of non-null"),
    "nunique": ("unique", "distinct"),
}
_AGG_CALL = re.compile(
    r"^(?P<obj>[A-Za-z_]\w*)(?:\.(?P<attr>[A-Za-z_]\w*)|\[\s*['\"](?P<key>[^'\"]+)['\"]\s*\])"
    r"\.(?P<agg>\w+)\(\s*\)$"
)
_LEN_CALL = re.compile(r"^(?:len\((?P<a>[A-Za-z_]\w*)\)|(?P<b>[A-Za-z_]\w*)\.shape\[0\])$")


@dataclass(frozen=True)
class Seen:
    """One tool result of the turn: the call as shown (``eval_expr(df.price.mean())``), the expression it
    evaluated (``""`` when it ran no single expression) and the text the model read."""

    call: str
    text: str
    expr: str = ""


@dataclass(frozen=True)
class Receipt:
    """One number of the answer: as written, its status, and the call behind it (or why it is flagged)."""

    number: str
    status: str
    source: str = ""  # the call (or "the session picture") whose result showed it / contradicts it
    shown: str = ""  # the value that result showed


@dataclass
class Receipts:
    """What the check found: each number (trivial ones left out) and one warning per contradicted one."""

    receipts: list[Receipt] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.receipts if r.status == status)

    def summary(self) -> str:
        """The answer's status line: ``receipts: 4 of 5 numbers found in this turn's results · 1 not found``
        ("" when the answer states no number worth checking)."""
        total = len(self.receipts)
        if not total:
            return ""
        found = self.count(SUPPORTED)
        noun = "number" if total == 1 else "numbers"
        parts = [f"receipts: {found} of {total} {noun} found in this turn's results"]
        for status in (NOT_FOUND, CONTRADICTED):
            if n := self.count(status):
                parts.append(f"{n} {status}")
        return " · ".join(parts)

    def warnings(self) -> list[str]:
        """One line per contradicted number, for under the answer."""
        return [
            f"{r.number} in the answer differs from what {r.source} returned: {r.shown}"
            for r in self.receipts
            if r.status == CONTRADICTED
        ]

    def lines(self) -> list[tuple[str, str]]:
        """``/receipts``: each number and the call behind it (or that none showed it)."""
        rows = []
        for r in self.receipts:
            if r.status == SUPPORTED:
                rows.append((r.number, f"found in {r.source}: {r.shown}"))
            elif r.status == CONTRADICTED:
                rows.append((r.number, f"CONTRADICTED: {r.source} returned {r.shown}"))
            else:
                rows.append((r.number, "not found: no result of this turn showed it"))
        return rows


@dataclass(slots=True)
class _Num:
    text: str
    value: float
    tol: float  # half a unit of the last digit written
    pct: bool
    start: int
    end: int


def _parse(m: re.Match[str]) -> _Num | None:
    sign, whole, frac, exp_text, pct = m.groups()
    if whole is None and frac is None:
        return None
    digits = whole.replace(",", "") if whole else "0"
    text = m.group(0).strip()
    if pct and "%" not in pct:  # "0.59 percentage points": the number, as a percent
        text = text[: len(text) - len(pct)] + "%"
    exp = int(exp_text) if exp_text else 0
    value = float(digits + frac if frac else digits) * (10.0**exp if exp else 1.0)
    if frac:
        tol = 0.5 * 10.0 ** (exp - (len(frac) - 1))
    else:
        # a round number is read to its last non-zero digit, keeping two significant digits at least:
        # 1,200 ≈ 1,150–1,250, 100 ≈ 95–105, 1,234 and 42 to the unit
        zeros = len(digits) - len(digits.rstrip("0")) if len(digits) > 2 else 0
        tol = 0.5 * 10.0 ** (exp + min(zeros, len(digits) - 2))
    return _Num(text, -value if sign else value, tol * (1 + 1e-9), bool(pct), m.start(), m.end())


def numbers_in(text: str) -> list[_Num]:
    """Every number token of ``text`` (no piece of a word, a date, a time or a version)."""
    found = []
    for m in _NUMBER.finditer(text):
        num = _parse(m)
        if num is not None:
            found.append(num)
    return found


class _Values:
    """The numbers results showed, sorted by size for a look-up by bisection; each with where it was seen."""

    def __init__(self) -> None:
        self._pairs: list[tuple[float, str, str]] = []
        self._keys: list[float] = []

    def add(self, text: str, source: str) -> None:
        """Every number of ``text`` (a percentage also as its ratio), seen in ``source``."""
        pairs = self._pairs
        for shown in _RESULT_NUMBER.findall(text):
            try:
                value = abs(float(shown.rstrip("%").replace(",", "")))
            except ValueError:
                continue
            pairs.append((value, source, shown))
            if shown.endswith("%"):
                pairs.append((value / 100, source, shown))
        pairs.sort()  # in the C sort, mostly sorted already: the cost lands as each result arrives
        self._keys = [pair[0] for pair in pairs]

    def near(self, value: float, tol: float) -> tuple[str, str] | None:
        """The result value closest to ``value`` within ``tol`` (where it was seen, as written)."""
        lo = bisect.bisect_left(self._keys, abs(value) - tol)
        hi = bisect.bisect_right(self._keys, abs(value) + tol)
        if lo >= hi:
            return None
        best = min(range(lo, min(hi, lo + 64)), key=lambda i: abs(self._keys[i] - abs(value)))
        _, source, shown = self._pairs[best]
        return source, shown


def _equal(num: _Num, value: float) -> bool:
    """``num`` as written states ``value`` (at its precision; a percent of a ratio too)."""
    if abs(abs(num.value) - abs(value)) <= num.tol:
        return True
    return num.pct and abs(abs(num.value) - abs(value) * 100) <= num.tol


def _norm_expr(expr: str) -> str:
    expr = re.sub(r"\s+", "", expr).replace('"', "'")
    return re.sub(r"\['([A-Za-z_]\w*)'\]", r".\1", expr)


@dataclass(frozen=True)
class _Tie:
    """A call that evaluated one expression to one number, and how an answer may name it."""

    source: str
    value: float
    shown: str
    expr: str  # normalised
    phrases: tuple[re.Pattern[str], ...]


def _phrases(expr: str) -> tuple[re.Pattern[str], ...]:
    m = _AGG_CALL.match(expr.strip())
    if m:
        column = re.escape(m.group("attr") or m.group("key") or "")
        words = _AGGREGATES.get(m.group("agg"), ())
        if not column or not words:
            return ()
        agg = "|".join(re.escape(w) for w in words)
        q = r"[`'\"*]?"
        return (
            re.compile(rf"\b(?:{agg})\b\s+(?:of\s+)?(?:the\s+)?(?:column\s+)?{q}{column}\b", re.I),
            re.compile(rf"{q}\b{column}{q}(?:\s+column)?(?:'s)?\s+(?:{agg})\b", re.I),
        )
    m = _LEN_CALL.match(expr.strip())
    if m:
        return (re.compile(r"\b(?:number of rows|row count|rows)\b", re.I),)
    return ()


def _scalar(text: str) -> _Num | None:
    """The one number of a result that is one number (``float64 11.2``, ``int\\n4``), else ``None``."""
    if len(text) > 80:
        return None
    found = numbers_in(text)
    return found[0] if len(found) == 1 else None


def _table_cells(item: Seen, cells: dict[tuple[str, str], set[tuple[float, str, str]]]) -> None:
    """Add the cells of the tables ``item`` showed (pandas' aligned text) to ``cells``: (row label, column)
    → values; a table of one value column is also keyed by (row label, "")."""
    header: list[str] = []
    for line in item.text.splitlines():
        tokens = line.split()
        if len(tokens) < 2 or not all(_CELL.fullmatch(t) for t in tokens[1:]):
            header = tokens if tokens and not any(_CELL.fullmatch(t) for t in tokens) else []
            continue
        values = tokens[1:]
        label = tokens[0].lower()
        # a header over the values, or over the index and the values (a SQL result's first column)
        columns = header[-len(values) :] if len(header) in (len(values), len(values) + 1) else []
        for i, shown in enumerate(values):
            value = float(shown.rstrip("%").replace(",", ""))
            keys = [(label, columns[i].lower())] if columns else []
            if len(values) == 1:
                keys.append((label, ""))
            for key in keys:
                cells.setdefault(key, set()).add((value, item.call, shown))


def _masked_code(answer: str) -> str:
    """``answer`` with code blanked out (same length, so positions hold): fenced blocks in a programming
    language, and backticked spans that are expressions rather than a value (``df.head(10)``; `` `11.2` ``
    stays)."""
    chars = list(answer)

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "

    for m in _FENCE.finditer(answer):
        if m.group(3).lower() in _CODE_LANGS:
            blank(m.start(4), m.end(4))
    for m in _SPAN.finditer(answer):
        inner = m.group(1).strip()
        nums = numbers_in(inner)
        if not (len(nums) == 1 and nums[0].text == inner.rstrip(".")):
            blank(m.start(1), m.end(1))
    return "".join(chars)


def _trivial(num: _Num, text: str, asked: set[str], in_table: bool) -> bool:
    if num.text.lstrip("-−") in asked:
        return True
    line_start = text.rfind("\n", 0, num.start) + 1
    marker = _LIST_MARKER.match(text, line_start)
    if marker and num.start < marker.end():
        return True
    plain = "," not in num.text and "." not in num.text and not num.pct
    return plain and not in_table and 1800 <= num.value <= 2100


class Evidence:
    """What the model of one turn was shown, indexed as it arrives (``add`` with each tool result, during
    the turn, where a tool call and a model request take far longer): so checking the answer (``check``)
    costs only the answer's own numbers."""

    def __init__(self, picture: str = "") -> None:
        self.values = _Values()
        self.ties: list[_Tie] = []
        self.cells: dict[tuple[str, str], set[tuple[float, str, str]]] = {}
        if picture:
            self.values.add(picture, PICTURE)

    def add(self, item: Seen) -> None:
        self.values.add(item.text, item.call)
        _table_cells(item, self.cells)
        if item.expr:
            one = _scalar(item.text)
            if one is not None:
                expr = item.expr.strip()
                self.ties.append(_Tie(item.call, one.value, one.text, _norm_expr(expr), _phrases(expr)))


def check(answer: str, seen: Evidence | list[Seen], picture: str = "", question: str = "") -> Receipts:
    """The receipts of ``answer``, against what the turn showed: an ``Evidence`` gathered as it went, or the
    results ``seen`` and the session ``picture``."""
    if isinstance(seen, Evidence):
        evidence = seen
    else:
        evidence = Evidence(picture)
        for item in seen:
            evidence.add(item)
    values = evidence.values
    asked = {n.text.lstrip("-−") for n in numbers_in(question)}

    text = _masked_code(answer)
    table_rows = _table_rows(text)
    numbers = [
        n
        for n in numbers_in(text)
        if not _trivial(n, text, asked, table_rows.get(text.rfind("\n", 0, n.start) + 1) is not None)
    ]
    receipts: dict[int, Receipt] = {}
    for num in numbers:
        hit = values.near(num.value, num.tol)
        if hit is None and num.pct:
            hit = values.near(num.value / 100, num.tol / 100)
        receipts[num.start] = Receipt(num.text, SUPPORTED, *hit) if hit else Receipt(num.text, NOT_FOUND)
    unsupported = {start for start, r in receipts.items() if r.status == NOT_FOUND}
    receipts.update(_by_expression(answer, numbers, unsupported, evidence.ties))
    receipts.update(_by_table(text, numbers, unsupported, table_rows, evidence.cells))
    return Receipts([receipts[n.start] for n in numbers])


@dataclass(frozen=True)
class _Row:
    label: str
    cells: list[tuple[int, int]]  # spans of the cells after the label
    header: list[str]


def _table_rows(text: str) -> dict[int, _Row]:
    """Markdown table rows by the offset of their line: the first cell's text and the header's names."""
    rows: dict[int, _Row] = {}
    header: list[str] = []
    offset = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("|") and stripped.count("|") >= 2:
            cells = [(m.start() + offset, m.end() + offset) for m in re.finditer(r"(?<=\|)[^|]*(?=\|)", line)]
            names = [text[a:b].strip().strip("`*_").lower() for a, b in cells]
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if re.fullmatch(r"\|?[\s:|-]+\|?", nxt or "x") and "-" in nxt:
                header = names
            elif re.fullmatch(r"\|?[\s:|-]+\|?", stripped):
                pass
            elif cells:
                rows[offset] = _Row(names[0], cells[1:], header[1:] if len(header) == len(cells) else [])
        else:
            header = []
        offset += len(line) + 1
    return rows


def _by_expression(
    answer: str, numbers: list[_Num], unsupported: set[int], ties: list[_Tie]
) -> dict[int, Receipt]:
    found: dict[int, Receipt] = {}
    if not ties:
        return found
    for start, end in _sentences(answer):
        sentence = answer[start:end]
        mentions: list[tuple[int, int, _Tie]] = []  # (where it starts, where it ends, the call it names)
        for m in _SPAN.finditer(sentence):
            key = _norm_expr(m.group(1))
            mentions += [(start + m.start(), start + m.end(), t) for t in ties if t.expr == key]
        if not mentions:  # words name a quantity only where no backticked expression does
            for tie in ties:
                for pattern in tie.phrases:
                    mentions += [
                        (start + m.start(), start + m.end(), tie) for m in pattern.finditer(sentence)
                    ]
        if not mentions:
            continue
        mentions.sort(key=lambda mention: mention[0])
        inside = [n for n in numbers if start <= n.start < end]
        if len({id(t) for _, _, t in mentions}) == 1:
            tie = mentions[0][2]
            if not any(_equal(n, tie.value) for n in inside):
                _first_unsupported(inside, mentions[0][1], end, unsupported, tie, found)
            continue
        # several quantities: each number goes with the one named just before it ("the mean of price is
        # 12.5 over 4 rows"); names listed before their values ("`a` and `b` are 1 and 2") tie nothing
        bounds = [m[0] for m in mentions[1:]] + [end]
        segments = [
            (m[1], bound, m[2], [n for n in inside if m[1] <= n.start < bound])
            for m, bound in zip(mentions, bounds, strict=True)
        ]
        if any(not nums for _, _, _, nums in segments[:-1]):
            continue
        for after, bound, tie, nums in segments:
            if nums and not any(_equal(n, tie.value) for n in nums):
                _first_unsupported(nums, after, bound, unsupported, tie, found)
    return found


def _first_unsupported(
    nums: list[_Num], after: int, before: int, unsupported: set[int], tie: _Tie, found: dict[int, Receipt]
) -> None:
    """The first number between ``after`` and ``before`` that no result showed contradicts ``tie``."""
    for n in nums:
        if after <= n.start < before and n.start in unsupported:
            found[n.start] = Receipt(n.text, CONTRADICTED, tie.source, tie.shown)
            return


def _by_table(
    text: str,
    numbers: list[_Num],
    unsupported: set[int],
    rows: dict[int, _Row],
    cells: dict[tuple[str, str], set[tuple[float, str, str]]],
) -> dict[int, Receipt]:
    found: dict[int, Receipt] = {}
    if not cells:
        return found
    for n in numbers:
        row = rows.get(text.rfind("\n", 0, n.start) + 1)
        if row is None:
            continue
        for i, (a, b) in enumerate(row.cells):
            if not (a <= n.start < b and text[a:b].strip().strip("`*_") == n.text):
                continue
            column = row.header[i] if i < len(row.header) else ""
            known = cells.get((row.label, column))
            if not known and len(row.cells) == 1 and n.start in unsupported:
                known = cells.get((row.label, ""))  # a two-column table: its one value, if nothing showed it
            if known and len({v for v, _, _ in known}) == 1:
                value, source, shown = next(iter(known))
                if not _equal(n, value):
                    found[n.start] = Receipt(n.text, CONTRADICTED, source, shown)
    return found


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans
