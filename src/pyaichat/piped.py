"""Piped (non-TTY) front end: reads stdin like ``python -i`` and prints events as plain text.

It imports neither prompt_toolkit nor rich, so ``printf 'x=1\n' | python -m pyaichat`` starts in a fraction of
IPython's time, and its output has no colour codes.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TextIO

from .controller import Controller
from .ports import BaseFrontEnd
from .printable import printable_data
from .session import needs_more_input

if TYPE_CHECKING:
    from .agent.events import Event
    from .proposal import Decision, Proposal

# Lines that continue a block even though they are not indented.
_CONTINUATIONS = ("else", "elif", "except", "finally", "case")


class PlainFrontEnd(BaseFrontEnd):
    """Renders events as plain text on a stream; cannot ask, so never runs proposed code (``interactive``
    and ``remembers`` are False: a script must not replace the interactive session --resume brings back)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self._streaming = False
        self._shown: set[str] = set()  # proposals whose panel is printed

    def emit(self, event: Event) -> None:
        # the events load with the first one, not at start-up (dataclasses compile their methods)
        from .agent import events as ev

        event = printable_data(event)  # text from servers, agents, data and models cannot drive the terminal
        match event:
            case ev.AnswerChunkEvent():
                self._write(event.text)
                self._streaming = True
            case ev.AnswerEvent():
                if not self._streaming and event.text:
                    self._line(event.text)  # its own line: a note may follow
                self._end_stream()
                if event.note:
                    self._line(event.note)
            case ev.ReceiptsEvent():
                self._end_stream()
                for warning in event.warnings:
                    self._line(f"Warning: {warning}")
                self._line(event.summary)
            case ev.ErrorEvent():
                self._end_stream()
                self._line(f"Error: {event.message}")
            case ev.NoticeEvent():
                self._end_stream()
                self._line(event.text)
            case ev.CodeEvent():
                self._end_stream()
                if event.title:
                    self._line(event.title)
                self._line(event.code)
            case ev.PageEvent():
                self._end_stream()
                self._line(event.plain_text())
            case ev.ApprovalRequiredEvent():
                self._end_stream()
                self._shown.add(event.proposal.call_id)
                for line in proposal_lines(event.proposal):
                    self._line(line)
            case ev.PreviewEvent():
                self._end_stream()
                for _, line in event.lines:
                    self._line(line)
            case (
                ev.StateEvent()
                | ev.ThinkingEvent()
                | ev.ToolStartEvent()
                | ev.ToolEndEvent()
                | ev.QuestionEvent()
                | ev.UsageEvent()
            ):
                pass  # steps are visible with /trace; plain output keeps only answers
            case _:
                ev.assert_never(event)
        self.out.flush()

    def decide(self, proposal: Proposal) -> Decision:
        """Piped input cannot ask anyone: the proposal is shown, and nothing of it runs."""
        if proposal.call_id not in self._shown:
            from .agent.events import ApprovalRequiredEvent  # loaded with the proposal

            self.emit(ApprovalRequiredEvent(proposal=proposal))
        return "shown"

    def _write(self, text: str) -> None:
        self.out.write(text)

    def _line(self, text: str) -> None:
        self.out.write(text.rstrip("\n") + "\n")

    def _end_stream(self) -> None:
        if self._streaming:
            self.out.write("\n")
            self._streaming = False


def proposal_lines(proposal: Proposal) -> list[str]:
    """A proposal's panel as plain lines: who proposes what (piped input runs none of it)."""
    p = proposal
    who = f"{p.source} proposes" if p.outside else "Proposed"
    if p.kind == "tool":
        import json  # only with a tool call to show

        arguments = json.dumps(p.arguments, ensure_ascii=False, default=str)
        lines = [f"{who} a call of {p.tool} (not called in piped mode):", f"{p.tool}({arguments})"]
    else:
        lines = [f"{who} code (not run in piped mode):", p.code]
    if p.explanation:
        lines.insert(1, p.explanation)
    if p.provenance:  # it follows text from the data that looked like an instruction: said first
        lines.insert(1, f"Warning: {p.provenance}")
    return lines


def iter_inputs(lines: Iterable[str], ctrl: Controller) -> Iterable[str]:
    """Group raw lines into complete inputs with the interactive interpreter's rules.

    A compound statement ends at a blank line (as with ``python -i``) or, more forgivingly, at the next line
    that is not indented and does not continue it. Slash commands and questions are single lines. A cell
    magic (``%%time``, ``%%bash``: a session in a Jupyter kernel runs them) takes every line up to a blank
    one, as in terminal IPython, since its body need not be Python.
    """
    block: list[str] = []
    cell = False  # the block is a cell magic's
    for raw in lines:
        line = raw.rstrip("\r\n")
        if cell:
            if line.strip():
                block.append(line)
                continue
            yield "\n".join(block)
            block, cell = [], False
            continue
        if block:
            source = "\n".join(block)
            if not line.strip():
                yield source
                block = []
                continue
            if (
                not line[:1].isspace()
                and not line.lstrip().startswith(_CONTINUATIONS)
                and _ends_block(source)
            ):
                yield source
                block = []
            else:
                block.append(line)
                if not needs_more_input("\n".join(block)):
                    yield "\n".join(block)
                    block = []
                continue
        if not line.strip():
            continue
        if ctrl.kind(line) in ("command", "question"):
            yield line
            continue
        block = [line]
        if line.startswith("%%"):
            cell = True
            continue
        if not needs_more_input(line):
            yield line
            block = []
    if block:
        yield "\n".join(block)


def _ends_block(source: str) -> bool:
    """True when a blank line would complete ``source`` (it is a finished compound statement)."""
    return not needs_more_input(source + "\n")


def run_piped(ctrl: Controller, stream: TextIO | None = None, first: Sequence[str] = ()) -> int:
    """Read every input from ``stream`` (stdin) and handle it, after ``first`` (``--resume`` is ``/resume``);
    exit status 0 at end of input."""
    try:
        for source in itertools.chain(first, iter_inputs(stream or sys.stdin, ctrl)):
            ctrl.serve_proposals()  # an outside agent's, shown between inputs (never run: no one is asked)
            ctrl.handle(source)
            sys.stdout.flush()
            if ctrl.should_exit:
                break
        ctrl.serve_proposals()
    finally:
        ctrl.close()
    return 0
