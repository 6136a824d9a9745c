"""The terminal REPL's main prompt: a prompt_toolkit ``PromptSession`` whose message, lexer, completer and
toolbar follow the controller's mode, with our key bindings, the history and ghost text (``Repl`` reads
from it)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.completion import Completer, DynamicCompleter
from prompt_toolkit.enums import DEFAULT_BUFFER, EditingMode
from prompt_toolkit.filters import has_focus, is_done
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.layout.processors import ConditionalProcessor
from prompt_toolkit.lexers import DynamicLexer, Lexer
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.shortcuts import PromptSession
from prompt_toolkit.styles import Style

from ..modes import Mode
from .ghost_text import GhostLineProcessor, ghost_bindings, toolbar_part
from .keys import build_key_bindings

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ..controller import Controller

PROMPTS = {Mode.PYTHON: ">>> ", Mode.ASSISTANT: "ai> "}
CONTINUATION = "... "
LEXER_IDLE = 0.1  # seconds of an idle prompt (no key, no redraw) before the lexer is built

STYLE = Style.from_dict(
    {
        "prompt.python": "ansigreen bold",
        "prompt.assistant": "ansimagenta bold",
        "continuation": "ansibrightblack",
        "bottom-toolbar": "noreverse bg:ansibrightblack ansiwhite",
        "bottom-toolbar.mode": "bold",
        "bottom-toolbar.key": "bold",
        "question": "ansiyellow bold",
        "bottom-toolbar.remote": "ansiyellow bold",  # suggestions: what is typed leaves this machine
    }
)
# Without colour the toolbar keeps prompt_toolkit's reverse video, the one emphasis a monochrome screen has;
# ghost text is underlined (grey would look like typed text).
PLAIN_STYLE = Style.from_dict(
    {
        "bottom-toolbar": "reverse",
        "bottom-toolbar.mode": "bold",
        "bottom-toolbar.remote": "bold",
        "question": "bold",
        "auto-suggestion": "underline",
    }
)


# -- prompt pieces -------------------------------------------------------------------------------------------
def prompt_message(ctrl: Controller) -> FormattedText:
    return FormattedText([(f"class:prompt.{ctrl.mode.value}", PROMPTS[ctrl.mode])])


def continuation(width: int, line_number: int, is_soft_wrap: int) -> FormattedText:
    return FormattedText([("class:continuation", CONTINUATION.rjust(width))])


def toolbar(ctrl: Controller) -> FormattedText:
    """Mode, model and the keys a newcomer needs; short enough for an 80-column terminal. With suggestions
    on (Python mode), which model gets what is typed, and whether that leaves this machine; with checkpoints,
    how far back ``/undo`` goes; a proposal from an outside agent waiting for an empty line says so instead of
    the hint."""
    model = ctrl.config.model or "no model"
    suggesting = toolbar_part(ctrl.config, ctrl.suggester_if_any, ctrl.mode)
    hint = "@name: pin a value" if ctrl.mode is Mode.ASSISTANT else "Alt-Enter: newline"
    serving = ctrl.gate.serving  # outside agents can read this session (/mcp)
    undo = ctrl.checkpoints.status() if ctrl.checkpoints is not None else None  # how far back /undo goes
    waiting = ctrl.proposals.waiting
    if waiting:
        hint = f"{waiting} proposal{'s' if waiting > 1 else ''} waiting: clear the line to see"
    tail = f": switch mode · {hint} · /help " if waiting or not suggesting else ": switch mode · /help "
    return FormattedText(
        [
            ("class:bottom-toolbar.mode", f" {ctrl.mode.label} "),
            ("", f"│ {model} │ "),
            *suggesting,
            *([("class:bottom-toolbar.mode", serving), ("", " │ ")] if serving else []),
            *([("", f"{undo} │ ")] if undo else []),
            ("class:bottom-toolbar.key", "TAB"),
            ("", tail),
        ]
    )


class OnceIdle:
    """Runs ``action(app)`` once, when the prompt has been idle for ``delay`` seconds (no key, no redraw:
    ``on_render``, an ``after_render`` handler, re-arms the wait at every redraw) — work done in the time the
    person reads the prompt, never in the way of keys that keep coming. Drawn outside an event loop, there is
    nothing to wait with: ``at_once`` runs it then, else it is left to whoever needs it."""

    def __init__(
        self, delay: float, action: Callable[[Application[Any]], None], *, at_once: bool = False
    ) -> None:
        self.delay, self.action, self.at_once = delay, action, at_once
        self.done = False
        self._waiting: asyncio.TimerHandle | None = None

    def on_render(self, app: Application[Any]) -> None:
        if self.done:
            return
        if self._waiting is not None:
            self._waiting.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if self.at_once:
                self._run(app)
            return
        self._waiting = loop.call_later(self.delay, self._run, app)

    def _run(self, app: Application[Any]) -> None:
        if not self.done:
            self.done, self._waiting = True, None
            self.action(app)


class _ModeLexer:
    """Pygments Python highlighting in Python mode only.

    Building pygments' Python lexer compiles ~100 regular expressions (~30 ms of CPU, ~80 ms on the clock),
    more than a third of the start-up budget, so it is built in a background thread once the prompt is on
    screen and has been idle for ``LEXER_IDLE`` (no key, no redraw: ``on_render`` re-arms the wait at every
    redraw). Started with the first render, it would hold the GIL in the way of the keys, the first input and
    the exit of someone who types at once (a paste, type-ahead, one line and Ctrl-D). The prompt is drawn
    plain until it is ready and then redrawn highlighted.
    """

    def __init__(self, ctrl: Controller) -> None:
        self.ctrl = ctrl
        self._python: Lexer | None = None
        # the ``after_render`` handler: the prompt was drawn; load the lexer once it stays idle (see above)
        self.on_render = OnceIdle(LEXER_IDLE, self._start, at_once=True).on_render

    def __call__(self) -> Lexer | None:
        return self._python if self.ctrl.mode is Mode.PYTHON else None

    def _start(self, app: Application[Any] | None) -> None:
        threading.Thread(target=self._load, args=(app,), daemon=True).start()

    def _load(self, app: Application[Any] | None) -> None:
        try:
            from prompt_toolkit.lexers import PygmentsLexer  # after the first prompt (see above)
            from pygments.lexers.python import PythonLexer  # likewise

            self._python = PygmentsLexer(PythonLexer)
        except Exception:  # no highlighting is better than no prompt
            return
        if app is not None and app.is_running:
            app.invalidate()


class _Completers:
    """The completer for the current mode; ``completion`` loads on the first TAB, not at start-up."""

    def __init__(self, ctrl: Controller) -> None:
        self.ctrl = ctrl
        self._by_mode: dict[Mode, Completer] | None = None

    def __call__(self) -> Completer:
        if self._by_mode is None:
            from .completion import MentionCompleter, RuntimeCompleter, SlashCommandCompleter  # first TAB

            runtime = self.ctrl.runtime
            self._by_mode = {
                Mode.PYTHON: SlashCommandCompleter(RuntimeCompleter(runtime), _command_names),
                Mode.ASSISTANT: SlashCommandCompleter(MentionCompleter(runtime), _command_names),
            }
        return self._by_mode[self.ctrl.mode]


def _command_names() -> list[str]:
    from ..commands import names  # the command modules load on first use, not at start-up

    return names()


def build_prompt_session(
    ctrl: Controller,
    *,
    history: History | None = None,
    input: Input | None = None,
    output: Output | None = None,
) -> PromptSession[str]:
    """The main prompt: mode-dependent message, lexer and completer, our key bindings, history, toolbar and
    ghost text (drawn by prompt_toolkit on the last line, by ``GhostLineProcessor`` on the others)."""
    config = ctrl.config
    lexer = _ModeLexer(ctrl)
    session: PromptSession[str] = PromptSession(
        message=lambda: prompt_message(ctrl),
        multiline=True,
        prompt_continuation=continuation,
        key_bindings=merge_key_bindings([build_key_bindings(ctrl), ghost_bindings()]),
        input_processors=[ConditionalProcessor(GhostLineProcessor(), has_focus(DEFAULT_BUFFER) & ~is_done)],
        completer=DynamicCompleter(_Completers(ctrl)),
        complete_while_typing=False,
        lexer=DynamicLexer(lexer),
        history=history if history is not None else InMemoryHistory(),
        enable_history_search=False,
        search_ignore_case=True,
        bottom_toolbar=lambda: toolbar(ctrl),
        editing_mode=EditingMode.VI if config.editing_mode == "vi" else EditingMode.EMACS,
        color_depth=None if config.color else ColorDepth.DEPTH_1_BIT,
        style=STYLE if config.color else PLAIN_STYLE,
        tempfile_suffix=".py",
        input=input,
        output=output,
    )
    session.app.after_render += _start_up_done
    session.app.after_render += lexer.on_render
    return session


def _start_up_done(app: Application[Any]) -> None:
    """The first prompt is on screen: garbage collection, paused by ``cli.main`` for the start-up, resumes
    (before any user code runs)."""
    gc.enable()
