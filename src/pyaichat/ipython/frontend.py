"""The IPython front end of the shared ``Controller``: renders events and hands proposals to the next input.

Terminal IPython (and a plain ``InteractiveShell``) reuses the REPL's rich renderer, so answers stream the
same way; a Jupyter kernel gets the answer as Markdown through IPython's display system, updated in place
while it streams. Proposed code is never run from here: the decision returned to the proposal path is always
``"edit"``, which puts it into the next input with ``shell.set_next_input`` (IPython's convention); running
that cell is the approval (the extension's cell hooks tell ``proposals.Proposals``). A tool call awaiting
approval is asked about with one key in a terminal; a notebook cannot ask.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

from IPython.display import Markdown, display

from ..ports import BaseFrontEnd
from ..printable import printable_data

if TYPE_CHECKING:
    from ..agent.events import Event
    from ..config import Config
    from ..mcptools.approval import Answer, Question
    from ..proposal import Decision, Proposal

_UPDATE_EVERY_S = 0.1  # Jupyter: at most ten display updates a second while an answer streams


class Renderer(Protocol):
    shown_proposals: set[str]

    def render(self, event: Event) -> None: ...

    def close(self, *, interrupted: bool = False) -> None: ...


def is_jupyter(shell: Any) -> bool:
    """True inside a Jupyter (ZMQ) kernel, where output is rich display data rather than a terminal."""
    return any(cls.__name__ == "ZMQInteractiveShell" for cls in type(shell).__mro__)


def _md_escape(text: str) -> str:
    """``text`` shown as itself in Markdown (a quote from data must not format or link anything)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!<>|~" else ch for ch in text)


def is_terminal(shell: Any) -> bool:
    """True for terminal IPython with a prompt_toolkit prompt (not ``--simple-prompt`` or piped input)."""
    return getattr(shell, "pt_app", None) is not None


class DisplayRenderer:
    """Jupyter rendering: the answer as Markdown in one display area, the rest as short text lines."""

    def __init__(self) -> None:
        self.shown_proposals: set[str] = set()
        self._answer: list[str] = []
        self._calls: dict[str, str] = {}
        self._handle: Any = None
        self._last_update = 0.0

    def render(self, event: Event) -> None:
        from ..agent import events as ev  # with the first event (its dataclasses compile their methods)

        event = printable_data(event)  # a notebook's output interprets ANSI codes too
        match event:
            case ev.AnswerChunkEvent():
                self._answer.append(event.text)
                self._update(force=False)
            case ev.AnswerEvent():
                text = event.text or "".join(self._answer)
                self._answer = [text]
                self._update(force=True)
                self._reset()
                if event.note or event.stopped_by:
                    print(event.note or f"Stopped by the {event.stopped_by} limit.")
            case ev.ReceiptsEvent():
                for warning in event.warnings:
                    print(f"⚠ {warning}")
                print(f"{event.summary} (/receipts)")
            case ev.ApprovalRequiredEvent():
                self._finish()
                p = event.proposal
                self.shown_proposals.add(p.call_id)
                body = f"{p.explanation.strip()}\n\n" if p.explanation.strip() else ""
                if p.provenance:  # it follows text from the data that looked like an instruction
                    body = f"⚠ {_md_escape(p.provenance)}\n\n{body}"
                who = f" by {p.source}" if p.outside else ""
                if p.kind == "tool":
                    import json  # only with a tool call to show

                    arguments = json.dumps(p.arguments, ensure_ascii=False, indent=2, default=str)
                    title = f"**{p.title or f'Tool call proposed{who}: {p.tool} (not called yet)'}**"
                    self._markdown(f"{title}\n\n{body}```json\n{arguments}\n```")
                else:
                    title = f"**Proposed code{who} (not run yet)**"
                    self._markdown(f"{title}\n\n{body}```python\n{p.code.rstrip()}\n```")
            case ev.QuestionEvent():  # a notebook cannot answer: shown, and refused
                self._finish()
                print(f"The MCP server {event.source!r} asks: {event.message}")
            case ev.PreviewEvent():
                print("\n".join(line for _, line in event.lines))
            case ev.CodeEvent():
                title = f"**{event.title}**\n\n" if event.title else ""
                self._markdown(f"{title}```{event.language}\n{event.code.rstrip()}\n```")
            case ev.ErrorEvent():
                self._finish()
                print(f"Error: {event.message}", file=sys.stderr)
            case ev.NoticeEvent():
                print(event.text)
            case ev.PageEvent():  # a notebook scrolls: no pager
                print(event.plain_text())
            case ev.ThinkingEvent():
                if event.text.strip():
                    print(event.text.strip())
            case ev.ToolStartEvent():
                from ..repl.render import (
                    call_label,
                )  # rich: with the first event; the REPL's picture of a call

                self._calls[event.call_id] = call_label(event.name, event.args)
            case ev.ToolEndEvent():
                label = self._calls.pop(event.call_id, f"{event.name}(…)")
                mark = "✓" if event.ok else "✗"
                error = "" if event.ok else f": {event.error or 'failed'}"
                print(f"{mark} {label} {event.duration_ms:.0f} ms{error}")
            case ev.UsageEvent():
                from ..repl.render import format_usage  # rich: with the first event

                print(
                    format_usage(
                        event.prompt_tokens,
                        event.completion_tokens,
                        event.cost_usd,
                        event.model,
                        estimated=event.estimated,
                    )
                )
            case ev.StateEvent():
                pass  # nothing to show between two output lines in a notebook
            case _:
                ev.assert_never(event)

    def close(self, *, interrupted: bool = False) -> None:
        self._finish()
        self._calls.clear()
        if interrupted:
            print("Interrupted.")

    def _update(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and self._handle is not None and now - self._last_update < _UPDATE_EVERY_S:
            return
        self._last_update = now
        content = Markdown("".join(self._answer))
        if self._handle is None:
            self._handle = display(content, display_id=True)
        else:
            self._handle.update(content)

    def _finish(self) -> None:
        """Show the latest text of an answer cut short (an error, a proposal or Ctrl-C), then forget it."""
        if self._answer:
            self._update(force=True)
        self._reset()

    def _reset(self) -> None:
        self._answer = []
        self._handle = None

    @staticmethod
    def _markdown(text: str) -> None:
        display(Markdown(text))


# what outside agents (MCP) are told this session is, by (a terminal prompt, a Jupyter kernel)
_WHERE = {
    (True, False): "IPython",
    (True, True): "IPython",
    (False, True): "IPython in Jupyter",
    (False, False): "IPython (no terminal prompt)",
}


class IPythonFrontEnd(BaseFrontEnd):
    """The ``FrontEnd`` (``ports``) for an IPython shell (terminal, Jupyter or embedded)."""

    def __init__(self, shell: Any, config: Config) -> None:
        self.shell = shell
        self.jupyter = is_jupyter(shell)
        self.interactive = is_terminal(shell)
        self.where = (
            "IPython"
            if self.interactive
            else "IPython in Jupyter"
            if self.jupyter
            else "IPython (no terminal prompt)"
        )
        # a terminal keeps its session for --resume; notebooks do not (several open at once would replace
        # each other's, and the one the user resumes)
        self.remembers = self.interactive
        self._color = bool(config.color) and getattr(shell, "colors", "").lower() != "nocolor"
        self._renderer: Renderer | None = None
        self._next_input: str | None = None

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            if self.jupyter:
                self._renderer = DisplayRenderer()
            else:
                from ..repl.render import RichRenderer  # rich: terminal only, with the first event

                self._renderer = RichRenderer(color=self._color)
        return self._renderer

    def emit(self, event: Event) -> None:
        self.renderer.render(event)

    def decide(self, proposal: Proposal) -> Decision:
        """Show the proposal (once). Code goes into the next input ("edit": IPython runs nothing on its own;
        running that cell as it is approves it); a tool call is asked about with one key in a terminal."""
        if proposal.call_id not in self.renderer.shown_proposals:
            from ..agent.events import ApprovalRequiredEvent  # loaded with the proposal

            self.renderer.render(ApprovalRequiredEvent(proposal=proposal))
        if proposal.kind != "tool":
            return "edit"
        if not self.interactive:
            return "shown"  # a notebook or a kernel has no prompt to ask with
        from ..repl.questions import ask_decision  # prompt_toolkit: a terminal IPython has it loaded

        close = getattr(self.renderer, "pause", None)
        if close is not None:
            close()
        return ask_decision(color=self._color, choices=proposal.choices)

    def edit_arguments(self, proposal: Proposal) -> dict[str, Any] | None:
        """A tool call's arguments, edited as one line of JSON in a terminal."""
        from ..repl.questions import ask_arguments  # prompt_toolkit: terminal only (decide asked there)

        return ask_arguments(proposal.tool, dict(proposal.arguments))

    def answer_question(self, question: Question) -> Answer:
        """An MCP server's question (elicitation), asked in a terminal (the controller asks only there)."""
        from ..repl.form import ask_answer  # prompt_toolkit: terminal only

        close = getattr(self.renderer, "pause", None)
        if close is not None:
            close()
        return ask_answer(question, color=self._color)

    def set_next_input(self, code: str) -> None:
        if code == self._next_input:
            return  # the same proposal placed again
        self._next_input = code
        self.shell.set_next_input(code)

    def begin(self) -> None:
        """A new question starts: a proposal of the previous one no longer counts as already placed."""
        self._next_input = None

    def close(self, *, interrupted: bool = False) -> None:
        """End of one ``%ai``: stop live output, keep a partial answer, say so after Ctrl-C."""
        if self._renderer is not None or interrupted:
            self.renderer.close(interrupted=interrupted)
