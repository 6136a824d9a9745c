"""Tying an answer's number to the value it claims, and judging it.

A claim names the fact its words name: its table row and column (either way round: a transposed table too),
or in prose a row label beside it ("north 58.3"), its aggregate and subject ("the average price"), the noun
after it ("12 rows"), the expression it follows in backticks. Then:

- **supported** when it states a fact it names about as well as any (at its precision, scale words and units
  read, a direction the fact's sign), or, named by nothing, equals a fact its clause has words of, or equals
  one with a number of three significant digits or more (a 2,406,605.63 is not there by chance; a 3 is);
- **contradicted** when the fact its own words name (the words beside it, not only somewhere in its clause)
  differs, even if the number equals another value of the turn (the north region's mean given as the average
  price) — unless it is a comparison, a bound, a rate, a range or an example ("3.06 above", "over 30",
  "$241 per order", "a range of 33.6", "could repartition to 4");
- **not found** otherwise (the model's own arithmetic, a figure nothing showed).
"""

from __future__ import annotations

from dataclasses import dataclass

from .claims import Claim, complete, day_keys
from .facts import Fact
from .index import Index
from .words import (
    AGG_STEMS,
    COMPATIBLE,
    EXCLUSIVE,
    NEGATIONS,
    OVERALL_STEMS,
    POSITIONS,
    SUPERLATIVES,
    WEIGHTED,
    stem,
    words,
)

SUPPORTED = "supported"
NOT_FOUND = "not found"
CONTRADICTED = "contradicted"

_EMPTY: frozenset[str] = frozenset()
_EMPTY_IDS: frozenset[int] = frozenset()
_AGGREGATE_WORDS: frozenset[str] = frozenset().union(*AGG_STEMS.values())
_CHANGES = frozenset({"change", "diff", "rel"})
_BOUND_WORDS = frozenset(
    map(stem, ["over", "under", "above", "below", "beyond", "within", "exceed", "exceeds", "exceeded"])
)
_COMPARISON_WORDS = frozenset(
    map(
        stem,
        ["than", "higher", "lower", "more", "less", "above", "below", "ahead", "behind", "worse", "better"],
    )
)
# what a difference is said with: for percentage points, which are one, the words name the difference itself
_DIFFERENCE_WORDS = _COMPARISON_WORDS | frozenset(
    map(stem, ["by", "gap", "difference", "spread", "delta", "ahead", "behind"])
)
_PREPOSITIONS = frozenset(
    ["in", "for", "at", "of", "on", "with", "to", "from", "by", "during", "among", "across"]
)
_NAMED_BY_SUBJECT = frozenset({"", "value", "ratio", "rel", "diff"})
_COUNTED = frozenset({"rows", "cols", "partitions", "points", "bars", "variables", "length"})  # by their noun
_SHARES = frozenset({"mean", "share", "ratio", "", "value"})
# what they count is the noun after them ("20 passengers", "247 orders")
_COUNTS = frozenset({"count", "nunique"})
_RATIOS = frozenset({"share", "change", "rel", "diff", "ratio"})
_NEGATIVE = frozenset(
    map(
        stem,
        [
            "loss",
            "losing",
            "lost",
            "negative",
            "deficit",
            "minus",
            "below",
            "fell",
            "dropped",
            "declined",
            "shrank",
        ],
    )
)


@dataclass(slots=True)
class Verdict:
    """What the check says of one claim: its status, the fact it was tied to (or equals), and why."""

    status: str
    fact: Fact | None = None
    why: str = ""


def _states(claim: Claim, fact: Fact, units: set[float]) -> bool:
    """``claim`` states ``fact``'s value: at its precision, its scale and its table's unit applied, a percent
    of a ratio, a direction the sign of a change."""
    num = claim.num
    if num.date is not None or fact.date is not None:
        if num.date is None or fact.date is None:
            return False
        (y1, m1, d1), (y2, m2, d2) = num.date, fact.date
        return m1 == m2 and (not y1 or not y2 or y1 == y2) and (not d1 or not d2 or d1 == d2)
    change = fact.agg in _CHANGES
    if (
        fact.scale == 1
        and claim.scale == 1
        and not (num.pct or claim.points or claim.direction)
        and (num.scale == 1 or num.scale not in units)
    ):
        return _plain_states(claim, fact.value, change)
    trues = [fact.value]
    if fact.scale != 1:
        trues.append(fact.value * fact.scale)
    if (num.pct or claim.points) and not fact.percent:
        trues = [t * 100 for t in trues] + ([fact.value] if abs(fact.value) > 1.5 else [])
    reads = [(num.value * claim.scale, num.tol * claim.scale)]
    if claim.scale != 1:
        reads.append((num.value, num.tol))  # the header's unit may be the data's own ("revenue (k$)")
    if num.scale != 1 and num.scale in units:  # "$412.5k" for a value in k$
        reads.append((num.value / num.scale, num.tol / num.scale))
    for written, unit in reads:
        if claim.direction and not num.signed and (change or fact.value < 0):
            written = claim.direction * abs(written)  # "fell 19.8 %": −19.8
        for true in trues:
            if true < 0 and written > 0 and not num.signed and not claim.direction:
                # an unsigned number for a negative value: right only where its words say it is negative
                if not _NEGATIVE & (claim.clause | frozenset(claim.before)):
                    continue
                true = -true
            elif not change and not num.signed and written < 0 < true:
                continue
            if num.agrees(written, true, unit):
                return True
    return False


def _plain_states(claim: Claim, true: float, change: bool) -> bool:
    """``_states`` for the most common case, one reading against one value (no percent, scale, unit or
    direction): most numbers of an answer are judged here, by value alone, so it builds no lists."""
    num = claim.num
    written = num.value
    if true < 0 and written > 0 and not num.signed:
        if not _NEGATIVE & (claim.clause | frozenset(claim.before)):
            return False
        true = -true
    elif not change and not num.signed and written < 0 < true:
        return False
    return num.agrees(written, true, num.tol)


def _kind_fits(claim: Claim, fact: Fact) -> bool:
    """Types that cannot be the same value: a percent and a count, a date and an amount, a ratio of 0.02 and a
    plain 8,182."""
    num = claim.num
    if (num.date is None) != (fact.date is None):
        return False
    if num.date is not None:
        return True
    if num.pp or claim.points:
        return fact.agg in ("diff", "") or fact.percent or abs(fact.value) <= 1.5
    if num.pct:
        return fact.percent or abs(fact.value) <= 1.5
    if fact.percent and abs(num.value) > 100:
        return False  # a value in percent (a printed "1.78", a "refunded_pct") is no count of 17,911
    ratio = fact.agg in _RATIOS or (fact.agg in ("", "value", "mean") and "rate" in fact.subject)
    # a plain 36.5 or 8,182 is no ratio of 0.365 (a header may have made it a percent)
    return not (ratio and not fact.percent and abs(fact.value) <= 1.5 and abs(num.value) > 1.5)


@dataclass(slots=True)
class _Score:
    row: int = 0  # 2: its label is beside the number (or its table row/column); 1: in its clause's subject
    agg: int = 0  # 2: beside; 1: in its clause's subject
    subject: int = 0  # 2: beside; 1: in its clause's subject
    noun: bool = False  # the noun after it ("12 rows"), or the expression it follows
    conflict: bool = False
    words: int = 0  # how many of its subject's words the claim's context has
    evidence: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return 3 * self.row + 2 * self.agg + self.subject + 2 * self.noun

    def strong(self, fact: Fact) -> bool:
        """Tied by the words beside the number, not only by its clause: its row, its aggregate, its noun, or
        (a variable, which has no aggregate) its subject."""
        if self.row == 2 or self.agg == 2 or self.noun:
            return True
        # its subject beside it: enough for a variable or a ratio (its name is what it is), or with its
        # aggregate said in the clause ("the daily mean temperature increased from 22.49")
        return self.subject == 2 and (fact.agg in _NAMED_BY_SUBJECT or self.agg == 1)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What is read of a claim once, before its candidate facts are scored."""

    row_words: frozenset[str]
    col_words: frozenset[str]
    after: frozenset[str]
    nouns: frozenset[str]  # what a count counts: the two words after it, unless a preposition starts them
    head: frozenset[str]  # its noun: the first word after it ("29.8 years", "26 chars")
    beside_aggs: frozenset[str]  # aggregates named right beside the number
    weighted: bool
    positions: frozenset[str]  # where in a series its own words put it ("first", "final", "previous")
    overall: bool  # "the overall mean": no one row's value
    negated: bool  # "would not recommend"
    change_word: str


def _reading(claim: Claim) -> _Reading:
    row_words = frozenset({claim.row.lower().strip(), *words(claim.row)}) if claim.row else _EMPTY
    col_words = frozenset({claim.column.lower().strip(), *words(claim.column)}) if claim.column else _EMPTY
    beside = frozenset(k for k in EXCLUSIVE if AGG_STEMS[k] & claim.beside)
    change = next((w for w in reversed(claim.before) if w in AGG_STEMS["change"]), "change")
    return _Reading(
        row_words,
        col_words,
        frozenset(claim.after[:3]),
        frozenset(claim.after[:2]) if claim.after[:1] and claim.after[0] not in _PREPOSITIONS else _EMPTY,
        frozenset(claim.after[:1]) if claim.after[:1] and claim.after[0] not in _PREPOSITIONS else _EMPTY,
        beside,
        bool(WEIGHTED & claim.context),
        POSITIONS & claim.own,
        bool(OVERALL_STEMS & claim.own),
        bool(NEGATIONS & (claim.own | claim.clause)),
        change,
    )


def _score(claim: Claim, r: _Reading, fact: Fact) -> _Score:
    s = _Score()
    own = claim.own
    prefix = claim.prefix
    weak = (
        prefix | claim.suffix if claim.suffix else prefix
    )  # its clause's subject: the words around its numbers
    said: list[str] = []
    rows = fact.rows
    if claim.row or claim.column:
        if rows and r.row_words & rows:
            s.row = 2
            said.append(claim.row)
            if not claim.column or _names(r.col_words, fact):
                s.subject = 2
                said.append(claim.column)
        elif rows and r.col_words & rows:
            s.row = 2  # transposed: the result's rows are the answer's columns
            said.append(claim.column)
            if _names(r.row_words, fact):
                s.subject = 2
                said.append(claim.row)
        elif not rows and (_names(r.col_words, fact) or _names(r.row_words, fact)):
            s.subject = 2
            said.append(claim.column or claim.row)
    elif rows:
        hit = rows & claim.near_rows
        if hit:
            s.row = 2
            said.append(min(hit))
        else:
            # its clause names the row before its numbers, or after it when it is the last ("(33 %) come from
            # the north")
            hit = rows & (weak if claim.last else prefix)
            if hit:
                s.row = 1
                said.append(min(hit))
    agg_words = AGG_STEMS.get(fact.agg, _EMPTY)
    if s.row and said and said[0] in agg_words:
        agg_words = _EMPTY  # a describe() row named by its statistic: one piece of evidence, not two
    points = claim.num.pp or claim.points
    if points and fact.agg == "diff":
        s.agg = 2  # "0.49 pp": percentage points are a difference of two percentages, named by their unit
        said.append("percentage points")
    elif claim.direction and fact.agg in _CHANGES and not claim.num.signed:
        s.agg = 2  # "rose", "fell by": a change
        said.append(r.change_word)
    elif fact.agg in _COUNTED:
        nouns = agg_words | fact.nouns if fact.agg in ("rows", "length") else agg_words
        named_noun = nouns & r.nouns
        if named_noun:  # a count names its noun after it: "12 rows", "8 partitions", "1,008 readings"
            s.noun = True
            said.append(min(named_noun))
        elif fact.agg == "rows" and _rows_by_their_noun(claim, r, agg_words):
            s.noun = True
            said.append(min(agg_words & claim.suffix))
    elif agg_words & own:
        s.agg = 2
        said.append(min(agg_words & own))
    elif agg_words & weak:
        s.agg = 1
        said.append(min(agg_words & weak))
    elif claim.num.pct and not (claim.direction or points) and fact.agg in _SHARES and abs(fact.value) <= 1.5:
        s.agg = 2  # "66 % would recommend": a percent is a share (of its subject, a mean of a yes or no)
    mine = fact.subject & own
    if mine:
        s.subject = 2
        said.append(max(mine, key=len))
    elif fact.subject & weak:
        s.subject = max(s.subject, 1)
        said.append(max(fact.subject & weak, key=len))
    if fact.expr and fact.expr in claim.code:
        s.noun = True  # the answer names the very expression: `df.price.mean()` is 12.5
        said.append(f"`{fact.expr}`")
    elif fact.agg not in _COUNTED and (not rows or s.row):
        counts = fact.agg in _COUNTS
        names = (fact.subject | fact.nouns) & r.nouns if counts else fact.subject & r.head
        if not names and fact.agg == "sum":
            names = fact.nouns & r.head  # "17,911 visits": a total names what it adds up
        if names and not (claim.denominator and counts):
            s.noun = True  # "247 orders", "35 readings"
            said.append(min(names))
    # a different aggregate named right beside the number rules this fact out ("median" is not the mean)
    # (not for a change said with a direction: "the daily mean rose 0.41" is a change of the mean)
    moved = claim.direction and fact.agg in _CHANGES and not claim.num.signed
    if r.beside_aggs and not (fact.agg in ("value", "") and not rows) and not moved:
        other = r.beside_aggs - {fact.agg} - COMPATIBLE.get(fact.agg, _EMPTY)
        if s.row == 2:
            other = other - SUPERLATIVES  # "the cheapest at 12.94 on average": the superlative picks the row
        if other:
            s.conflict = True
    if points and fact.agg == "rel":
        s.conflict = True  # points are no relative change ("+0.49 pp, +10.5 % relative")
    if fact.col in ("true", "false") and (fact.col == "true") == bool(r.negated):
        s.conflict = True  # "would not recommend" is the False column
    if r.positions and fact.subject & POSITIONS and not r.positions & fact.subject:
        s.conflict = True  # "the final week saw 17,597": not the previous week's
    if r.weighted and fact.agg != "ratio" and not WEIGHTED & fact.subject:
        s.conflict = True
    if r.overall and rows:
        s.conflict = True
    s.words = len(fact.subject & claim.context)
    s.evidence = tuple(dict.fromkeys(w for w in said if w))
    return s


def _rows_by_their_noun(claim: Claim, r: _Reading, row_words: frozenset[str]) -> bool:
    """A whole count before the noun its rows are ("holds 10,000 orders, one per row"): a count of rows when
    its clause says rows after it, the last number ("1,200 rows and 3 cats": the rows are the 1,200's), and
    the noun is no aggregate's word (not "6 columns", "3 distinct values")."""
    num = claim.num
    return bool(
        num.integer
        and not num.pct
        and num.date is None
        and claim.last
        and r.head
        and row_words & claim.suffix
        and not r.head & _AGGREGATE_WORDS
    )


def _names(stems: frozenset[str], fact: Fact) -> bool:
    """Do these header words name the fact (its column, its subject, its aggregate)?"""
    if fact.col and fact.col in stems:
        return True
    if stems & fact.subject:
        return True
    return bool(AGG_STEMS.get(fact.agg, _EMPTY) & stems)


def _named(claim: Claim, fact: Fact, score: _Score, index: Index) -> bool:
    """Is the fact what the claim's words name? A fact with row labels needs its label said; one without needs
    its aggregate and subject, the noun after the number, or (a variable) its own words."""
    if score.conflict or fact.weak or not _kind_fits(claim, fact):
        return False
    if fact.rows:
        return score.row == 2 or (score.row == 1 and (score.agg > 0 or score.subject > 0))
    if claim.row or claim.column:
        return score.subject > 0 and (score.agg > 0 or bool(fact.col) or fact.agg in ("value", ""))
    if score.noun:
        return True
    if fact.agg in ("value", ""):  # a variable (``rate_variant``): its own words name it
        return score.words >= 2 or score.subject == 2
    if score.agg == 2 and index.by_agg.get(fact.agg, 0) == 1:
        return True  # "the overall mean": the turn's one mean
    return score.subject > 0 and score.agg > 0


def judge(claim: Claim, index: Index) -> Verdict:
    """The verdict on one claim, against the turn's facts."""
    num = claim.num
    facts = index.facts
    if num.date is not None:
        pool = list(index.dates)
        if not any(_states(claim, facts[i], index.units) for i in pool):
            labelled = [i for key in day_keys(num.date) for i in index.by_row.get(key, ())]
            if labelled:  # "On March 3 …": a day the results show, as a row
                return Verdict(SUPPORTED, facts[labelled[0]], "the day of a row")
    else:
        tol = max(num.tol * claim.scale, abs(num.value * claim.scale) * 0.05 if num.hedged else 0)
        pool = index.near(num.value * claim.scale, tol * 1.01)
        if num.pct or num.pp:
            pool += index.near(num.value / 100, tol / 100 * 1.01)
        if claim.scale != 1:
            pool += index.near(num.value, num.tol * 1.01)
        if num.scale != 1 and num.scale in index.units:
            pool += index.near(num.value / num.scale, num.tol / num.scale * 1.01)
    worded: set[int] | frozenset[int] = index.named_by(
        claim.clause | claim.lead if claim.lead else claim.clause
    )
    if claim.days or claim.row or claim.column:
        more = set(worded)
        for w in (*claim.days, claim.row.lower().strip(), claim.column.lower().strip()):
            more.update(index.by_row.get(w, ()))
        worded = more
    if not pool and not worded:
        return Verdict(NOT_FOUND)
    if pool:
        moved = _changes_its_direction_names(claim, pool, facts)
        if moved:
            worded = worded | moved
    units = index.units
    if not worded and num.date is None and "from" not in claim.clause:
        # no word of its clause names a fact: nothing to tie it to, only a value it may equal by chance
        first = next((i for i in pool if not facts[i].weak and _states(claim, facts[i], units)), None)
        if first is None:
            return Verdict(NOT_FOUND)
        if num.sig >= 3:
            return Verdict(SUPPORTED, facts[first], "")
        return Verdict(NOT_FOUND, facts[first], "nothing ties it there")
    complete(claim)
    equal = [i for i in dict.fromkeys(pool) if _states(claim, facts[i], units)]
    candidates = set(worded) | set(equal)
    for w in claim.own:  # its own words (an acronym read beside it: "Net Promoter Score" is nps)
        candidates.update(index.by_row.get(w, ()))
    if num.date is not None:
        candidates = {i for i in candidates if facts[i].date is not None} | set(index.dates)
    if not candidates:
        return Verdict(NOT_FOUND)
    reading = _reading(claim)
    scores = {i: _score(claim, reading, facts[i]) for i in candidates}
    _rule_out_unsaid_siblings(claim, candidates, scores, facts)
    named = sorted(
        (i for i in candidates if _named(claim, facts[i], scores[i], index)), key=lambda i: -scores[i].total
    )
    top = scores[named[0]].total if named else 0
    for i in named:  # a fact named about as well as the best one, and equal: what the number states
        if i in equal and scores[i].total >= top - 1:
            return Verdict(SUPPORTED, facts[i], _because(claim, scores[i]))
    if num.date is not None and not equal and len(index.dates) == 1 and not claim.derived:
        only = index.dates[0]  # the turn showed one date (an idxmax, the row of a maximum): the one it means
        return Verdict(CONTRADICTED, facts[only], _because(claim, scores[only]) or "the turn's one date")
    if (
        named
        and scores[named[0]].strong(facts[named[0]])
        and _checkable(claim, facts[named[0]], scores[named[0]])
    ):
        best = named[0]
        # an equal fact named about as well, or whose own name is beside the number ("11 passengers
        # survived": the survivors, not the passengers): the number may well state it
        rivals = [
            i
            for i in equal
            if (scores[i].total >= top - 1 or _beside(facts[i], scores[i]))
            and not facts[i].weak
            and not scores[i].conflict
            and not (facts[i].rows and scores[i].row == 0)
        ]
        if not rivals:
            return Verdict(CONTRADICTED, facts[best], _because(claim, scores[best]))
    worded_equal = [i for i in equal if scores[i].total > 0 and not scores[i].conflict and not facts[i].weak]
    if worded_equal:
        worded_equal.sort(key=lambda i: -scores[i].total)
        return Verdict(SUPPORTED, facts[worded_equal[0]], _because(claim, scores[worded_equal[0]]))
    if equal and num.sig >= 3 and num.date is None and not facts[equal[0]].weak:
        return Verdict(SUPPORTED, facts[equal[0]], "")
    if named and claim.derived:
        return Verdict(NOT_FOUND, None, _derived_reason(claim))
    if equal:
        return Verdict(NOT_FOUND, facts[equal[0]], "nothing ties it there")
    return Verdict(NOT_FOUND)


def _changes_its_direction_names(claim: Claim, pool: list[int], facts: list[Fact]) -> frozenset[int]:
    """The changes of the number's size that a direction word beside it names ("fell 0.41", "cooled by
    0.41"): a direction says the number is a change, so the turn's change of that size is what it states,
    its sign included — even when no other word of its clause names it and the sign makes it unequal."""
    if not any(facts[i].agg in _CHANGES for i in pool):
        return _EMPTY_IDS
    changes = frozenset(i for i in pool if facts[i].agg in _CHANGES and facts[i].date is None)
    if not changes:
        return _EMPTY_IDS
    complete(claim)  # the direction is read with the words beside the number
    return changes if claim.direction and not claim.num.signed else _EMPTY_IDS


def _rule_out_unsaid_siblings(
    claim: Claim, candidates: set[int], scores: dict[int, _Score], facts: list[Fact]
) -> None:
    """Values without rows told apart only by their names (``rate_control``, ``rate_variant``: both a
    "conversion rate"): when the words beside the number say the distinguishing word of some of them and of
    no other ("the control group's conversion rate is 5.21 %"), the others are not what it states — as a row
    label beside a number rules out the other rows. Values with no word of their own (a difference of both)
    are left alone."""
    rowless = [i for i in candidates if not facts[i].rows and facts[i].subject and not scores[i].conflict]
    names = {i: facts[i].subject | facts[i].nouns for i in rowless}  # a ratio: what it divides, and by what
    subjects = set(names.values())
    if len(subjects) < 2:
        return
    own = claim.own
    said: set[frozenset[str]] = set()
    distinct: dict[frozenset[str], frozenset[str]] = {}
    for subject in subjects:
        others = frozenset().union(*(o for o in subjects if o != subject))
        distinct[subject] = subject - others
        if distinct[subject] & own:
            said.add(subject)
    if len(said) != 1:
        return
    for i in rowless:
        subject = names[i]
        if subject not in said and distinct[subject]:
            scores[i].conflict = True


def _beside(fact: Fact, score: _Score) -> bool:
    """Its own name beside the number (its noun, or its subject for what is not a count of rows), and its row
    if it has one: a fact the number may well state, whatever else is named."""
    if fact.rows and score.row < 2:
        return False
    return score.noun or (score.subject == 2 and fact.agg not in _COUNTED)


def _checkable(claim: Claim, fact: Fact, score: _Score) -> bool:
    """A claim that can contradict: a per-unit figure only a mean, a comparison only a change or a
    difference ("10.5 % worse than control" is a lift), "over" only as a bound ("over 5 columns" is not)."""
    derived = claim.derived
    points = claim.num.pp or claim.points
    if points and derived in _DIFFERENCE_WORDS:
        return fact.agg == "diff"  # "ahead by 0.49 pp", "a gap of 0.49 pp": the difference itself
    if derived == "per":
        return fact.agg in ("mean", "ratio")
    if derived in _COMPARISON_WORDS and fact.agg in _CHANGES:
        return True
    if derived in ("over", "under") and score.noun:
        return True
    if derived:
        return False
    return not (points and fact.agg not in ("diff", ""))


_DERIVED_KINDS = {
    "per": "a rate",
    "each": "a rate",
    "apiece": "a rate",
    "bound": "a bound",
    "restated": "a restatement",
    "hypothetical": "an example",
    "times": "a multiple",
    "each other": "a difference",
    "by": "a difference",
}


def _derived_reason(claim: Claim) -> str:
    """Why a number its words name was not checked: "a comparison ("above")"."""
    word = claim.derived
    kind = _DERIVED_KINDS.get(word)
    if kind is None:
        kind = (
            "a difference"
            if word in ("rang", "range", "difference", "gap", "spread", "delta")
            else "a comparison"
        )
        if word in _BOUND_WORDS and word not in claim.after:
            kind = "a bound"  # "over 30" (and "3.06 above the mean" is a comparison)
    spelled = claim.spelled.get(word, word)
    return f'not checked: {kind} ("{spelled}"), not a value a result states'


def _because(claim: Claim, score: _Score) -> str:
    """The answer's words that tied the number, as it wrote them."""
    spelled = claim.spelled
    said = dict.fromkeys(spelled.get(w, w) for w in score.evidence)
    return ", ".join(f'"{w}"' for w in list(said)[:3])
