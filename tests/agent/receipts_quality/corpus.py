"""Read the receipts-quality corpus (its rules: ``README.md``): the turns, the labelled answers, the split."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABELS = ("r", "w", "d", "dw", "u", "uw")
WRONG = frozenset({"w", "dw", "uw"})
SOURCES = ("smollm2", "large", "person")
FORMS = frozenset(
    {
        *("scale", "money", "pct", "pct-value", "pct-header", "pp", "count-before", "count-after", "verb"),
        *("direction", "date", "rounding", "table", "transposed", "list", "sql-prose", "other-value"),
        *("swapped", "code", "version", "no-tool", "prose"),
    }
)
_MARK = re.compile(r"\[\[(?P<text>[^\[\]|]+)\|(?P<label>r|w|d|dw|u|uw)\]\]")
_HEADER = re.compile(r"^=== (?P<id>\S+) \| (?P<turn>\S+) \| (?P<source>\w+) \| (?P<forms>[\w, -]*)$")


@dataclass(frozen=True)
class Claim:
    """One labelled number: where it sits in the answer as the checker reads it, as written, its label."""

    start: int
    end: int
    text: str
    label: str


@dataclass
class Answer:
    id: str
    turn: str
    source: str
    forms: tuple[str, ...]
    text: str  # as the checker reads it: the marks taken out
    claims: list[Claim] = field(default_factory=list)
    notes: str = ""

    @property
    def right(self) -> bool:
        return not any(c.label in WRONG for c in self.claims)

    @property
    def kind(self) -> str:
        return self.turn.split("/", 1)[0]


def parse_marked(marked: str) -> tuple[str, list[Claim]]:
    """The answer's plain text and its claims, from the text with ``[[text|label]]`` marks."""
    parts, claims, at, length = [], [], 0, 0
    for m in _MARK.finditer(marked):
        before = marked[at : m.start()]
        parts.append(before)
        length += len(before)
        text = m.group("text")
        claims.append(Claim(length, length + len(text), text, m.group("label")))
        parts.append(text)
        length += len(text)
        at = m.end()
    parts.append(marked[at:])
    plain = "".join(parts)
    if "[[" in plain and re.search(r"\[\[[^\]]*\|", plain):
        raise ValueError(f"a mark that does not parse: {plain[plain.index('[[') :][:60]!r}")
    return plain, claims


def read_answers(folder: Path = HERE / "answers") -> list[Answer]:
    """Every labelled answer of ``folder``'s ``*.txt`` files, in file order."""
    answers: list[Answer] = []
    for path in sorted(folder.glob("*.txt")):
        blocks = re.split(r"^(?==== )", path.read_text(), flags=re.M)
        for block in blocks:
            if not block.strip():
                continue
            head, _, body = block.partition("\n")
            m = _HEADER.match(head.rstrip())
            if m is None:
                raise ValueError(f"{path.name}: not an answer header: {head!r}")
            lines = body.split("\n")
            notes = []
            while lines and lines[0].startswith("#! "):
                notes.append(lines.pop(0)[3:])
            text, claims = parse_marked("\n".join(lines).strip("\n"))
            forms = tuple(f.strip() for f in m.group("forms").split(",") if f.strip())
            answers.append(Answer(m["id"], m["turn"], m["source"], forms, text, claims, " ".join(notes)))
    return answers


def held_out_rule(answer_id: str) -> bool:
    """The split's rule, fixed before tuning: a third of the ids, by their hash alone."""
    return hashlib.sha256(answer_id.encode()).digest()[0] < 86


def read_split() -> set[str]:
    """The ids of the held-out answers (``split.json``)."""
    return set(json.loads((HERE / "split.json").read_text())["held_out"])


def read_turns() -> dict[str, dict]:
    return json.loads((HERE / "turns.json").read_text())
