"""Receipts: every number of an answer, tied to the value it claims among what this turn's tool results (and
the session picture the model was given) showed, and judged.

Each number the answer states is one of:

- **supported**: the value its words name was shown, equal at the answer's precision (``55.2`` ≡ 55.240711,
  ``2.41 million`` ≡ 2,406,605.63, ``4.71 %`` ≡ 0.0471, "fell 19.8 %" ≡ −0.1979), or, named by nothing, a
  value its clause has words of, or one of three significant digits or more, equal to a value shown;
- **contradicted**: its words name a value a result showed (its row and column, its aggregate and subject,
  its noun, its direction) and it differs — even when it equals *another* value of the turn;
- **not found**: no result showed it (the model's own arithmetic, a rounded figure, an invention).

Not counted at all: code, list markers, versions, years, the question's own numbers, table row labels,
thresholds. A turn where no tool ran says so.

A package because reading and tying a number is several jobs, each in its own module and meeting the others
only through small types: ``written`` (numbers and dates as an answer writes them, code masked), ``words``
(the vocabulary both sides share), ``markdown`` (an answer's tables), ``claims`` (what the words around
each number say of it), ``tables`` and ``made`` (a result's text, and what produced it), ``facts`` (what
results and the picture state), ``index`` (the facts by value and by label), ``tie`` (naming and judging),
``report`` (what the front ends and ``/receipts`` show). Pure and standard-library only; results are read
as they arrive (``Evidence.add``), so checking an answer costs only its own numbers
(``benchmarks/receipts_cost.py``). Quality is measured on a labelled corpus
(``benchmarks/receipts_quality.py``, ``tests/agent/receipts_quality/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .claims import claims_of
from .facts import PICTURE, FactReader
from .index import Index
from .report import Receipt, Receipts
from .tie import CONTRADICTED, NOT_FOUND, SUPPORTED, judge
from .written import Written, read

__all__ = [
    "CONTRADICTED",
    "NOT_FOUND",
    "PICTURE",
    "SUPPORTED",
    "Evidence",
    "Receipt",
    "Receipts",
    "Seen",
    "check",
    "numbers_in",
]


@dataclass(frozen=True)
class Seen:
    """One tool result of the turn: the call as shown (``eval_expr(df.price.mean())``), the text the model
    read, and what produced it (the expression evaluated, the code run, the SQL sent)."""

    call: str
    text: str
    expr: str = ""
    code: str = ""
    sql: str = ""

    @classmethod
    def of(cls, name: str, args: Mapping[str, Any], call: str, text: str) -> Seen:
        """The result of the tool ``name`` called with ``args`` (shown as ``call``)."""

        def arg(key: str) -> str:
            value = args.get(key)
            return value if isinstance(value, str) else ""

        if name == "eval_expr":
            return cls(call, text, expr=arg("expr"))
        if name == "run_python":
            return cls(call, text, code=arg("code"))
        if name == "query_sql":
            return cls(call, text, sql=arg("sql"))
        return cls(call, text)


class Evidence:
    """What the model of one turn was shown, read into facts as it arrives (``add`` with each tool result,
    during the turn, where a tool call and a model request take far longer): so checking the answer
    (``check``) costs only the answer's own numbers."""

    def __init__(self, picture: str = "") -> None:
        self.index = Index()
        self._reader = FactReader()
        self.tools = 0
        if picture:
            self.index.add(self._reader.picture(picture))

    def add(self, item: Seen) -> None:
        self.tools += 1
        self.index.add(self._reader.result(item.call, item.text, item.expr, item.code, item.sql))


def check(answer: str, seen: Evidence | list[Seen], picture: str = "", question: str = "") -> Receipts:
    """The receipts of ``answer``, against what the turn showed: an ``Evidence`` gathered as it went, or the
    results ``seen`` and the session ``picture``."""
    if isinstance(seen, Evidence):
        evidence = seen
    else:
        evidence = Evidence(picture)
        for item in seen:
            evidence.add(item)
    index = evidence.index
    found = []
    for claim in claims_of(answer, question, index.row_labels):
        verdict = judge(claim, index)
        fact = verdict.fact
        num = claim.num
        found.append(
            Receipt(
                number=num.text,
                status=verdict.status,
                source=fact.source if fact is not None else "",
                shown=fact.shown if fact is not None else "",
                start=num.start,
                end=num.end,
                tied=fact.what if fact is not None else "",
                why=verdict.why,
            )
        )
    return Receipts(found, tools_ran=evidence.tools > 0)


def numbers_in(text: str) -> list[Written]:
    """Every number and date of ``text`` as written (no piece of a word, a time or a version)."""
    return read(text)
