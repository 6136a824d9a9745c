"""What a session leaves behind: frames, the last error, history entries and one run's result; and the
journal's records of questions answered (``AssistantTurn``) and proposals approved (``ApprovedProposal``),
which ``/save`` and ``--resume`` read back.

These records are dataclasses, and creating a dataclass compiles its generated methods: ~3 ms for the first
four, which the first prompt does not need. ``session`` therefore loads this module with the first run of user
code, not at start-up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass
class FrameInfo:
    """One traceback frame, reduced to what a person (or the assistant) needs to read it."""

    filename: str
    lineno: int | None
    name: str
    line: str
    segment: str | None = None
    local_names: list[str] = field(default_factory=list)


@dataclass
class LastError:
    """The session's most recent exception, kept for ``/last_error`` and the assistant's context."""

    type_name: str
    message: str
    frames: list[FrameInfo]
    source: str | None
    input_number: int | None
    segment: str | None
    lineno: int | None
    formatted: str
    exception: BaseException | None = field(default=None, repr=False)

    def headline(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


@dataclass
class HistoryEntry:
    """One numbered input. ``stdout``/``stderr``/``result`` (the echoed value's repr, ``None`` when nothing
    was echoed) are its text output, bounded together by ``session.OUTPUT_CHARS`` and marked when cut: what a
    saved notebook shows as the cell's output."""

    number: int
    source: str
    ok: bool
    summary: str
    duration_ms: float
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    undone: bool = False  # /undo took this input back: its effects are gone
    crashed: str | None = (
        None  # it ended the session (how: "a segmentation fault"); a checkpoint took it back
    )


UNDONE = "undone with /undo"


def input_mark(entry: HistoryEntry, proposed_by: str | None = None) -> str:
    """The note after an input wherever inputs are listed — the session picture the assistant and outside
    agents read, ``/history`` — so a model never takes an undone change for a standing one: ``  [proposed
    by the assistant; undone with /undo]``, ``  [undone with /undo]``, ``  [crashed the session (a
    segmentation fault); taken back]``, or nothing."""
    parts = [f"proposed by {proposed_by}"] if proposed_by else []
    if entry.crashed:
        parts.append(f"crashed the session ({entry.crashed}); taken back")
    elif entry.undone:
        parts.append(UNDONE)
    return f"  [{'; '.join(parts)}]" if parts else ""


@dataclass
class ExecResult:
    """What ``Session.run`` did. ``value`` is the echoed last expression (``None`` when there was none)."""

    ok: bool
    number: int
    value: Any = None
    has_value: bool = False
    output: str = ""
    error: LastError | None = None
    duration_ms: float = 0.0
    interrupted: bool = False


@dataclass
class ApprovedProposal:
    """Code the assistant (or an outside client, ``proposed_by``) proposed and the user approved: which model
    wrote it, when it was approved (ISO 8601), and the input number it ran as (``None`` if it never ran)."""

    code: str
    model: str | None
    approved_at: str
    input_number: int | None
    explanation: str = ""
    undone: str | None = None  # what /undo said when it took this back: the saved cell does not run again
    undone_after: int | None = None  # the last input number when /undo took it back
    proposed_by: str = "assistant"  # or the name of the outside client that proposed it

    @staticmethod
    def now() -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S%z")


if TYPE_CHECKING:  # what the journal reads of the agent's records: for the type checker only

    class TurnStep(Protocol):
        """A step of a finished turn as the journal reads it (the agent's ``trace.StepRecord``)."""

        @property
        def kind(self) -> str: ...  # "llm" | "tool"

        @property
        def name(self) -> str: ...

        @property
        def detail(self) -> str: ...

        @property
        def size(self) -> int: ...

        @property
        def ok(self) -> bool: ...

    class CheckedNumbers(Protocol):
        """An answer's receipts as the journal keeps them (the agent's ``receipts.Receipts``)."""

        @property
        def receipts(self) -> Sequence[object]: ...

        def summary(self) -> str: ...

        def warnings(self) -> list[str]: ...

    class FinishedTurn(Protocol):
        """A question answered, as the journal records it (the agent's ``trace.TurnResult``: this module is
        below the agent and imports nothing of it)."""

        @property
        def question(self) -> str: ...

        @property
        def answer(self) -> str: ...

        @property
        def note(self) -> str | None: ...

        @property
        def error(self) -> str | None: ...

        @property
        def steps(self) -> Sequence[TurnStep]: ...

        @property
        def receipts(self) -> CheckedNumbers | None: ...


@dataclass
class AssistantTurn:
    """One question and its answer. ``after_input`` is the last input number before the question;
    ``end_input`` the last when the answer came (inputs in between ran while answering: approved code).
    ``steps`` are the tool calls for the transcript: dicts with ``name``, ``detail``, ``size``, ``ok``."""

    question: str
    answer: str
    after_input: int = 0
    end_input: int | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None
    error: str | None = None
    receipts: str | None = None  # the answer's receipts: its status line, then a line per contradicted number

    @classmethod
    def from_result(
        cls, result: FinishedTurn, after_input: int, end_input: int | None = None
    ) -> AssistantTurn:
        """From the agent's ``TurnResult``."""
        steps: list[dict[str, Any]] = [
            {"name": s.name, "detail": s.detail, "size": s.size, "ok": s.ok}
            for s in result.steps
            if s.kind == "tool"
        ]
        return cls(
            question=result.question,
            answer=result.answer,
            after_input=after_input,
            end_input=end_input,
            steps=steps,
            note=result.note,
            error=result.error,
            receipts=_receipts_text(result.receipts),
        )


def _receipts_text(receipts: CheckedNumbers | None) -> str | None:
    """The receipts as the journal keeps them (``None``: off, or no number to check)."""
    if receipts is None or not receipts.receipts:
        return None
    return "\n".join([receipts.summary(), *(f"warning: {w}" for w in receipts.warnings())])
