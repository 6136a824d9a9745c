"""An answer's claims: each number that states something, with the words that say what — the words beside it
(back to the number before it, on to the next one or a comma; around its parentheses), the words of its
clause before its first number (the clause's subject), the line introducing its table or list, its table row
and column — and which numbers are no claim (code, list markers, versions, years, the question's own numbers,
a table's row labels and header, thresholds after ``<``/``>``, enumerators).

The numbers are read once and each clause's words once; its subject and the words beside a number are read
only when some fact could be about it (``complete``): most numbers are judged by their value alone.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from .markdown import table_cells
from .words import (
    AFTER_DOWN_STEMS,
    AFTER_UP_STEMS,
    AGG_STEMS,
    BASE_STEMS,
    BOUND_STEMS,
    COMPARATIVE_STEMS,
    DERIVED_STEMS,
    DOWN_STEMS,
    EXCLUSIVE,
    HYPOTHETICAL,
    LABEL_VERBS,
    RANGE_WORDS,
    RATE_STEMS,
    SCALE_WORDS,
    STEMS,
    SUPERLATIVES,
    UP_STEMS,
    WORD,
    acronyms,
    spellings,
    stem,
    words,
)
from .written import Written, code_spans, hedged, is_version, is_year, list_marker_end, masked_both, read

# a sentence's end, a line, a dash; a long parenthetical is a clause of its own ("(2 ages are missing)")
_CLAUSE_END = re.compile(r"(?<=[.!?;])\s+|\n|\s[—–]\s|\s\((?=[^()\n`]*\d[^()\n`]*[a-z]{3}[^()\n`]*\))")
_LONG_PAREN = re.compile(r"\s\(([^()\n`]*\d[^()\n`]*[a-z]{3}[^()\n`]*)\)")
_PCT_HEADER = re.compile(r"\(%\)|%|\bpercent\b|\bpct\b", re.I)
_UNIT_HEADER = re.compile(
    r"[($]\s*\$?\s*(k|m|mn|bn|b|thousands?|millions?|billions?)\s*\$?\s*\)|\b(k|bn)\$", re.I
)
# an aggregate other than a minimum or maximum, named before a range: its ends are the aggregate's
_NAMED_AGG = frozenset().union(*(AGG_STEMS[k] for k in EXCLUSIVE - SUPERLATIVES))
_SEPARATORS = re.compile(r"[,;()\[\]]|\b(?:and|but|while|vs|versus|against|then|though|whereas)\b")
_OPERATOR_BEFORE = re.compile(r"(?:<=?|>=?|≤|≥|==)\s*[-−]?[$€£]?$")
_STEP_WORDS = frozenset(
    [
        "step",
        "item",
        "option",
        "case",
        "figure",
        "fig",
        "table",
        "chart",
        "axes",
        "group",
        "line",
        "input",
        "version",
        "v",
    ]
)
_YEAR_BEFORE = re.compile(
    r"(?:^|\b(?:in|since|from|to|until|by|during|of|year|fy|for|between|and|early|late|mid|q[1-4]"
    r"|jan\w*|feb\w*|mar\w*|apr\w*|may|june?|july?|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*))\W*$",
    re.I,
)
_RANGE_END = re.compile(r"\(\d+\s*[–-]$")
_CONVENTION = re.compile(r"\s?%?\s*(?:level|significance|confidence|ci\b|interval|threshold)")
_RANGE_AFTER = re.compile(r"\s*(?:[–-]|to)\s*\d")
_ALPHA = re.compile(r"(?:α|alpha|significance level of|level of)\s*=?\s*$", re.I)
_OR_LABEL = re.compile(r"\s*(?:or|and|to|[–-])\s*\d+\s*(?:stars?|points?)?\b")
_LABEL_AFTER = re.compile(r"\s*(?:[:)(]|stars?\b|-star\b)", re.I)
_LIST_LINE = re.compile(r"\s*(?:[|*+-]|\d+[.)]\s)")
_BOUND_BEFORE = re.compile(r"\bat (?:least|most)\W*$")
_RESTATED = re.compile(
    r"\b(?:which is|that is|i\.e\.|equivalent to|or about|or roughly)\W*(?:about|around|roughly)?\W*$"
)
_OF_THE = re.compile(r"\b(?:out of|of)(?: the| all)?\s*$")
_PER = re.compile(r"\bper\b")
_TIMES_BEFORE = re.compile(r"\b(?:times|x)\s*$")
_HYPOTHETICAL = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(HYPOTHETICAL))) + r")\b")
_OPEN = " *_$€£~"
_PREPOSITIONS = frozenset(["in", "for", "at", "of", "during", "among", "across"])
_COPULAS = frozenset(["is", "are", "was", "were"])
_COMPARATIVE_DOWN = frozenset(stem(w) for w in ["worse", "lower", "less", "fewer", "smaller", "below"])
_COMPARATIVE_UP = frozenset(stem(w) for w in ["better", "higher", "more", "larger", "bigger", "above"])
_SHARE_BOUNDS = BOUND_STEMS - {stem("threshold")}
_TO_END = re.compile(r"\b(?:up\s+)?to\W*$")
_HEAD = re.compile(r"^[^\w,;()\[\]]*(?:[A-Za-z%°]+[^\w,;()\[\]]*){1,2}")


@dataclass(slots=True)
class Claim:
    """One number of the answer and the words that say what it is."""

    num: Written
    clause: frozenset[str] = frozenset()  # every word of its clause (its table row and column too)
    lead: frozenset[str] = frozenset()  # the line that introduces its table or list
    row: str = ""  # a table cell: its row's label cells
    column: str = ""  # and its column's header
    corner: str = ""  # the table's first header cell (what its rows are)
    scale: float = 1.0  # a unit from its table header: ``revenue ($k)``
    days: frozenset[str] = frozenset()  # the days its clause names ("On March 3 …"), as row keys
    code: frozenset[str] = frozenset()  # the expressions its clause names in backticks, normalised
    # read by ``complete``: its clause's subject, the words beside it
    prefix: frozenset[str] = frozenset()  # its clause's words before its first number, and its lead line
    suffix: frozenset[str] = frozenset()  # its clause's words after its last number ("… passengers survived")
    before: list[str] = field(default_factory=list)  # back to the number before it (or a comma)
    head: list[str] = field(default_factory=list)  # the two words after the number before it (its noun)
    after: list[str] = field(default_factory=list)  # on to the next number (or a comma), four at most
    own: frozenset[str] = frozenset()  # before and after
    near_rows: frozenset[str] = frozenset()  # its own words that may name its row (not a comparison's base)
    context: frozenset[str] = frozenset()  # own, prefix and lead (and its table labels)
    beside: frozenset[str] = frozenset()  # before and the first two words after
    text_before: str = ""  # its clause's text before it (40 characters at most), lower case
    text_after: str = ""
    direction: int = 0  # +1 / -1: the change it states goes up / down
    points: bool = False  # "0.5 points": percentage points where the value is a ratio
    group_label: bool = False  # its after words name several labels ("4 or 5 stars")
    denominator: bool = False  # "3 of the 12 readings": a total, not a count of those that are
    last: bool = False  # the last number of its clause: the clause's words after it are about it
    _derived: str | None = field(default=None, repr=False)
    _shown: tuple = field(
        default=("", "", 0, 0), repr=False
    )  # where its words come from (to say which tied it)
    _where: tuple | None = field(default=None, repr=False)  # what ``complete`` reads from

    @property
    def spelled(self) -> dict[str, str]:
        """Each stem of its words and the word as the answer wrote it."""
        lead, said, start, end = self._shown
        return spellings(f"{lead} {said[start:end]} {self.row} {self.column} {self.corner}")

    @property
    def derived(self) -> str:
        """Why it is not a value a result states (a comparison, a bound, a rate, an example), or ""."""
        if self._derived is None:
            self._derived = _derived(self)
        return self._derived


@dataclass
class _Clause:
    start: int
    end: int
    words: frozenset[str]
    spans: list[tuple[int, str]]
    numbers: list[Written]  # its claims' numbers
    days: frozenset[str]
    code: frozenset[str]  # the expressions it names in backticks, normalised
    first: int  # where its first number starts
    last: int  # and its last one ends
    _subject: tuple[frozenset[str], frozenset[str]] | None = None

    def subject(self, said: str) -> tuple[frozenset[str], frozenset[str]]:
        """Its words before its first number and after its last ("55% of the 20 passengers survived"): read
        once, and only for a claim some fact could be about (most numbers are judged by their value alone)."""
        if self._subject is None:
            prefix = frozenset(w for w in _stems_of(said, self.start, self.first) if not w.isdigit())
            suffix = frozenset(w for w in _stems_of(said, self.last, self.end) if not w.isdigit())
            self._subject = (prefix, suffix)
        return self._subject


def claims_of(answer: str, question: str = "", row_labels: frozenset[str] = frozenset()) -> list[Claim]:
    """The claims of ``answer``, in order (``row_labels``: the turn's results' row labels, so that a number
    that is one of them, written as a label, is not taken for a value)."""
    text, said = masked_both(answer)  # numbers from the first; words from the second (`price` is a word)
    numbers = read(text)
    if not numbers:
        return []
    spans = code_spans(answer) if "`" in answer else []
    asked = _asked(question) if question else frozenset()
    cells = table_cells(text, numbers) if "|" in text else {}
    kept: list[tuple[Written, tuple[str, str, str, bool] | None]] = []
    for i, num in enumerate(numbers):
        cell = cells.get(num.start)
        if cell is not None and cell[3]:  # a row's label cell, or the header
            continue
        if not _not_a_claim(text, num, asked, cell is not None, row_labels, numbers, i):
            kept.append((num, cell))
    if not kept:
        return []
    mine = [num for num, _ in kept]
    positions = [n.start for n in mine]
    bounds = _clauses(text)
    starts = [a for a, _ in bounds]
    clauses: dict[int, _Clause] = {}
    leads: dict[int, tuple[frozenset[str], str]] = {}
    out = []
    for j, (num, cell) in enumerate(kept):
        k = max(bisect.bisect_right(starts, num.start) - 1, 0)
        clause = clauses.get(k)
        if clause is None:
            clause = clauses[k] = _clause(said, bounds[k], spans, mine, positions)
        out.append(_claim(num, j, mine, clause, said, text, cell, leads))
    return out


@lru_cache(maxsize=64)
def _asked(question: str) -> frozenset[str]:
    """The numbers the question itself wrote (an answer repeating them claims nothing)."""
    return frozenset(n.text.lstrip("-−+") for n in read(question))


def _content(text: str) -> frozenset[str]:
    """A text's words, bare numbers left out (they are the numbers', not the text's), with the initials of
    its capitalised names ("Net Promoter Score": nps)."""
    found = frozenset(w for w in words(text) if not w.isdigit())
    return found | frozenset(acronyms(text)) if " " in text and any(c.isupper() for c in text) else found


def _stems_of(text: str, start: int, end: int) -> list[str]:
    """The stems of the words of ``text[start:end]`` (read in place: no copy of the text)."""
    known = STEMS.get
    return [known(w) or stem(w) for w in WORD.findall(text, start, end)]


def _clause(
    said: str,
    bound: tuple[int, int],
    spans: list[tuple[int, str]],
    numbers: list[Written],
    positions: list[int],
) -> _Clause:
    start, end = bound
    inside = numbers[bisect.bisect_left(positions, start) : bisect.bisect_left(positions, end)]
    days: set[str] = set()
    for n in inside:
        if n.date is not None:
            days |= day_keys(n.date)
    first = inside[0].start if inside else end
    last = inside[-1].end if inside else end
    mine = [s for s in spans if start <= s[0] < end] if spans else []
    every = frozenset(_stems_of(said, start, end))  # its numbers' digits too: "3 stars" is a label
    code = frozenset(expr for _, expr in mine) if mine else frozenset()
    return _Clause(start, end, every, mine, inside, frozenset(days), code, first, last)


def _claim(
    num: Written,
    j: int,
    numbers: list[Written],
    clause: _Clause,
    said: str,
    text: str,
    cell: tuple[str, str, str, bool] | None,
    leads: dict[int, tuple[frozenset[str], str]],
) -> Claim:
    """A claim with what its clause says (enough to find the facts it may be about); the words beside it are
    read only if some are (``complete``)."""
    claim = Claim(num, clause=clause.words)
    num.hedged = hedged(said[max(0, num.start - 24) : num.start])
    claim.code = clause.code
    line_start = text.rfind("\n", 0, num.start) + 1
    if line_start not in leads:
        lead = _lead_line(text, line_start)
        leads[line_start] = (_content(lead), lead) if lead else (frozenset(), "")
    claim.lead, lead_text = leads[line_start]
    if cell is not None:
        claim.row, claim.column, claim.corner, _ = cell
        header = f"{claim.column} {claim.row}"
        if not num.pct and _PCT_HEADER.search(header):
            num.pct = True
        m = _UNIT_HEADER.search(header)
        if m:
            claim.scale = SCALE_WORDS.get((m.group(1) or m.group(2)).lower(), 1.0)
        labels = f"{claim.row} {claim.column} {claim.corner}"
        claim.clause = clause.words | frozenset(words(labels))
    claim.days = clause.days - day_keys(num.date) if num.date is not None else clause.days
    claim._where = (j, numbers, clause, said)
    claim._shown = (lead_text, said, clause.start, clause.end)
    return claim


def complete(claim: Claim) -> None:
    """Read the words beside the claim: back to the number before it and on to the next one, each cut at the
    nearest comma, "and", "vs" (a number in parentheses reads past them); then its direction."""
    if claim._where is None:
        return
    j, numbers, clause, said = claim._where
    claim._where = None
    prefix, claim.suffix = clause.subject(said)
    claim.prefix = prefix | claim.lead if claim.lead else prefix
    num = claim.num
    start, end = clause.start, clause.end
    prev_end = numbers[j - 1].end if j > 0 and numbers[j - 1].end > start else start
    next_start = numbers[j + 1].start if j + 1 < len(numbers) and numbers[j + 1].start < end else end
    claim.last = next_start == end
    own_before = said[prev_end : num.start]
    head_text = ""
    between = _SEPARATORS.search(own_before)
    if prev_end > start and between is None:
        # the number before keeps the two words right after it ("14 distinct texts across 400 reviews"); past
        # a comma, an "and", all the words are this one's ("east 25.4%, south 25.1% and west 19.6%")
        head = _HEAD.match(own_before)
        if head:
            end = head.end()
            to = _TO_END.search(own_before, 0, end)
            if to:  # "from 610 up to 3,835 orders": "up to" starts this one's range end, not the 610's noun
                end = to.start()
            head_text, own_before = own_before[:end], own_before[end:]
    own_after = said[num.end : next_start]
    stripped = own_before.rstrip(_OPEN)
    close = own_after.lstrip(" %*_")
    if stripped.endswith("(") and close.startswith(")"):
        # "(47.3%) in May": alone in its parentheses, the words around them are its own ("(2 ages are
        # missing)" is a clause of its own)
        own_before = stripped[:-1]
        own_after = close[1:]
    cuts = list(_SEPARATORS.finditer(own_before))
    cut = cuts[-1] if cuts else None
    if cut is not None:
        own_before = own_before[cut.end() :]
        head_text = ""  # a comma between them: the number before's noun is not this one's
    elif head_text and _SEPARATORS.search(head_text):
        head_text = ""
    colon = own_after.find(":")
    if colon >= 0:  # "3 figs: revenue line": the noun phrase ends at the colon
        own_after = own_after[:colon]
    sep = _SEPARATORS.search(own_after)
    trim = sep is None and next_start < end  # the words right before the next number are its own
    if sep:
        rest = ""
        if sep.group() == "(" and next_start < end:  # "606 respondents (52.8%) would recommend": past it
            close = said.find(")", next_start, end)
            if close > 0:
                rest = said[close + 1 : end]
                more = _SEPARATORS.search(rest)
                rest = rest[: more.start()] if more else rest
        own_after = own_after[: sep.start()] + " " + rest
    claim.before = words(own_before)
    claim.head = words(head_text)
    after = words(own_after)
    if trim and len(after) > 2:
        after = after[: max(2, len(after) - 3)]
    claim.after = after[:4]
    claim.group_label = bool(_OR_LABEL.search(own_after))  # "give 4 or 5 stars": no one row
    claim.text_before = said[max(start, num.start - 40) : num.start].lower()
    claim.text_after = said[num.end : min(end, num.end + 8)].lower()
    mine = _respectively(clause.spans, clause.numbers, num)
    if mine is not None:  # "`a` and `b` are 1 and 2": the i-th number is the i-th expression's
        claim.code = frozenset({mine})
        claim.before = words(mine.replace(".", " ").replace("_", " "))
    ends = claim.before[-1:]
    if ends and ends[0] in RANGE_WORDS and (ends[0] == "from" or "from" in claim.text_before):
        ends_of = list(RANGE_WORDS[ends[0]])  # "from 5 to 127": the ends of a range
        if _NAMED_AGG & (claim.prefix | set(claim.before)):
            ends_of = ends_of[1:]  # "the mean temperature rose from 22.09": the mean's ends, not a min or max
        claim.before = claim.before + ends_of
    if " " in own_before and any(c.isupper() for c in own_before):
        claim.before = claim.before + acronyms(own_before)  # "Net Promoter Score": nps
    own = frozenset(claim.before) | frozenset(claim.after)
    claim.own = own
    claim.near_rows = _near_rows(claim.head + claim.before[-8:], claim.after, claim.group_label) | claim.days
    claim.context = own | claim.prefix
    if claim.row or claim.column:
        claim.context = claim.context | frozenset(words(f"{claim.row} {claim.column} {claim.corner}"))
    claim.beside = frozenset(claim.before) | frozenset(claim.after[:2])
    claim.direction = _direction(num, claim)
    claim.denominator = j > 0 and numbers[j - 1].end > start and bool(_OF_THE.search(claim.text_before[-14:]))
    claim.points = bool(claim.after) and claim.after[0] in ("point", "pt", "pts")


def _near_rows(before: list[str], after: list[str], group: bool = False) -> frozenset[str]:
    """The words beside a number that may name its row: not one right after "on", "than", "vs", "from" (the
    row it is compared with: "rose 27 % on March")."""
    out = set()
    base = False
    for w in before:
        if w in BASE_STEMS:
            base = True
            continue
        if not base:
            out.add(w)
        base = False
    # after it, its noun ("247 paid", "five-star") or the word after a preposition ("19.25 % in April")
    if after:
        if after[0] in _PREPOSITIONS:
            out.update(after[1:2])
        elif after[0] not in BASE_STEMS:
            out.add(after[0])
            if len(after) > 1 and not (group and after[1].isdigit()):
                out.add(after[1])  # "4,980 widget orders", "chose 3" (not "give 4 or 5 stars")
            if len(after) > 2 and after[1] in _COPULAS:
                out.add(after[2])  # "4 orders are paid"
    return frozenset(out)


def _not_a_claim(
    text: str,
    num: Written,
    asked: frozenset[str],
    in_table: bool,
    row_labels: frozenset[str],
    nums: list[Written],
    i: int,
) -> bool:
    if asked and num.text.lstrip("-−+") in asked:
        return True
    line_start = text.rfind("\n", 0, num.start) + 1
    if num.start - line_start < 8:
        marker = list_marker_end(text, num.start)
        if marker and num.start < marker:
            return True
    if (
        num.date is None
        and is_year(num)
        and not in_table
        and _YEAR_BEFORE.search(text[max(0, num.start - 12) : num.start])
    ):
        return True
    before = text[max(0, num.start - 24) : num.start]
    tail = before.rstrip(" $€£-−(")
    if tail:
        if tail[-1].isalpha():
            last = tail.rsplit(None, 1)[-1].lower().lstrip("*_`(")
            if is_version(last) or last in _STEP_WORDS:
                return True
        elif tail[-1] in "<>=≤≥" and _OPERATOR_BEFORE.search(before):
            return True
    if (
        num.integer
        and num.value < 10
        and text[num.start - 1 : num.start] == "("
        and text[num.end : num.end + 1] == ")"
    ):
        return True  # an enumerator: "(1)"
    after = text[num.end : num.end + 14].lower()
    if (
        "level" in after or "signif" in after or "confid" in after or "interval" in after or "ci" in after
    ) and (_CONVENTION.match(after)):
        return True  # "the 5 % level", "a 95 % interval"
    if before.endswith("(") and _RANGE_AFTER.match(after):
        return True  # "Promoters (9–10)"
    if before.endswith(("–", "-")) and _RANGE_END.search(before):
        return True  # "(9–10)": the end of a label's range
    if ("α" in before or "alpha" in before or "level of" in before) and _ALPHA.search(before):
        return True  # "α = 0.05"
    if num.integer and num.date is None and num.scale == 1 and not num.pct and num.text in row_labels:
        # a label of the results written as one: "4 is the most common score", "- 5 stars: 111", "chose 3"
        first = i == 0 or nums[i - 1].start < line_start
        last = before.rstrip().rsplit(None, 1)[-1].lower() if before.strip() else ""
        if (
            first
            or _LABEL_AFTER.match(text, num.end)
            or last in LABEL_VERBS
            or _OR_LABEL.match(text, num.end)
        ):
            return True
    return False


def _respectively(spans: list[tuple[int, str]], numbers: list[Written], num: Written) -> str | None:
    """The expression a number is paired with when a clause names several and then gives as many numbers."""
    if len(spans) < 2 or len(spans) != len(numbers) or spans[-1][0] > numbers[0].start:
        return None
    return spans[numbers.index(num)][1]


def day_keys(date: tuple[int, int, int]) -> set[str]:
    """The row keys of a day (``03-17``, ``2024-03-17``) or a month (``2024-03``)."""
    year, month, day = date
    if not day:
        return {f"{year}-{month:02d}"} if year else set()
    keys = {f"{month:02d}-{day:02d}"}
    if year:
        keys.add(f"{year}-{month:02d}-{day:02d}")
    return keys


def _clauses(text: str) -> list[tuple[int, int]]:
    """Where each clause is: a sentence's end, a line, a dash end one; a long parenthetical is one of its own
    ("29.8 years (2 ages are missing and were skipped)")."""
    cuts = [(m.start(), m.end()) for m in _CLAUSE_END.finditer(text)]
    if "(" in text:
        cuts += [(m.end() - 1, m.end()) for m in _LONG_PAREN.finditer(text)]  # its closing parenthesis
        cuts.sort()
    spans, start = [], 0
    for a, b in cuts:
        if a > start:
            spans.append((start, a))
        start = max(start, b)
    spans.append((start, len(text)))
    return spans


def _lead_line(text: str, line_start: int) -> str:
    """The line before the table or list holding ``line_start``'s line when it introduces it ("Average price
    by region:")."""
    end = text.find("\n", line_start)
    line = text[line_start : end if end >= 0 else len(text)]
    if not _LIST_LINE.match(line):
        return ""
    pos = line_start
    while pos > 0:
        prev_start = text.rfind("\n", 0, pos - 1) + 1
        prev = text[prev_start : pos - 1]
        if not prev.strip() or _LIST_LINE.match(prev):
            pos = prev_start
            continue
        return prev if prev.rstrip().endswith(":") or len(prev) < 80 else ""
    return ""


def _direction(num: Written, claim: Claim) -> int:
    """The sign the words give a change: "fell 19.8 %" −, "grew 5 %" +, "a 7.6 % drop" −; none for a level
    ("fell to 333k", "from 24k to 13k")."""
    if num.signed:
        return num.signed
    before = claim.before[-4:]
    if before and before[-1] in ("to", "from", "at"):
        return 0
    for w in reversed(before):
        if w in DOWN_STEMS:
            return -1
        if w in UP_STEMS:
            return 1
    for w in claim.after[:2]:
        if w in AFTER_DOWN_STEMS or w in _COMPARATIVE_DOWN:
            return -1
        if w in AFTER_UP_STEMS or w in _COMPARATIVE_UP:
            return 1
    return 0


def _derived(claim: Claim) -> str:
    """Why the claim is not a value a result states: a comparison ("3.06 above", "by 34" after "above"), a
    bound ("over 30"), a rate ("$241 per order"), a range ("a range of 33.6"), a restatement ("which is about
    43 °F"), an example ("could repartition to 4"), or ""."""
    after = claim.after[:3]
    for w in after[:2]:
        if w in COMPARATIVE_STEMS or w in RATE_STEMS:
            return w
    if after[:1] == ["time"] and len(after) > 1:  # "3.4 times Oslo's rain" (not "mentioned 61 times")
        return "times"
    if after[:2] in (["of", "each"], ["of", "other"]) or "other" in after:
        return "each other"
    before = claim.before
    last = words(claim.text_before[-16:])[-2:]
    bounds = BOUND_STEMS
    if claim.num.pct and after[:1] == ["of"]:
        # a share of something ("above the threshold 4.5 % of the time"): a bound only by a comparison right
        # before it ("over 40 % of respondents"), not by one that has its own object
        before, last, bounds = before[-1:], last[-1:], _SHARE_BOUNDS
    for w in (*before[-2:], *last):
        if w in bounds:
            return w
    for w in before[-3:]:
        if w in DERIVED_STEMS:
            return w
    text = claim.text_before
    if _PER.search(text) or (claim.num.value == 1 and after[:1] == ["in"]):
        return "per"
    if before[-1:] == ["by"] and COMPARATIVE_STEMS & set(words(text)):
        return "by"
    if ("least" in text or "most" in text) and _BOUND_BEFORE.search(text[-14:]):
        return "bound"
    if _RESTATED.search(text):
        return "restated"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if ("x" in text[-8:] or "times" in text[-8:]) and _TIMES_BEFORE.search(text[-8:]):
        return "times"
    if claim.text_after.startswith(("x ", "×")):
        return "times"
    return ""
