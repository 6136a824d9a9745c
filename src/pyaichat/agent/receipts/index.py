"""A turn's facts indexed as they arrive: by value (a sorted list searched by bisection, the value also as a
percent and in its unit), by the row labels that name them, and the facts without rows."""

from __future__ import annotations

import bisect

from .facts import Fact
from .words import AGG_STEMS

_EMPTY: frozenset[str] = frozenset()


class Index:
    """The facts of a turn, looked up by value (bisection) and by the words that name them."""

    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self._values: list[tuple[float, int]] = []
        self._keys: list[float] = []
        self.by_row: dict[str, list[int]] = {}
        self.rowless: list[int] = []
        self.dates: list[int] = []
        self.row_labels: frozenset[str] = frozenset()
        self.units: set[float] = set()  # the scales the results' labels name (``revenue (k$)``: 1000)
        self.by_agg: dict[str, int] = {}  # how many facts without rows each aggregate has
        self._named: dict[frozenset[str], frozenset[int]] = {}
        # the facts without rows (not weak) by each word naming them (a word of their subject or aggregate)
        self._rowless_by_word: dict[str, list[int]] = {}

    def add(self, facts: list[Fact]) -> None:
        self._named.clear()
        labels = set(self.row_labels)
        for fact in facts:
            i = len(self.facts)
            self.facts.append(fact)
            if fact.scale != 1:
                self.units.add(fact.scale)
            if fact.date is not None:
                self.dates.append(i)
            else:
                for v in {abs(fact.value), abs(fact.value * fact.scale), abs(fact.value * 100)}:
                    self._values.append((v, i))
            if fact.rows:
                for form in fact.rows:
                    self.by_row.setdefault(form, []).append(i)
                labels |= fact.rows
            else:
                self.rowless.append(i)
                if not fact.weak:
                    for w in fact.subject | AGG_STEMS.get(fact.agg, _EMPTY):
                        self._rowless_by_word.setdefault(w, []).append(i)
                if not fact.weak and fact.date is None:
                    self.by_agg[fact.agg] = self.by_agg.get(fact.agg, 0) + 1
        self.row_labels = frozenset(labels)
        self._values.sort()
        self._keys = [v for v, _ in self._values]

    def named_by(self, words_: frozenset[str]) -> frozenset[int]:
        """Facts these words may name: rows they say the label of, facts without rows they say a word of
        (their subject or aggregate). Cached: a clause's numbers share its words."""
        found = self._named.get(words_)
        if found is None:
            hits: set[int] = set()
            for w in words_:
                rows = self.by_row.get(w)
                if rows:
                    hits.update(rows)
            named = self._rowless_by_word
            rowless = {i for w in words_ for i in named.get(w, ())}
            if rowless:
                hits.update(sorted(rowless))  # in the facts' order, as the sets built from them expect
            found = self._named[words_] = frozenset(hits)
        return found

    def near(self, value: float, tol: float) -> list[int]:
        """Facts whose value (or its percent, or its scaled value) is within ``tol`` of ``|value|``."""
        lo = bisect.bisect_left(self._keys, abs(value) - tol)
        hi = bisect.bisect_right(self._keys, abs(value) + tol)
        return [i for _, i in self._values[lo : min(hi, lo + 64)]]
