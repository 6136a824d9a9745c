"""What receipts say: the answer's status line, a warning per contradicted number, and ``/receipts``' line per
number — what it was tied to and why, so a person can trust a ✓ and question a ⚠."""

from __future__ import annotations

from dataclasses import dataclass, field

from .tie import CONTRADICTED, NOT_FOUND, SUPPORTED

PICTURE = "the session picture"


@dataclass(slots=True)
class Receipt:
    """One number of the answer: as written, its status, the call behind it and what it showed."""

    number: str
    status: str
    source: str = ""  # the call (or "the session picture") whose result showed it / contradicts it
    shown: str = ""  # the value that result showed
    start: int = 0  # where the number is in the answer
    end: int = 0
    tied: str = ""  # what the value is of: "mean of price, north" ("" when nothing tied it)
    why: str = ""  # the answer's words that tied it ('"north", "average"'), or why it was not checked


@dataclass
class Receipts:
    """What the check found: each number (trivial ones left out) and one warning per contradicted one."""

    receipts: list[Receipt] = field(default_factory=list)
    tools_ran: bool = True  # False: nothing but the session picture to check against

    def count(self, status: str) -> int:
        return sum(1 for r in self.receipts if r.status == status)

    def summary(self) -> str:
        """The answer's status line: ``receipts: 4 of 5 numbers found in this turn's results · 1 not found``;
        a turn where no tool ran says so (its numbers could only be checked against the session picture).
        ("" when the answer states no number worth checking)."""
        total = len(self.receipts)
        if not total:
            return ""
        found = self.count(SUPPORTED)
        noun = "number" if total == 1 else "numbers"
        if self.tools_ran:
            parts = [f"receipts: {found} of {total} {noun} found in this turn's results"]
        else:
            parts = [
                f"receipts: no tool ran this turn · {found} of {total} {noun} found in the session picture"
            ]
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
        """``/receipts``: a row per number — its mark and itself, then what it was tied to and why (or that
        nothing tied it), and the call that showed the value."""
        return [(f"{_MARKS[r.status]} {r.number}", describe(r)) for r in self.receipts]


_MARKS = {SUPPORTED: "✓", CONTRADICTED: "⚠", NOT_FOUND: "·"}


def describe(r: Receipt) -> str:
    """What one number was tied to and why, in a line: "mean of price, north = 58.305354 · by "north",
    "avg price" · eval_expr(…)"."""
    where = _short(r.source)
    if r.status == SUPPORTED:
        if r.why:
            return f"{r.tied} = {r.shown} · by {r.why} · {where}"
        return f"equals {r.shown} in {where} · no word ties it there, but a number this long is no chance"
    if r.status == CONTRADICTED:
        return f"{r.tied} = {r.shown}, not {r.number} · by {r.why} · {where}"
    if r.why.startswith("not checked"):
        return r.why
    if r.source:
        return f"not found · equals {r.shown} in {where}, but no word ties it there"
    return "not found · no result of this turn showed it"


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
