"""Events: the only thing front ends see of the assistant and of commands.

Each event is a plain frozen dataclass with a ``type`` name, so front ends (rich terminal, plain piped text,
IPython display) can render them and tests can assert on them without knowing where they came from. Nothing
serialises them. ``Event`` is their union: a renderer dispatches with ``match`` over it and ends with
``assert_never``, so a type checker names a renderer that misses a new event.

Making a dataclass compiles its methods (a few milliseconds for all of these), so this module loads with the
first event, never at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NoReturn

if TYPE_CHECKING:
    from ..proposal import Proposal


@dataclass(frozen=True, slots=True)
class StateEvent:
    """The loop moved to a new state: starting, idle, thinking, calling, observing, answering, done or
    failed. ``detail`` is shown with the state at once; ``activity`` says what a wait is made of ("waiting
    for the first token", "retrying after HTTP 503"), for a front end to show once the wait grows long."""

    type: ClassVar[Literal["state"]] = "state"
    state: str
    step: int = 0
    max_steps: int = 0
    detail: str = ""
    activity: str = ""


@dataclass(frozen=True, slots=True)
class ThinkingEvent:
    """Text the model produced before or between tool calls (not the final answer)."""

    type: ClassVar[Literal["thinking"]] = "thinking"
    text: str


@dataclass(frozen=True, slots=True)
class ToolStartEvent:
    type: ClassVar[Literal["tool_start"]] = "tool_start"
    call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    step: int = 0


@dataclass(frozen=True, slots=True)
class ToolEndEvent:
    type: ClassVar[Literal["tool_end"]] = "tool_end"
    call_id: str
    name: str
    ok: bool
    text: str = ""
    error: str | None = None
    truncated: bool = False
    duration_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class AnswerChunkEvent:
    """A piece of the streamed answer; the renderer appends it."""

    type: ClassVar[Literal["answer_chunk"]] = "answer_chunk"
    text: str


@dataclass(frozen=True, slots=True)
class AnswerEvent:
    """The whole final answer. ``stopped_by`` names the bound that ended the turn early, if any."""

    type: ClassVar[Literal["answer"]] = "answer"
    text: str
    stopped_by: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ReceiptsEvent:
    """The answer's receipts (``agent.receipts``): ``summary`` for its status line, one ``warnings`` line per
    number that contradicts a result of the turn, and each checked number with the call behind it."""

    type: ClassVar[Literal["receipts"]] = "receipts"
    summary: str
    warnings: list[str] = field(default_factory=list)
    numbers: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ApprovalRequiredEvent:
    """Someone proposes to change the session: the ``proposal``'s panel; the person runs, edits or rejects it
    (``pyaichat.proposals``). The panel names an outside source (``Proposal.outside``)."""

    type: ClassVar[Literal["approval_required"]] = "approval_required"
    proposal: Proposal


@dataclass(frozen=True, slots=True)
class QuestionEvent:
    """An MCP server asks the person something (an elicitation): its ``message``, then the ``fields`` to fill
    in (each a label and what it takes), or a ``url`` it asks them to open themselves. The front end asks
    for the answer next; nothing of it reaches the model."""

    type: ClassVar[Literal["question"]] = "question"
    call_id: str
    source: str  # the server that asks
    message: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    url: str | None = None
    secret_fields: list[str] = field(default_factory=list)  # labels of fields that look like credentials


@dataclass(frozen=True, slots=True)
class PreviewEvent:
    """What running a proposal would do, found before the user chooses (``Preview.lines()``: kind, text).
    ``status``: ``running`` (a status line while it runs), ``previewed``, ``incomplete``, ``unavailable`` or
    ``skipped`` (Ctrl-C). For the user's eyes: the agent loop never sees it; the model is told only what the
    preview could not see, through the proposal's outcome."""

    type: ClassVar[Literal["preview"]] = "preview"
    call_id: str
    status: str
    lines: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Tokens and cost of one turn; ``estimated`` when part of it was counted by pyaichat (a request ended
    before the provider reported its usage)."""

    type: ClassVar[Literal["usage"]] = "usage"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    model: str | None = None
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """Something failed; ``message`` is one plain sentence for the user."""

    type: ClassVar[Literal["error"]] = "error"
    message: str
    kind: str = "error"


@dataclass(frozen=True, slots=True)
class NoticeEvent:
    """Output of a slash command or an informational line (not from the model)."""

    type: ClassVar[Literal["notice"]] = "notice"
    text: str
    level: Literal["info", "warning", "success"] = "info"


@dataclass(frozen=True, slots=True)
class CodeEvent:
    """Code to show highlighted (a proposal, an ``/inspect`` source)."""

    type: ClassVar[Literal["code"]] = "code"
    code: str
    language: str = "python"
    title: str = ""


@dataclass(frozen=True, slots=True)
class PageSection:
    """One part of a ``PageEvent``: a title, then rows (a term and its description, the description wrapped
    under its own column), plain text (each line wrapped under its own indent), or code to highlight."""

    title: str = ""
    rows: list[tuple[str, str]] = field(default_factory=list)
    text: str = ""
    code: str = ""
    language: str = "text"


@dataclass(frozen=True, slots=True)
class PageEvent:
    """Long output of a command (``/help``, ``/sent``, ``/history``…). Every front end prints it where the
    person reads on (a pager that took the keys typed after it was a trap); a terminal front end pages it
    only when ``pager`` says the person asked to (``/more``)."""

    type: ClassVar[Literal["page"]] = "page"
    sections: list[PageSection]
    pager: bool = False

    def plain_text(self, width: int = 100) -> str:
        """The page as plain text ``width`` columns wide: rows aligned, descriptions wrapped under their own
        column (a term too wide for the column gets its description on the next line), text lines wrapped
        under their own indent."""
        out: list[str] = []
        for section in self.sections:
            if section.title:
                out.append(section.title)
            if section.rows:
                out.extend(_rows_text(section.rows, width))
            if section.text:
                out.extend(text_lines(section.text, width))
            if section.code:
                out.append(section.code.rstrip("\n"))
        return "\n".join(out)


TERM_COLUMN = 26  # the widest term that keeps its description on the same line
NARROW_DESCRIPTION = 30  # fewer columns than this beside the terms: descriptions go under them instead
STACKED_COLUMN = 6  # where a description starts under its term on a narrow screen


def _rows_text(rows: list[tuple[str, str]], width: int) -> list[str]:
    return [(left + right).rstrip() for left, right in row_lines(rows, width)]


def row_lines(rows: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """``rows`` laid out ``width`` columns wide, as (left, right) pieces per line: the left piece is the
    indented term (or blanks under it), the right one a piece of the wrapped description."""
    import textwrap  # with the first page shown

    column = min(max((len(term) for term, _ in rows), default=0), TERM_COLUMN) + 4
    if width - column < NARROW_DESCRIPTION:  # a narrow screen: each description under its term, less indented
        column = min(column, STACKED_COLUMN)
    lines: list[tuple[str, str]] = []
    for term, text in rows:
        wrapped = textwrap.wrap(text, max(12, width - column), break_on_hyphens=False) or [""]
        if len(term) + 4 > column:  # too wide: the description starts on the next line, under its column
            lines.append((f"  {term}", ""))
            lines.extend((" " * column, piece) for piece in wrapped)
        else:
            lines.append((f"  {term}".ljust(column), wrapped[0]))
            lines.extend((" " * column, piece) for piece in wrapped[1:])
    return lines


HANGING = 2  # how much further in than its line's own indent a wrapped line goes on


def text_lines(text: str, width: int) -> list[str]:
    """``text`` laid out ``width`` columns wide: a line too long goes on under its own indent, two columns
    further in (``  Landlock: no file writes, …`` never spills back to column 0, and its continuation does
    not look like the next item). Blank lines stay; a word longer than the width is not cut (a path or a
    command must stay whole to be copied)."""
    import textwrap  # with the first page shown

    lines: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        if len(line) <= width or not body.strip():
            lines.append(line.rstrip())
            continue
        lines.extend(
            textwrap.wrap(
                body,
                max(20, width),
                initial_indent=indent,
                subsequent_indent=indent + " " * HANGING,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return lines


Event = (
    StateEvent
    | ThinkingEvent
    | ToolStartEvent
    | ToolEndEvent
    | AnswerChunkEvent
    | AnswerEvent
    | ReceiptsEvent
    | ApprovalRequiredEvent
    | QuestionEvent
    | PreviewEvent
    | UsageEvent
    | ErrorEvent
    | NoticeEvent
    | CodeEvent
    | PageEvent
)


def assert_never(event: NoReturn) -> NoReturn:
    """The end of a renderer's ``match`` over ``Event``: a type checker proves no event reaches it (a new
    event a renderer misses is an error there); at run time it names the event (``typing.assert_never`` is
    Python 3.11's)."""
    raise AssertionError(f"an event no renderer knows: {event!r}")
