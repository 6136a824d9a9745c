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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from IPython.display import display

from ..commands.wording import worded
from ..literal_tags import literal_tags
from ..ports import BaseFrontEnd
from ..printable import printable, show

if TYPE_CHECKING:
    from ..agent.events import Event, PageEvent
    from ..configuration.config import Config
    from ..mcptools.approval import Answer, Question
    from ..ports import Place
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


def markdown_output(text: str) -> dict[str, str]:
    """A display bundle of the model's Markdown: rendered with its HTML-like tags shown as written, and the
    text itself as the plain-text form, for front ends that render no Markdown (``jupyter console``,
    qtconsole, Spyder showed ``<IPython.core.display.Markdown object>``)."""
    return _bundle(literal_tags(text), text)


def notebook_lines(lines: Iterable[str]) -> str:
    """pyaichat's own lines as Markdown that keeps them lines (hard breaks; indents as non-breaking spaces)
    and lets the browser wrap them between words: a stream output wraps a long line mid-word, and text
    wrapped for a terminal breaks where the notebook's width does not."""
    shown = []
    for line in lines:
        body = line.lstrip(" ")
        shown.append("\u00a0" * (len(line) - len(body)) + _md_escape(body))
    return "  \n".join(shown)


def page_markdown(event: PageEvent) -> str:
    """A command's page (``/help``, ``/history``…) as Markdown: rows a table, text lines, code fenced."""
    parts: list[str] = []
    for section in event.sections:
        if section.title:
            parts.append(f"**{_md_escape(section.title)}**")
        if section.rows:
            rows = [f"| `{_cell(term)}` | {_md_escape(text)} |" for term, text in section.rows]
            parts.append("\n".join(["| | |", "|---|---|", *rows]))
        if section.text:
            parts.append(notebook_lines(section.text.rstrip("\n").split("\n")))
        if section.code:
            parts.append(f"```{section.language or ''}\n{section.code.rstrip()}\n```")
    return "\n\n".join(parts)


def _cell(code: str) -> str:
    """Code in a table cell: its ``|`` escaped (a table reads it as a column break even in a code span)."""
    return code.replace("|", "\\|")


def is_terminal(shell: Any) -> bool:
    """True for terminal IPython with a prompt_toolkit prompt (not ``--simple-prompt`` or piped input)."""
    return getattr(shell, "pt_app", None) is not None


class DisplayRenderer:
    """Jupyter rendering, as a notebook shows things: the answer as Markdown in one display area, updated in
    place; pyaichat's longer texts (the preview, a command's page, a warning) as Markdown too, which the
    browser wraps between words; short lines (a tool call, the tokens) as plain output. Every text has its
    plain form for front ends that render no Markdown, and every sentence is worded for a notebook
    (``%ai /receipts``, "in a new cell below"). A notebook's output interprets ANSI codes too: every line
    goes out through ``show`` and every display bundle through ``printable`` (``_bundle``), its edges."""

    place: Place = "jupyter"

    def __init__(self) -> None:
        self.shown_proposals: set[str] = set()
        self._answer: list[str] = []
        self._calls: dict[str, str] = {}
        self._handle: Any = None
        self._last_update = 0.0

    def render(self, event: Event) -> None:
        from ..agent import events as ev  # with the first event (its dataclasses compile their methods)

        match event:
            case ev.AnswerChunkEvent():
                self._answer.append(event.text)
                self._update(force=False)
            case ev.AnswerEvent():
                text = event.text or "".join(self._answer)
                self._answer = [worded(text, self.place, commands=False)]  # pyaichat's own may name a place
                self._update(force=True)
                self._reset()
                if event.note or event.stopped_by:
                    show(self._say(event.note or f"Stopped by the {event.stopped_by} limit."))
            case ev.ReceiptsEvent():
                for warning in event.warnings:  # not the grey of the lines around it: a warning to read
                    self._lines([f"⚠ {warning}"], strong=True)
                show(self._say(f"{event.summary} (/receipts)"))
            case ev.ApprovalRequiredEvent():
                self._finish()
                self.shown_proposals.add(event.proposal.call_id)
                display(proposal_output(event.proposal), raw=True)
            case ev.QuestionEvent():  # a notebook cannot answer: shown, and refused
                self._finish()
                show(f"The MCP server {event.source!r} asks: {event.message}")
            case ev.PreviewEvent():
                self._lines([self._say(line) for _, line in event.lines])
            case ev.CodeEvent():
                title = f"**{event.title}**\n\n" if event.title else ""
                self._markdown(f"{title}```{event.language}\n{event.code.rstrip()}\n```")
            case ev.ErrorEvent():
                self._finish()
                show(f"Error: {self._say(event.message)}", file=sys.stderr)
            case ev.NoticeEvent():
                show(self._say(event.text))
            case ev.PageEvent():  # a notebook scrolls: no pager; rows as a table
                display(_bundle(page_markdown(event), event.plain_text()), raw=True)
            case ev.ThinkingEvent():
                if event.text.strip():
                    show(event.text.strip())
            case ev.ToolStartEvent():
                from ..repl.render import (
                    call_label,
                )  # rich: with the first event; the REPL's picture of a call

                self._calls[event.call_id] = call_label(event.name, event.args)
            case ev.ToolEndEvent():
                from ..agent.loop import PROPOSE  # the turn that sent this event loaded it

                label = self._calls.pop(event.call_id, f"{event.name}(…)")
                if event.ok and event.name == PROPOSE:  # its proposal, preview and new cell say it all
                    return
                mark = "✓" if event.ok else "✗"
                error = "" if event.ok else f": {event.error or 'failed'}"
                show(f"{mark} {label} {event.duration_ms:.0f} ms{error}")
            case ev.UsageEvent():
                from ..repl.render import format_usage  # rich: with the first event

                show(
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
            show("Interrupted.")

    def _say(self, text: str) -> str:
        return worded(text, self.place)

    def _update(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and self._handle is not None and now - self._last_update < _UPDATE_EVERY_S:
            return
        self._last_update = now
        content = markdown_output("".join(self._answer))
        if self._handle is None:
            self._handle = display(content, raw=True, display_id=True)
        else:
            self._handle.update(content, raw=True)

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
        display(markdown_output(text), raw=True)

    @staticmethod
    def _lines(lines: list[str], *, strong: bool = False) -> None:
        """pyaichat's lines as Markdown a notebook wraps between words (bold: a warning)."""
        shown = notebook_lines(lines)
        display(_bundle(f"**{shown}**" if strong else shown, "\n".join(lines)), raw=True)


def proposal_output(proposal: Proposal) -> dict[str, str]:
    """A proposal as a notebook shows it. Its code goes into a new cell below (``set_next_input``) and the
    answer under it says so, so the code is not shown here a second time; a tool call shows its arguments.
    The plain form is the same words without Markdown."""
    explanation = proposal.explanation.strip()
    warning = f"⚠ {proposal.provenance}" if proposal.provenance else ""  # data text that looked like orders
    who = f" by {proposal.source}" if proposal.outside else ""
    if proposal.kind == "tool":
        import json  # only with a tool call to show

        arguments = json.dumps(proposal.arguments, ensure_ascii=False, indent=2, default=str)
        title = proposal.title or f"Tool call proposed{who}: {proposal.tool} (not called yet)"
        code = f"```json\n{arguments}\n```"
    else:
        title, code, arguments = f"Proposed code{who} (not run yet)", "", ""
    markdown = [f"**{_md_escape(title)}**", _md_escape(warning), literal_tags(explanation), code]
    plain = [title, warning, explanation, arguments]
    return _bundle("\n\n".join(part for part in markdown if part), "\n".join(part for part in plain if part))


def _bundle(markdown: str, plain: str) -> dict[str, str]:
    """A display bundle made printable: a notebook's output interprets ANSI codes in either form."""
    return {"text/markdown": printable(markdown), "text/plain": printable(plain)}


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
        self.place: Place = "jupyter" if self.jupyter else "ipython"
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
            from ..commands import all_commands  # the sentences it words name them (``%ai /receipts``)

            all_commands()
            if self.jupyter:
                self._renderer = DisplayRenderer()
            else:
                from ..repl.render import RichRenderer  # rich: terminal only, with the first event

                self._renderer = RichRenderer(color=self._color, place=self.place)
        return self._renderer

    def emit(self, event: Event) -> None:
        self.renderer.render(event)

    @property
    def last_page(self) -> PageEvent | None:
        return getattr(self._renderer, "last_page", None)  # a terminal's rich renderer keeps it

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

    def withdraw(self, call_id: str, code: str | None = None) -> None:
        """A withdrawn proposal's code leaves the next input it was placed in, unless the person changed it
        (called from another thread; terminal IPython: its prompt's buffer, on the prompt's loop)."""
        if code is None or code != self._next_input:
            return
        if getattr(self.shell, "rl_next_input", None) == code:  # not on the screen yet
            self.shell.rl_next_input = None
            return
        app = getattr(getattr(self.shell, "pt_app", None), "app", None)
        loop = getattr(app, "loop", None)
        if app is None or loop is None or not app.is_running:
            return
        buffer = self.shell.pt_app.default_buffer

        def drop() -> None:
            if buffer.text == code:
                buffer.reset()

        loop.call_soon_threadsafe(drop)

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
