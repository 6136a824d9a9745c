"""Piped (non-TTY) front end: reads stdin like ``python -i`` and prints events as plain text.

It imports neither prompt_toolkit nor rich, so ``printf 'x=1\n' | python -m pyaichat`` starts in a fraction of
IPython's time, and its output has no colour codes.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .checkpoints.resumed import Resumed
from .controller import Controller
from .ports import BaseFrontEnd
from .printable import show
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
        """The one way output leaves (``_line`` too): text from servers, agents, data and models cannot
        drive the terminal."""
        show(text, file=self.out, end="")

    def _line(self, text: str) -> None:
        show(text.rstrip("\n"), file=self.out)

    def _end_stream(self) -> None:
        if self._streaming:
            show(file=self.out)
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
    source_lines = lines if isinstance(lines, Lines) else Lines(lines)
    for raw in source_lines:
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
                # the line that ended the block starts the next input: back into the source, so that between
                # two inputs nothing read is held here (a checkpoint taken then holds it in ``Lines``)
                source_lines.back.append(raw)
                yield source
                block = []
                continue
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


class Lines:
    """Raw lines from ``source``, with the lines read ahead and put back (``back``, next first)."""

    def __init__(self, source: Iterable[str]) -> None:
        self._source = iter(source)
        self.back: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return self.back.pop() if self.back else next(self._source)


def _ends_block(source: str) -> bool:
    """True when a blank line would complete ``source`` (it is a finished compound statement)."""
    return not needs_more_input(source + "\n")


def run_piped(
    ctrl: Controller, stream: TextIO | None = None, first: Sequence[str] = (), supervised: Any = None
) -> int:
    """Read every input from ``stream`` (stdin) and handle it, after ``first`` (``--resume`` is ``/resume``);
    exit status 0 at end of input. ``supervised``: the supervisor's link that keeps checkpoints (the setting
    ``checkpoints = "on"``), or why there is none."""
    if isinstance(supervised, str):
        ctrl.checkpoints_why = supervised
    if supervised is None or isinstance(supervised, str):
        try:
            for source in itertools.chain(first, iter_inputs(stream or sys.stdin, ctrl)):
                ctrl.serve_proposals()  # an outside agent's, shown between inputs (never run: nobody asks)
                ctrl.handle(source)
                sys.stdout.flush()
                if ctrl.should_exit:
                    break
            ctrl.serve_proposals()
        finally:
            ctrl.close()
        return 0
    return _run_kept(ctrl, stream, first, supervised)


def _run_kept(ctrl: Controller, stream: TextIO | None, first: Sequence[str], supervised: Any) -> int:
    """``run_piped`` with checkpoints. Each copy is taken after an input is read and before it runs, so the
    copy's reading holds no more than the pipe has given it: a session resumed from it after a crash drops
    that input (it crashed) and reads on from the pipe; one resumed by a jump drops it too (it was undone)
    and reads on from the lines the session it replaces had read ahead (``Lines.back``, carried over)."""
    from .checkpoints.keeper import Checkpoints  # only with checkpoints on for piped input

    # read a byte at a time: nothing read past a line stays in a buffer of this process
    lines = Lines(stream if stream is not None else _unbuffered_lines(sys.stdin.fileno()))
    resumed = _PipedResume(lines)
    checkpoints = ctrl.checkpoints = Checkpoints(ctrl, *supervised, prompt=resumed, revive=resumed.revive)
    inputs = itertools.chain(first, iter_inputs(lines, ctrl))
    code = 1
    try:
        for source in inputs:
            _seam(checkpoints)
            if resumed.here:  # this is a session resumed from the copy: its input crashed or was undone
                resumed.here = False
                continue
            ctrl.serve_proposals()  # an outside agent's, shown between inputs (never run: no one is asked)
            try:
                ctrl.handle(source)
            except Resumed:  # resumed from a copy taken inside an input: on with the next one
                pass
            sys.stdout.flush()
            if ctrl.should_exit:
                break
        ctrl.serve_proposals()
        code = 0
    finally:
        ctrl.close()
        checkpoints.bye(code)
    return 0


class _PipedResume:
    """Piped input's part in a jump (``checkpoints.carry.PromptHistory``): no prompt history, and for keys
    typed ahead, the lines read ahead."""

    def __init__(self, source: Lines) -> None:
        self.source = source
        self.here = False  # resumed from a copy: the input read before it was taken does not run

    def revive(self) -> None:
        self.here = True

    def lines(self) -> list[str]:
        return []

    def replace(self, lines: list[str]) -> None:
        pass

    def typed(self) -> Any:
        return list(self.source.back)

    def retype(self, keys: Any) -> None:
        # read on where the session replaced stopped: between two inputs ``iter_inputs`` holds nothing of
        # its own (every yield is followed by an empty block), so the lines it had read ahead are all here
        self.source.back[:] = list(keys)


def _seam(checkpoints: Any) -> None:
    try:
        checkpoints.seam()
    except Exception as exc:  # a checkpoint not taken must not end the session
        from .errors import internal_error  # only when it happens

        show(f"Error: {internal_error(exc, 'Checkpoints')}", file=sys.stderr)


def _unbuffered_lines(fd: int) -> Iterator[str]:
    """stdin's lines, read a byte at a time (nothing is read past the end of a line)."""
    import os  # only with checkpoints on

    line = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
        if byte == b"\n":
            yield line.decode("utf-8", "replace")
            line.clear()
    if line:
        yield line.decode("utf-8", "replace")
