"""Rich rendering of the event stream, for the interactive REPL and the IPython extension.

Front ends only render events; this module turns each event type into terminal output on a
rich ``Console`` it is given, so the same renderer serves prompt_toolkit and IPython. It never imports
prompt_toolkit.

The answer streams inside a transient ``rich.live.Live`` that shows the Markdown rendered so far (only its
tail, so a long answer never scrolls the live region off screen and garbles it), together with a one-line
status spinner (``step 2/8 → get_repr(df)``). A status that lasts more than a few seconds also says what the
wait is made of and how long it has lasted (``thinking · step 1/8 · waiting for the first token · 12 s``),
so a slow local model or a retried request does not look dead. When the final ``answer`` event arrives the
live region is cleared and the complete answer is printed once as Markdown, so the scrollback holds clean
output.

One module of ~450 lines on purpose: one renderer dispatching with ``match`` over every event type (ending in
``assert_never``, so a new event cannot be missed), every arm drawing into the one live region and status line
it owns (the layout the front ends share is in ``agent.events``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.segment import Segment
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.text import Text

from ..agent import events as ev
from ..agent.events import row_lines, text_lines
from ..commands.wording import worded
from ..literal_tags import literal_tags
from ..printable import printable, printable_data

if TYPE_CHECKING:
    from ..ports import Place

_NOTICE_STYLES = {"info": "", "warning": "yellow", "success": "green"}
_QUIET_STATES = {"idle", "done", "failed", "answering"}
_PREVIEW_STYLES = {
    "head": "bold",
    "in_place": "yellow",
    "output": "dim",
    "note": "yellow",
    "unseen": "yellow",
    "tampered": "bold yellow",
}
_CODE_THEME = "monokai"
SHOW_WAIT_AFTER_S = 3.0  # a status older than this also shows what it waits for and for how long


def call_label(name: str, args: dict[str, Any], limit: int = 48) -> str:
    """A short, one-line picture of a tool call: ``get_repr(df)``, ``get_dir(df, include_private=True)``."""
    if not args:
        return f"{name}()"
    if len(args) == 1:
        inner = _short_value(next(iter(args.values())), limit)
    else:
        inner = ", ".join(f"{k}={_short_value(v, limit // 2)}" for k, v in args.items())
    return f"{name}({inner})"


def _short_value(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else repr(value)
    first, *rest = text.strip().splitlines() or [""]
    if rest or len(first) > limit:
        first = first[: max(1, limit - 1)].rstrip() + "…"
    return first


def format_usage(
    prompt_tokens: int,
    completion_tokens: int,
    cost_usd: float | None,
    model: str | None,
    *,
    estimated: bool = False,
) -> str:
    """``tokens: 1,200 in · 40 out``; with ``≈`` when pyaichat counted them (a request cut short)."""
    about = "≈" if estimated else ""
    parts = [f"tokens: {about}{prompt_tokens:,} in · {about}{completion_tokens:,} out"]
    if cost_usd is not None:
        parts.append(f"${cost_usd:.4f}")
    if model:
        parts.append(model)
    return " · ".join(parts)


class _Printable:
    """A renderable drawn with every piece of its text made printable: the renderer's edge (every print and
    the live region go through it), so text from outside cannot drive the terminal whichever renderable or
    event carries it. rich's own controls (the live region's cursor moves) are not text and pass; styles
    are ours."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            text = segment.text
            if segment.control or not text:
                yield segment
            else:
                clean = printable(text)
                yield segment if clean is text else Segment(clean, segment.style)


def answer_markdown(text: str) -> Markdown:
    """The model's text as rich Markdown, its HTML-like tags shown as written (rich drops raw HTML)."""
    return Markdown(literal_tags(text), code_theme=_CODE_THEME, hyperlinks=False)


class _Tail:
    """Renders only the last ``max_lines`` lines of a renderable (the live answer must fit on the screen).

    Lines stop two columns short of the edge: a full-width line leaves the cursor in the terminal's
    pending-wrap state, and the ``^C`` the terminal echoes on Ctrl-C would then wrap onto a new line the live
    region does not know about, so clearing it would leave a stale copy of the partial answer behind.
    """

    def __init__(self, renderable: Any, max_lines: int) -> None:
        self.renderable = renderable
        self.max_lines = max(1, max_lines)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        narrower = options.update_width(max(10, options.max_width - 2))
        lines = console.render_lines(self.renderable, narrower, pad=False)
        for line in lines[-self.max_lines :]:
            yield from line
            yield Segment.line()


def elapsed(seconds: float) -> str:
    """``7 s``, ``1 min 05 s``."""
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


class _StatusLine:
    """The spinner and the status, read afresh at every refresh of the live region (eight times a second),
    so the seconds count up while the renderer hears nothing."""

    def __init__(self, text: Callable[[], str]) -> None:
        self.text = text
        self.spinner = Spinner("dots")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        status = self.text()
        room = max(10, options.max_width - 6)  # one line, clear of the last columns (see _Tail)
        if len(status) > room:
            status = status[: room - 1] + "…"
        frame = self.spinner.render(console.get_time())
        yield Text.assemble(frame, " ", Text(status, style="cyan", no_wrap=True))  # type: ignore[arg-type]  # rich's stubs take a Text, not its Spinner frame


class RichRenderer:
    """Renders every event type of ``agent/events.py`` on a rich ``Console``.

    Call ``render(event)`` for each event and ``close()`` when the input that produced them is finished (the
    REPL does it after every input, also after Ctrl-C): it stops the live region and keeps any partial answer.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        color: bool = True,
        clock: Callable[[], float] = time.monotonic,
        place: Place = "repl",
    ) -> None:
        self.console = console or Console(no_color=not color, highlight=False)
        self.place = place  # where it draws: the REPL, or terminal IPython (commands after %ai)
        self.last_page: ev.PageEvent | None = None  # the last long output, for /more
        self._live: Live | None = None
        self._answer: list[str] = []
        self._status: str | None = None
        self._activity = ""  # what the current status waits for, shown once it has lasted a while
        self._since = 0.0  # when the current status began (a new state or step, a tool call)
        self._status_key: tuple[Any, ...] | None = None
        self._clock = clock
        self._status_line = _StatusLine(self.status_text)
        self._calls: dict[str, str] = {}
        self.shown_proposals: set[str] = set()

    # -- dispatch --------------------------------------------------------------------------------------------
    def render(self, event: ev.Event) -> None:
        # text from servers, agents, data and models cannot drive the terminal (``_print`` guarantees it;
        # marked here first, so the marks of what rich would silently drop — a CR, a BEL — stay visible)
        event = printable_data(event)
        match event:
            case ev.AnswerChunkEvent():
                self._answer.append(event.text)
                self._refresh()
            case ev.StateEvent():
                self._on_state(event)
            case ev.ThinkingEvent():
                if event.text.strip():
                    self._print(Text(event.text.strip(), style="dim italic"))
            case ev.ToolStartEvent():
                self._on_tool_start(event)
            case ev.ToolEndEvent():
                self._on_tool_end(event)
            case ev.AnswerEvent():
                self._on_answer(event)
            case ev.ReceiptsEvent():  # under the answer: a line per contradicted number, then the status line
                for warning in event.warnings:
                    self._print(Text(f"⚠ {warning}", style="bold yellow"))
                self._print(Text(self._say(f"{event.summary} (/receipts)"), style="dim"))
            case ev.ApprovalRequiredEvent():
                self._on_approval_required(event)
            case ev.QuestionEvent():
                self._on_question(event)
            case ev.PreviewEvent():
                self._on_preview(event)
            case ev.UsageEvent():
                usage = format_usage(
                    event.prompt_tokens,
                    event.completion_tokens,
                    event.cost_usd,
                    event.model,
                    estimated=event.estimated,
                )
                self._print(Text(usage, style="dim"))
            case ev.ErrorEvent():
                self._flush_answer()
                self._status = None
                self._stop_live()
                self._print(Text(f"Error: {self._say(event.message)}", style="bold red"))
            case ev.NoticeEvent():
                self._print(Text(self._say(event.text), style=_NOTICE_STYLES.get(event.level, "")))
            case ev.CodeEvent():
                syntax = Syntax(
                    event.code.rstrip("\n"), event.language or "text", theme=_CODE_THEME, word_wrap=True
                )
                title = Text(event.title) if event.title else None  # a Text: a str title is rich markup
                panel = Panel(syntax, title=title, title_align="left", border_style="blue", expand=False)
                self._print(panel)
            case ev.PageEvent():
                self._on_page(event)
            case _:
                ev.assert_never(event)

    __call__ = render

    def pause(self) -> None:
        """Stop the live region (before another prompt takes the screen); the turn's state is kept."""
        self._status = None
        self._flush_answer()
        self._stop_live()

    def close(self, *, interrupted: bool = False) -> None:
        """Finish the current output: stop the live region, keep a partial answer on screen."""
        partial = "".join(self._answer)
        self._answer.clear()
        self._stop_live()
        self._status = None
        self._calls.clear()
        if partial.strip():
            self._print_markdown(partial)
        if interrupted:
            self._print(Text("Interrupted.", style="yellow"))

    # -- event handlers --------------------------------------------------------------------------------------
    def _on_page(self, event: ev.PageEvent) -> None:
        """Long command output, printed where the person reads on; in the pager only when asked (``/more``),
        since a pager takes the keys typed after it."""
        group = self._page_group(event)
        if event.pager and self.console.is_terminal:
            from .pager import page  # subprocess: with the first /more

            with self.console.capture() as captured:
                self.console.print(_Printable(group))
            self._flush_answer()
            self._stop_live()
            if page(captured.get()):
                return
        self.last_page = event
        self._print(group)
        if not event.pager:
            self._offer_pager(group)

    def _page_group(self, event: ev.PageEvent) -> Group:
        width = self._text_width()
        parts: list[Any] = []
        for section in event.sections:
            if section.title:
                parts.append(Text(section.title, style="bold"))
            for left, right in row_lines(section.rows, width) if section.rows else []:
                parts.append(Text.assemble((left, "cyan"), right))
            if section.text:
                parts.extend(Text(line) for line in text_lines(section.text, width))
            if section.code:
                code = section.code.rstrip("\n")
                parts.append(Syntax(code, section.language or "text", theme=_CODE_THEME, word_wrap=True))
        return Group(*parts)

    def _offer_pager(self, group: Group) -> None:
        """Under output taller than the screen: one line saying how to read it in the pager."""
        if not self.console.is_terminal:
            return
        tall = len(self.console.render_lines(group, self.console.options, pad=False))
        if tall >= self.console.height - 1:
            hint = f"({tall} lines: /more shows them in a pager, where q comes back here)"
            self._print(Text(self._say(hint), style="dim"))

    def _on_state(self, event: ev.StateEvent) -> None:
        if event.state in _QUIET_STATES:
            self._status = None
        else:
            step = f" · step {event.step}/{event.max_steps}" if event.step and event.max_steps else ""
            detail = f" · {event.detail}" if event.detail else ""
            self._set_status(f"{event.state}{step}{detail}", (event.state, event.step), event.activity)
        self._refresh()

    def _on_tool_start(self, event: ev.ToolStartEvent) -> None:
        label = call_label(event.name, event.args)
        self._calls[event.call_id] = label
        step = f"step {event.step} → " if event.step else "→ "
        self._set_status(f"{step}{label}", ("tool", event.call_id))
        self._refresh()

    def _set_status(self, text: str, key: tuple[Any, ...], activity: str = "") -> None:
        """A new status; its clock restarts only when the state, the step or the tool call changes (a wait
        that turns from "waiting for the first token" to "receiving the reply" is one wait)."""
        if key != self._status_key:
            self._status_key = key
            self._since = self._clock()
        self._status = text
        self._activity = activity

    def status_text(self) -> str:
        """The status as the live region shows it now."""
        status = self._status or ""
        waited = self._clock() - self._since
        if not status or waited < SHOW_WAIT_AFTER_S:
            return status
        return " · ".join(part for part in (status, self._activity, elapsed(waited)) if part)

    def _on_tool_end(self, event: ev.ToolEndEvent) -> None:
        label = self._calls.pop(event.call_id, f"{event.name}(…)")
        ms = f"{event.duration_ms:.0f} ms"
        if event.ok:
            extra = " (truncated)" if event.truncated else ""
            self._print(Text(f"✓ {label} {ms}{extra}", style="dim"))
        else:
            self._print(Text(f"✗ {label} {ms}: {event.error or 'failed'}", style="dim red"))

    def _on_answer(self, event: ev.AnswerEvent) -> None:
        text = event.text or "".join(self._answer)
        self._answer.clear()
        self._status = None
        self._stop_live()
        if text.strip():
            self._print_markdown(text)
        if event.note or event.stopped_by:
            note = self._say(event.note or f"Stopped by the {event.stopped_by} limit.")
            self._print(Text(note, style="yellow"))

    def _on_approval_required(self, event: ev.ApprovalRequiredEvent) -> None:
        self._flush_answer()
        self._status = None
        self._stop_live()
        p = event.proposal
        self.shown_proposals.add(p.call_id)
        who = f" by {p.source}" if p.outside else ""  # an outside client, named
        if p.kind == "tool":
            import json  # only with a tool call to show

            arguments = json.dumps(p.arguments, ensure_ascii=False, indent=2, default=str)
            body = Syntax(arguments, "json", theme=_CODE_THEME, word_wrap=True)
            title = p.title or f"Tool call proposed{who}: {p.tool} (not called yet)"
        else:
            body = Syntax(p.code.rstrip("\n"), "python", theme=_CODE_THEME, word_wrap=True)
            title = f"Proposed code{who} (not run yet)"
        parts: list[Any] = []
        if p.provenance:  # it follows text from the data that looked like an instruction
            parts.append(Padding(Text(f"⚠ {p.provenance}", style="bold yellow"), (0, 0, 1, 0)))
        if p.explanation.strip():
            last = p.choices == "accept"  # a review of changed definitions: the text is all there is
            parts.append(Padding(Text(p.explanation.strip()), (0, 0, 0 if last else 1, 0)))
        if p.choices != "accept":
            parts.append(body)
        self._print(
            Panel(Group(*parts), title=Text(title), title_align="left", border_style="yellow", expand=False)
        )

    def _on_question(self, event: ev.QuestionEvent) -> None:
        """An MCP server's question to the person (elicitation): its message, then the fields it asks for
        or the address it asks them to open; the front end asks for the answer under it.

        The server's words are shown as its quoted words — each line behind a rule with the server's name,
        never in the style of pyaichat's own prompts — and a field that looks like it asks for a credential
        gets a warning line: a server can write "pyaichat: your session expired", not make it ours."""
        self._flush_answer()
        self._status = None
        self._stop_live()
        quote = f"{event.source} ▌ "

        room = max(10, self._text_width() - len(quote) - 4)  # inside the panel, behind the rule

        def quoted(text: str, style: str = "") -> Text:
            """Every line on screen behind the server's rule, also those a long line wraps onto."""
            lines = text.splitlines() or [""]
            pieces = [piece for line in lines for piece in Text(line).wrap(self.console, room)]
            return Text("\n").join(Text.assemble((quote, "magenta"), (p.plain, style)) for p in pieces)

        parts: list[Any] = [quoted(event.message.strip() or "(no message)", "italic")]
        if event.url:
            parts.append(Padding(Text.assemble(("Open: ", "bold"), (event.url, "underline")), (1, 0, 0, 0)))
            parts.append(
                Text(
                    "pyaichat does not open it or look at it; only you do, in your browser, if you accept.",
                    style="dim",
                )
            )
        elif event.fields:
            secret = set(event.secret_fields)
            rows: list[Text] = []
            for label, hint in event.fields:
                rows.append(quoted(f"{label}: {hint}" if hint else label, "italic"))
                if label in secret:
                    warning = Text(
                        f"⚠ pyaichat never asks for passwords; this is server {event.source!r} asking "
                        "(what you type is not shown).",
                        style="bold red",
                    )
                    rows.append(warning)
            parts.append(Padding(Text("\n").join(rows), (1, 0, 0, 0)))
        title = f"The MCP server {event.source!r} asks you (its own words, quoted)"
        self._print(
            Panel(Group(*parts), title=Text(title), title_align="left", border_style="yellow", expand=False)
        )

    def _on_preview(self, event: ev.PreviewEvent) -> None:
        """What the proposal would do, under its panel (the status line said it was running)."""
        self._status = None
        self._stop_live()
        width = self._text_width()
        text = Text("\n").join(
            Text(piece, style=_PREVIEW_STYLES.get(kind, ""))
            for kind, line in event.lines
            for piece in text_lines(self._say(line), width)
        )
        self._print(text if text.plain else Text("No preview.", style="dim"))

    # -- live region -----------------------------------------------------------------------------------------
    def _say(self, text: str) -> str:
        """One of pyaichat's sentences as this terminal says it (``%ai /receipts`` in IPython)."""
        return worded(text, self.place)

    def _text_width(self) -> int:
        """Columns for text laid out here (rows, indented lines): clear of the last two (see ``_Tail``)."""
        return max(20, self.console.width - 2)

    def _print(self, renderable: Any) -> None:
        """The one way output reaches the console (besides the live region, ``_live_view``)."""
        self.console.print(_Printable(renderable))

    def _print_markdown(self, text: str) -> None:
        self._print(answer_markdown(text))

    def _flush_answer(self) -> None:
        """Print streamed text that no ``answer`` event completed (an error or a proposal cut it short)."""
        partial = "".join(self._answer)
        self._answer.clear()
        if partial.strip():
            self._stop_live()
            self._print_markdown(partial)

    def _live_view(self) -> Any:
        parts: list[Any] = []
        if self._answer:
            height = max(3, self.console.size.height - 3)
            parts.append(_Tail(answer_markdown("".join(self._answer)), height))
        if self._status:
            parts.append(self._status_line)
        return _Printable(Group(*parts))

    def _refresh(self) -> None:
        if not self._answer and not self._status:
            if self._live is not None:
                self._live.update(Group(), refresh=True)
            return
        if self._live is None:
            if not self.console.is_terminal:
                return  # nothing to animate on a file or pipe: the final answer is printed whole
            self._live = Live(
                self._live_view(),
                console=self.console,
                transient=True,
                auto_refresh=True,
                refresh_per_second=8,
                vertical_overflow="crop",
            )
            self._live.start(refresh=True)  # show the status now, not at the next 1/8 s tick
        else:
            self._live.update(self._live_view(), refresh=True)

    def _stop_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()
