"""The interactive REPL proper: a prompt_toolkit ``PromptSession`` loop in front of the shared ``Controller``.

This module only reads input and renders events; what an input means is the controller's business. The loop
survives anything the user types: Ctrl-C returns to the prompt, an unexpected error inside pyaichat prints
one plain line, and only ``SystemExit`` from user code (or Ctrl-D on an empty line) leaves it.
"""

from __future__ import annotations

import gc
import sys
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
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.shortcuts import PromptSession
from prompt_toolkit.styles import Style

from ..controller import Controller, Decision, Mode
from ..errors import PyAIChatError
from .history import make_history
from .keys import build_key_bindings
from .questions import ask_line, key_app
from .suggest import GhostLineProcessor, GhostText, ghost_bindings, toolbar_part
from .typeahead import TypeAhead

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

    from ..agent.events import ApprovalRequiredEvent, Event
    from ..config import Config
    from ..controller import AssistantPort
    from ..mcptools.approval import Answer, Question
    from ..runtime import Runtime
    from .render import RichRenderer

PROMPTS = {Mode.PYTHON: ">>> ", Mode.ASSISTANT: "ai> "}
CONTINUATION = "... "

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
    on (Python mode), which model gets what is typed, and whether that leaves this machine; a proposal from an
    outside agent waiting for an empty line says so instead of the hint."""
    model = ctrl.config.model or "no model"
    suggesting = toolbar_part(ctrl.config, ctrl.suggester_if_any, ctrl.mode)
    hint = "@name: pin a value" if ctrl.mode is Mode.ASSISTANT else "Alt-Enter: newline"
    serving = ctrl.gate.serving  # outside agents can read this session (/mcp)
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
            ("class:bottom-toolbar.key", "TAB"),
            ("", tail),
        ]
    )


class _ModeLexer:
    """Pygments Python highlighting in Python mode only.

    Building pygments' Python lexer compiles ~100 regular expressions (~80 ms), more than a third of the
    start-up budget, so it is built in a background thread once the first prompt is on screen (``on_render``;
    started during that render it would compete with it for the GIL); the prompt is drawn plain until it is
    ready and then redrawn highlighted.
    """

    def __init__(self, ctrl: Controller) -> None:
        self.ctrl = ctrl
        self._python: Lexer | None = None
        self._loading = False

    def __call__(self) -> Lexer | None:
        return self._python if self.ctrl.mode is Mode.PYTHON else None

    def on_render(self, app: Application[Any]) -> None:
        """``after_render`` handler: the first prompt has been written out; start loading the lexer."""
        if not self._loading:
            self._loading = True
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


def ask_decision(*, input: Input | None = None, output: Output | None = None, color: bool = True) -> Decision:
    """One key: ``r``/``y`` run, ``e`` edit, ``n``/Esc/Ctrl-D no; Ctrl-C is no and raises
    ``KeyboardInterrupt`` (the turn that asked stops there). Other keys are ignored."""
    return _run_decision(decision_app(input=input, output=output, color=color))


def _run_decision(app: Application[str]) -> Decision:
    result = app.run()
    return result if result in ("run", "edit", "no") else "no"  # type: ignore[return-value]


def decision_app(
    *, input: Input | None = None, output: Output | None = None, color: bool = True
) -> Application[str]:
    """The one-key question of ``ask_decision``, not yet running (``withdraw`` can end it from outside)."""
    keys = (("r", "run"), ("y", "run"), ("e", "edit"), ("n", "no"), ("c-d", "no"))
    style = STYLE if color else PLAIN_STYLE
    question = ("Run it? ", "[r]un / [e]dit / [n]o: ")
    return key_app(
        *question, keys, "no", input=input, output=output, style=style, color=color, interrupt=True
    )


def ask_arguments(
    tool: str, arguments: dict[str, Any], *, input: Input | None = None, output: Output | None = None
) -> dict[str, Any] | None:
    """New arguments for a tool call, edited as one line of JSON (Enter accepts, Ctrl-C gives up: ``None``).
    Text that is not a JSON object is said and asked again."""
    import json  # with the first tool call to edit

    text = json.dumps(arguments, ensure_ascii=False)
    while True:
        try:
            text = ask_line(f"{tool} arguments (JSON)> ", default=text, input=input, output=output)
        except (KeyboardInterrupt, EOFError):
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            print(f"That is not JSON ({exc}); edit it again, or Ctrl-C to give up.")
            continue
        if isinstance(value, dict):
            return value
        print("The arguments are one JSON object ({...}); edit them again, or Ctrl-C to give up.")


# -- the front end -------------------------------------------------------------------------------------------
class ReplFrontEnd:
    """The controller's ``FrontEnd`` in a terminal: rich rendering, approval prompt, pre-filled input."""

    interactive = True
    remembers = True

    def __init__(
        self,
        config: Config,
        *,
        console: Console | None = None,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.color = config.color  # fixed for the session, like the prompt's colours and keys
        self._console = console
        self._renderer: RichRenderer | None = None
        self._input = input
        self._output = output
        self._next_input: str | None = None
        # the proposal being decided, and its question; proposals no one waits for any more
        self._asking: tuple[str, Application[str]] | None = None
        self._withdrawn: set[str] = set()
        # keys typed while output is drawn wait, unechoed, for the next prompt (not with a test's own input)
        self._typeahead = TypeAhead() if input is None else None
        self._typed_ahead = ""  # taken out of a question's way, for the next prompt

    @property
    def renderer(self) -> RichRenderer:
        if self._renderer is None:
            from .render import RichRenderer  # rich: with the first event, not at start-up

            self._renderer = RichRenderer(self._console, color=self.color)
        return self._renderer

    def emit(self, event: Event) -> None:
        if self._typeahead is not None:
            self._typeahead.hold()
        self.renderer.render(event)

    def finish(self, *, interrupted: bool = False) -> None:
        """End of one input: stop live output, keep a partial answer; the held keys go to the next prompt."""
        try:
            if self._renderer is not None or interrupted:
                self.renderer.close(interrupted=interrupted)
        finally:
            self._give_back_terminal()

    def _give_back_terminal(self, *, keep_keys: bool = True) -> None:
        """The terminal as the person's code and other prompts expect it (echo, line editing). Before a
        question (``keep_keys=False``) the keys typed ahead are taken out of its way, for the next prompt."""
        if self._typeahead is not None:
            if not keep_keys:
                self._typed_ahead += self._typeahead.take()
            self._typeahead.release()

    def decide(self, proposal: ApprovalRequiredEvent) -> Decision:
        renderer = self.renderer
        if proposal.call_id not in renderer.shown_proposals:
            renderer.render(proposal)
        renderer.pause()
        self._give_back_terminal(keep_keys=False)  # approved code may read input()
        app = decision_app(input=self._input, output=self._output, color=self.color)
        call_id = proposal.call_id
        self._asking = (call_id, app)
        # withdrawn before the question was up: it closes as it opens
        app.pre_run_callables.append(lambda: _exit_quietly(app, "no") if call_id in self._withdrawn else None)
        try:
            return _run_decision(app)
        finally:
            self._asking = None

    def withdraw(self, call_id: str) -> None:
        """No one waits for that proposal any more (called from another thread): close its question."""
        self._withdrawn.add(call_id)
        asking = self._asking
        if asking is None or asking[0] != call_id:
            return
        app = asking[1]
        loop = app.loop
        if loop is not None and app.is_running:
            loop.call_soon_threadsafe(_exit_quietly, app, "no")

    def edit_arguments(self, proposal: ApprovalRequiredEvent) -> dict[str, Any] | None:
        self._give_back_terminal(keep_keys=False)
        return ask_arguments(
            proposal.tool, dict(proposal.arguments or {}), input=self._input, output=self._output
        )

    def answer_question(self, question: Question) -> Answer:
        """An MCP server's question (its panel is on screen): answer, decline or cancel, then its fields."""
        from .form import ask_answer  # with the first question

        self.renderer.pause()
        self._give_back_terminal(keep_keys=False)
        return ask_answer(question, input=self._input, output=self._output, color=self.color)

    def set_next_input(self, code: str) -> None:
        """Pre-fill the next prompt with ``code``."""
        self._next_input = code

    def pop_next_input(self) -> str:
        """What the next prompt starts with: code put there to edit, else keys typed ahead of a question."""
        code, self._next_input = self._next_input, None
        typed, self._typed_ahead = self._typed_ahead, ""
        return code if code is not None else typed


def _exit_quietly(app: Application[Any], result: Any = None, exception: BaseException | None = None) -> None:
    """End ``app`` unless it is ending already (a key and a wake-up may race)."""
    if app.is_running and not app.is_done:
        try:
            if exception is not None:
                app.exit(exception=exception)
            else:
                app.exit(result=result)
        except Exception:  # it was ending after all
            pass


class _Interjection(Exception):
    """The idle prompt made way for a proposal from another thread (an outside agent's)."""


class Repl:
    """The read–handle loop. ``run()`` returns the exit status; ``SystemExit`` from user code propagates.

    ``runtime`` and ``assistant`` are built by the entry point (``cli``, ``attach``)."""

    def __init__(
        self,
        config: Config,
        runtime: Runtime,
        *,
        assistant: AssistantPort,
        input: Input | None = None,
        output: Output | None = None,
        console: Console | None = None,
        history: History | None = None,
    ) -> None:
        self.frontend = ReplFrontEnd(config, console=console, input=input, output=output)
        self.ctrl = Controller(config, runtime, self.frontend, assistant=assistant)
        self.prompt = build_prompt_session(
            self.ctrl,
            history=history if history is not None else make_history(self._mask_for_disk),
            input=input,
            output=output,
        )
        ctrl = self.ctrl
        self.ghost = GhostText(ctrl.active_suggester, lambda: ctrl.mode is Mode.PYTHON)
        self.ghost.attach(self.prompt.default_buffer)
        self.prompt.auto_suggest = self.ghost  # prompt_toolkit's own question after a key: the same answer
        # What --resume keeps is written once the next prompt is on screen, not before it.
        self.ctrl.lasting.defer = True
        self.prompt.app.after_render += lambda app: self.ctrl.lasting.idle()
        # An outside agent's proposal is asked about when the prompt is idle (an empty line).
        self.ctrl.proposals.on_waiting.append(self._wake)
        self.prompt.default_buffer.on_text_changed += lambda buffer: self._make_way()
        self._question_hinted = False  # a question typed at >>> gets the hint once a session

    def _mask_for_disk(self, line: str) -> str:
        """What the history file keeps of ``line``: masked as the resume file masks it, with the current
        settings' secret names and patterns."""
        from ..capabilities.redact import masker_for  # with the first line stored, not at start-up

        return masker_for(self.ctrl.config).mask_text(line)

    def read(self) -> str:
        """One complete input (raises ``KeyboardInterrupt`` for Ctrl-C, ``EOFError`` for Ctrl-D, and
        ``_Interjection`` when the idle prompt makes way for a proposal).

        While the prompt is up, output from background threads (e.g. the assistant warming up its client)
        is printed above it instead of through it."""
        with patch_stdout(raw=True):
            return self.prompt.prompt(default=self.frontend.pop_next_input(), pre_run=self._make_way)

    def _wake(self) -> None:
        """A proposal was submitted (on another thread): have the prompt's thread look at it."""
        app = self.prompt.app
        loop = app.loop
        if loop is not None and app.is_running:
            loop.call_soon_threadsafe(self._make_way)
        # not at the prompt: the loop asks about it before the next one

    def _make_way(self) -> None:
        """On the prompt's thread: an empty line makes way for waiting proposals (or the notice that one was
        withdrawn); a line being typed is never interrupted (the toolbar says one waits, and is redrawn
        when that changes)."""
        app = self.prompt.app
        if not app.is_running:
            return
        if self.prompt.default_buffer.text or not self.ctrl.proposals.needs_prompt:
            app.invalidate()
        else:
            _exit_quietly(app, exception=_Interjection())

    def execute(self, text: str) -> None:
        """Handle one input; nothing but ``SystemExit`` escapes."""
        self._guarded(lambda: self._handle(text))

    def _handle(self, text: str) -> None:
        as_python = self.ctrl.mode is Mode.PYTHON and not text.lstrip().startswith("/")
        self.ctrl.handle(text)
        if as_python and not self._question_hinted:
            from ..prose import QUESTION_HINT, looks_like_question  # only after an input

            if looks_like_question(text):  # a question typed at >>> failed as Python: say once where to ask
                self._question_hinted = True
                self.ctrl.notice(QUESTION_HINT)

    def serve_proposals(self) -> None:
        """Ask about the proposals outside agents submitted meanwhile (and say which were withdrawn); nothing
        but ``SystemExit`` escapes."""
        if self.ctrl.proposals.needs_prompt:
            self._guarded(self.ctrl.serve_proposals)

    def _guarded(self, action: Callable[[], None]) -> None:
        """Run ``action``: Ctrl-C stops it, an error is one line, the output is finished either way."""
        interrupted = False
        self.ghost.quiet()  # no suggestion reads the session while the input runs
        try:
            action()
        except SystemExit:
            raise
        except KeyboardInterrupt:
            interrupted = True
        except PyAIChatError as exc:
            self._report(str(exc), kind="pyaichat")
        except Exception as exc:
            self._report(
                f"pyaichat hit an internal error ({type(exc).__name__}: {exc}); your session is intact.",
                kind="internal",
            )
        finally:
            try:
                self.frontend.finish(interrupted=interrupted)
            except Exception:
                pass

    def _report(self, message: str, kind: str) -> None:
        try:
            from ..agent.events import ErrorEvent  # pydantic: loads with the first event, not at start-up

            self.frontend.emit(ErrorEvent(message=message, kind=kind))
        except Exception:
            print(f"Error: {message}", file=sys.stderr)

    def run(self) -> int:
        try:
            return self._loop()
        finally:
            self.ctrl.close()

    def _loop(self) -> int:
        while not self.ctrl.should_exit:
            try:
                self.serve_proposals()
                text = self.read()
            except _Interjection:
                continue  # the loop asks about the proposal now
            except KeyboardInterrupt:
                self.ctrl.cancel_input()  # Ctrl-C at the prompt: drop the buffer, keep the session
                continue
            except EOFError:
                break
            except Exception as exc:  # a fault in the prompt itself must not end the session
                self._report(
                    f"pyaichat's prompt hit an internal error ({type(exc).__name__}: {exc}).", "internal"
                )
                continue
            try:
                self.execute(text)
            except KeyboardInterrupt:  # a second Ctrl-C while finishing the output
                continue
        return 0
