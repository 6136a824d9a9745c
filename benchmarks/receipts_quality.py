"""Receipts' quality: how many wrong numbers they catch and how often they cry wolf, on the labelled corpus
``tests/agent/receipts_quality/`` (its README says how it was made and labelled). Each answer is checked as
the loop checks it: an ``Evidence`` of the turn's picture and results (added one by one, as they arrive),
then ``check(answer, evidence, question=…)``.

Run: ``.venv/bin/python benchmarks/receipts_quality.py [--part dev|held-out|all] [--by kind|form|source]
[--before SRC] [--checker-src SRC] [--show missed|flagged|counted]``.

- ``--checker-src SRC``: the checker to measure, from another source tree (``SRC/pyaichat/agent/receipts``, a
  module or a package), e.g. main's in a worktree: ``git worktree add /tmp/receipts-base 27ba4b4`` then
  ``--checker-src /tmp/receipts-base/src``. Default: this tree's.
- ``--before SRC``: also measure the checker of ``SRC`` and print each figure as ``before → after``.
- ``--show``: list the cases behind a figure (a ``w`` number without ⚠, a right answer with a ⚠, a number
  that is no claim but was counted), with what the checker said.

Prints, per category and in total: right answers and the share of them with a ⚠ (false flags); ``w``
numbers (a value the turn showed, written wrong) and the share without a ⚠ (misses) and with a ✓ (false
comfort); ``dw``/``uw`` numbers with a ✓; numbers that are no claim but were counted; turns where no tool ran
whose line did not say so.
Asserts nothing: the targets (misses ≤ 15 %, false flags ≤ 2 %) are for the reader.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "agent" / "receipts_quality"))

import corpus  # noqa: E402

CONTRADICTED = "contradicted"
SUPPORTED = "supported"
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def load_checker(src: Path, name: str) -> ModuleType:
    """``pyaichat.agent.receipts`` of the tree ``src`` (a module or a package), loaded under ``name``; it may
    import only the standard library and its own modules."""
    base = src / "pyaichat" / "agent"
    package = base / "receipts" / "__init__.py"
    if package.exists():
        spec = importlib.util.spec_from_file_location(
            name, package, submodule_search_locations=[str(package.parent)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, base / "receipts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def spans(mod: ModuleType, answer: str, found: Any, question: str) -> list[tuple[int, int]]:
    """Where each receipt's number sits in the answer: from the receipt (``start``/``end``) or, for the first
    checker (receipts without positions), by reading the numbers as it read them."""
    receipts = found.receipts
    if not receipts or hasattr(receipts[0], "start"):
        return [(r.start, r.end) for r in receipts]
    text = mod._masked_code(answer)
    rows = mod._table_rows(text)
    asked = {n.text.lstrip("-−") for n in mod.numbers_in(question)}
    nums = [
        n
        for n in mod.numbers_in(text)
        if not mod._trivial(n, text, asked, rows.get(text.rfind("\n", 0, n.start) + 1) is not None)
    ]
    assert len(nums) == len(receipts), (answer, len(nums), len(receipts))
    return [(n.start, n.end) for n in nums]


@dataclass
class Outcome:
    """What the checker said of one answer."""

    answer: corpus.Answer
    statuses: list[tuple[corpus.Claim, str | None, str]] = field(default_factory=list)  # claim, status, line
    counted: list[tuple[str, str]] = field(default_factory=list)  # numbers that are no claim: text, status
    flagged: bool = False
    summary: str = ""


def run(mod: ModuleType, answers: list[corpus.Answer], turns: dict[str, dict]) -> list[Outcome]:
    outcomes = []
    for answer in answers:
        turn = turns[answer.turn]
        evidence = mod.Evidence(turn["picture"])
        for (name, args), r in zip(turn["calls"], turn["results"], strict=True):
            # as the loop hands a result over (``Seen.of`` where the checker has it; the first had only expr)
            of = getattr(mod.Seen, "of", None)
            evidence.add(
                of(name, args, r["call"], r["text"]) if of else mod.Seen(r["call"], r["text"], r["expr"])
            )
        found = mod.check(answer.text, evidence, question=turn["question"])
        where = spans(mod, answer.text, found, turn["question"])
        lines = found.lines()
        out = Outcome(answer, summary=found.summary())
        out.flagged = any(r.status == CONTRADICTED for r in found.receipts)
        used: set[int] = set()
        for claim in answer.claims:
            hit = None
            for i, (a, b) in enumerate(where):
                if i not in used and a < claim.end and claim.start < b:
                    hit = i
                    break
            if hit is None:
                out.statuses.append((claim, None, ""))
            else:
                used.add(hit)
                out.statuses.append((claim, found.receipts[hit].status, " ".join(map(str, lines[hit]))))
        for i, receipt in enumerate(found.receipts):
            if i not in used and not any(
                a < c.end and c.start < b for c in answer.claims for a, b in [where[i]]
            ):
                out.counted.append((answer.text[where[i][0] : where[i][1]], receipt.status))
        outcomes.append(out)
    return outcomes


@dataclass
class Tally:
    answers: int = 0
    right: int = 0
    flagged: int = 0
    wrong: int = 0  # w numbers
    caught: int = 0
    comfort: int = 0  # w numbers with a ✓
    unshown_wrong: int = 0  # dw, uw
    unshown_comfort: int = 0
    right_numbers: int = 0  # r
    right_found: int = 0
    non_claims: int = 0
    counted: int = 0
    no_tool: int = 0
    no_tool_unsaid: int = 0

    def add(self, out: Outcome, non_claims: int) -> None:
        a = out.answer
        self.answers += 1
        self.non_claims += non_claims
        self.counted += len(out.counted)
        if a.right:
            self.right += 1
            self.flagged += out.flagged
        for claim, status, _ in out.statuses:
            if claim.label == "w":
                self.wrong += 1
                self.caught += status == CONTRADICTED
                self.comfort += status == SUPPORTED
            elif claim.label in ("dw", "uw"):
                self.unshown_wrong += 1
                self.unshown_comfort += status == SUPPORTED
            elif claim.label == "r":
                self.right_numbers += 1
                self.right_found += status == SUPPORTED
        if "no-tool" in a.forms and out.summary:
            self.no_tool += 1
            self.no_tool_unsaid += "no tool" not in out.summary

    def misses(self) -> float | None:
        return (self.wrong - self.caught) / self.wrong if self.wrong else None

    def false_flags(self) -> float | None:
        return self.flagged / self.right if self.right else None


def non_claims(answer: corpus.Answer) -> int:
    """Digit runs of the answer outside its claims (list markers, code, labels, versions, parameters…)."""
    return sum(
        1
        for m in _DIGITS.finditer(answer.text)
        if not any(c.start < m.end() and m.start() < c.end for c in answer.claims)
    )


def tally(outcomes: list[Outcome], by: str) -> dict[str, Tally]:
    table: dict[str, Tally] = defaultdict(Tally)
    for out in outcomes:
        a = out.answer
        keys = {"kind": [a.kind], "source": [a.source], "form": list(a.forms)}[by]
        n = non_claims(a)
        for key in [*keys, "ALL"]:
            table[key].add(out, n)
    return table


def pct(x: float | None) -> str:
    return "   –  " if x is None else f"{100 * x:5.1f}%"


def cell(after: Tally, before: Tally | None, attr: str) -> str:
    get = (
        (lambda t: getattr(t, attr)()) if attr in ("misses", "false_flags") else (lambda t: getattr(t, attr))
    )
    now = get(after)
    shown = pct(now) if attr in ("misses", "false_flags") else f"{now:>4}"
    if before is None:
        return shown
    old = get(before)
    was = pct(old) if attr in ("misses", "false_flags") else f"{old:>4}"
    return f"{was} → {shown}"


def print_table(title: str, after: dict[str, Tally], before: dict[str, Tally] | None) -> None:
    cols = [
        ("answers", "answers"),
        ("right", "right"),
        ("⚠ on right", "flagged"),
        ("false flags", "false_flags"),
        ("w", "wrong"),
        ("misses", "misses"),
        ("✓ on w", "comfort"),
        ("✓ on dw/uw", "unshown_comfort"),
        ("r found", "right_found"),
        ("non-claims counted", "counted"),
        ("no-tool unsaid", "no_tool_unsaid"),
    ]
    keys = [*sorted((k for k in after if k != "ALL"), key=lambda k: (-after[k].answers, k)), "ALL"]
    rows = [["category", *[name for name, _ in cols]]]
    for key in keys:
        old = before.get(key) if before is not None else None
        rows.append([key, *[cell(after[key], old, attr) for _, attr in cols]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"\n## {title}")
    for i, row in enumerate(rows):
        print(
            "| "
            + " | ".join(
                c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            + " |"
        )
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def show(outcomes: list[Outcome], what: str) -> None:
    print(f"\n## cases: {what}")
    for out in outcomes:
        a = out.answer
        if what == "missed":
            bad = [(c, s, line) for c, s, line in out.statuses if c.label == "w" and s != CONTRADICTED]
        elif what == "flagged":
            bad = [(c, s, line) for c, s, line in out.statuses if s == CONTRADICTED] if a.right else []
            if a.right and out.flagged and not bad:
                bad = [(corpus.Claim(0, 0, text, "-"), s, "") for text, s in out.counted if s == CONTRADICTED]
        else:
            bad = [(corpus.Claim(0, 0, text, "-"), s, "") for text, s in out.counted]
        if bad:
            print(f"--- {a.id} ({a.turn}): {a.text[:300]!r}")
            for claim, status, line in bad:
                print(f"    {claim.text!r} [{claim.label}] → {status}: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("dev", "held-out", "all"), default="dev")
    parser.add_argument("--by", choices=("kind", "form", "source"), default="kind")
    parser.add_argument("--checker-src", type=Path, default=ROOT / "src")
    parser.add_argument("--before", type=Path, help="a source tree whose checker to compare with")
    parser.add_argument("--show", choices=("missed", "flagged", "counted"), action="append", default=[])
    args = parser.parse_args()

    answers = corpus.read_answers()
    held = corpus.read_split()
    if args.part == "dev":
        answers = [a for a in answers if a.id not in held]
    elif args.part == "held-out":
        answers = [a for a in answers if a.id in held]
    turns = corpus.read_turns()
    after = run(load_checker(args.checker_src, "receipts_after"), answers, turns)
    before = run(load_checker(args.before, "receipts_before"), answers, turns) if args.before else None

    kinds = len({a.kind for a in answers})
    print(
        f"corpus: {len(answers)} answers ({args.part}) over {kinds} kinds of session; "
        f"checker: {args.checker_src}"
    )
    if args.before:
        print(f"before → after: {args.before} → {args.checker_src}")
    t_after = tally(after, args.by)
    t_before = tally(before, args.by) if before is not None else None
    print_table(f"by {args.by} ({args.part})", t_after, t_before)
    total = t_after["ALL"]
    line = f"\nmisses {pct(total.misses())} of {total.wrong} wrong numbers (target ≤ 15 %); "
    line += f"false flags {pct(total.false_flags())} of {total.right} right answers (target ≤ 2 %)"
    if t_before is not None:
        old = t_before["ALL"]
        line += f"; before: misses {pct(old.misses())}, false flags {pct(old.false_flags())}"
    print(line)
    for what in args.show:
        show(after, what)


if __name__ == "__main__":
    main()
