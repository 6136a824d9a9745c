"""The interactive REPL proper: a prompt_toolkit ``PromptSession`` loop (``prompt_session``) in front of the
shared ``Controller``, and the controller's ``FrontEnd`` in a terminal.

This module only reads input and renders events; what an input means is the controller's business. The loop
survives anything the user types: Ctrl-C returns to the prompt, an unexpected error inside pyaichat prints
one plain line, and only ``SystemExit`` from user code (or Ctrl-D on an empty line) leaves it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.history import History
from prompt_toolkit.patch_stdout import patch_stdout

from ..checkpoints.resumed import Resumed
from ..controller import Controller, Mode
from ..errors import PyAIChatError, internal_error
from ..ports import BaseFrontEnd
from ..printable import show
from .ghost_text import GhostText, RaisedLines
from .history import make_history
from .prompt_session import OnceIdle, build_prompt_session
from .questions import ask_arguments, decision_app, run_decision
from .typeahead import TypeAhead

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

    from ..agent.events import Event, PageEvent
    from ..checkpoints.keeper import Checkpoints
    from ..checkpoints.link import Link
    from ..configuration.config import Config
    from ..mcptools.approval import Answer, Question
    from ..ports import Place
    from ..proposal import Decision, Proposal
    from ..runtime import Runtime
    from .render import RichRenderer


PREPARE_IDLE = 0.02  # seconds of an idle first prompt before the first input's modules load
# seconds of an idle prompt before litellm starts loading (with a model configured: the first answer then does
# not wait for it), and how long after a key the load still gives way to the person
LITELLM_IDLE = 1.0
KEYS_RECENT = 0.3


# -- the front end -------------------------------------------------------------------------------------------
class ReplFrontEnd(BaseFrontEnd):
    """The controller's ``FrontEnd`` in a terminal: rich rendering, approval prompt, pre-filled input."""

    interactive = True
    remembers = True
    place: Place = "repl"
    where = "pyaichat REPL"

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
        # the prompt's: drop code from the input being edited, if it is still as placed (another thread)
        self.take_back: Callable[[str], None] | None = None

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

    @property
    def last_page(self) -> PageEvent | None:
        return self._renderer.last_page if self._renderer is not None else None

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

    def decide(self, proposal: Proposal) -> Decision:
        renderer = self.renderer
        if proposal.call_id not in renderer.shown_proposals:
            from ..agent.events import ApprovalRequiredEvent  # loaded with the proposal

            renderer.render(ApprovalRequiredEvent(proposal=proposal))
        renderer.pause()
        self._give_back_terminal(keep_keys=False)  # approved code may read input()
        app = decision_app(input=self._input, output=self._output, color=self.color, choices=proposal.choices)
        call_id = proposal.call_id
        self._asking = (call_id, app)
        # withdrawn before the question was up: it closes as it opens
        app.pre_run_callables.append(lambda: _exit_quietly(app, "no") if call_id in self._withdrawn else None)
        try:
            return run_decision(app)
        finally:
            self._asking = None

    def withdraw(self, call_id: str, code: str | None = None) -> None:
        """No one waits for that proposal any more (called from another thread): close its question; code it
        placed in the next input leaves it unless the person changed it (``take_back``, the prompt's)."""
        if code is not None:
            if self._next_input == code:  # not on the screen yet
                self._next_input = None
            elif self.take_back is not None:
                self.take_back(code)
            return
        self._withdrawn.add(call_id)
        asking = self._asking
        if asking is None or asking[0] != call_id:
            return
        app = asking[1]
        loop = app.loop
        if loop is not None and app.is_running:
            loop.call_soon_threadsafe(_exit_quietly, app, "no")

    def edit_arguments(self, proposal: Proposal) -> dict[str, Any] | None:
        self._give_back_terminal(keep_keys=False)
        return ask_arguments(proposal.tool, dict(proposal.arguments), input=self._input, output=self._output)

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


def make_repl(
    runtime: Runtime,
    *,
    input: Input | None = None,
    output: Output | None = None,
    console: Console | None = None,
    history: History | None = None,
    supervised: Supervised | str | None = None,
) -> Repl:
    """The terminal REPL over ``runtime``: its front end and the session assembled around it. ``supervised``:
    the link to the supervisor that keeps checkpoints (``checkpoints.supervisor.start``), or why there is
    none."""
    from ..assemble import assemble  # the session's parts: after the early prompt, with prompt_toolkit

    frontend = ReplFrontEnd(runtime.config, console=console, input=input, output=output)
    repl = Repl(assemble(runtime, frontend), frontend, input=input, output=output, history=history)
    if isinstance(supervised, str):
        repl.ctrl.checkpoints_why = supervised
    elif supervised is not None:
        repl.keep_checkpoints(*supervised)
    return repl


Supervised = tuple["Link", int]


class _PromptLines:
    """The prompt's history of typed lines (newest first) and the keys typed ahead that it has read, as
    ``checkpoints`` carries them across a jump."""

    def __init__(self, session: Any, frontend: ReplFrontEnd) -> None:
        self.session = session
        self.frontend = frontend

    def typed(self) -> Any:
        from prompt_toolkit.input.typeahead import get_typeahead

        return (get_typeahead(self.session.app.input), self.frontend._typed_ahead)

    def retype(self, keys: Any) -> None:
        from prompt_toolkit.input.typeahead import store_typeahead

        presses, text = keys
        store_typeahead(self.session.app.input, list(presses))
        self.frontend._typed_ahead += text

    def lines(self) -> list[str]:
        return list(self.session.history._loaded_strings)

    def replace(self, lines: list[str]) -> None:
        history = self.session.history
        history._loaded_strings, history._loaded = list(lines), True
        try:
            self.session.default_buffer.reset()  # its working lines are read from the history again
        except Exception:
            pass


class _Interjection(Exception):
    """The idle prompt made way for a proposal from another thread (an outside agent's)."""


class Repl:
    """The read–handle loop over an assembled session (``make_repl``). ``run()`` returns the exit status;
    ``SystemExit`` from user code propagates."""

    def __init__(
        self,
        ctrl: Controller,
        frontend: ReplFrontEnd,
        *,
        input: Input | None = None,
        output: Output | None = None,
        history: History | None = None,
    ) -> None:
        self.frontend = frontend
        self.ctrl = ctrl
        self.prompt = build_prompt_session(
            self.ctrl,
            history=history if history is not None else make_history(self._mask_for_disk),
            input=input,
            output=output,
        )
        self.ghost = GhostText(
            ctrl.active_suggester,
            lambda: ctrl.mode is Mode.PYTHON,
            raised=RaisedLines(lambda: ctrl.runtime.history),
        )
        self.ghost.attach(self.prompt.default_buffer)
        self.prompt.auto_suggest = self.ghost  # prompt_toolkit's own question after a key: the same answer
        # What --resume keeps is written once the next prompt is on screen, not before it.
        self.ctrl.resume_file.defer = True
        self.prompt.app.after_render += lambda app: self.ctrl.resume_file.idle()
        # What the first input needs loads in the time the person spends reading the first prompt, not after
        # their first Enter (``Controller.prepare``); keys typed ahead go first.
        self.prompt.app.after_render += OnceIdle(PREPARE_IDLE, self._prepare_now).on_render
        # With a model configured, litellm loads in the time the person spends reading or thinking at the
        # prompt (not when it first shows), giving way to them: ``_busy``.
        self.prompt.app.after_render += OnceIdle(LITELLM_IDLE, self._preload_now).on_render
        self._last_key = 0.0  # when the person last typed at the prompt
        self._running = False  # an input of theirs runs
        self.ctrl.assistant.give_way_to(self._busy)
        # An outside agent's proposal is asked about when the prompt is idle (an empty line).
        self.ctrl.proposals.on_waiting.append(self._wake)
        frontend.take_back = self._take_back
        self.checkpoints: Checkpoints | None = None  # ``keep_checkpoints``
        self.prompt.default_buffer.on_text_changed += lambda buffer: self._make_way()
        self.prompt.default_buffer.on_text_changed += self._typed
        self.prompt.default_buffer.on_cursor_position_changed += self._typed

    def _typed(self, buffer: Any) -> None:
        self._last_key = time.monotonic()

    def _busy(self) -> bool:
        """Whether the person is busy (a key in the last ``KEYS_RECENT`` seconds, or an input of theirs
        running): litellm's background load gives way meanwhile (asked from its thread)."""
        return self._running or time.monotonic() - self._last_key < KEYS_RECENT

    def _preload_now(self, app: Application[Any]) -> None:
        try:
            self.ctrl.assistant.preload()
        except Exception:  # an optimisation only: the first question loads it anyway
            pass

    def keep_checkpoints(self, link: Link, pgid: int) -> None:
        """Checkpoints of this session, kept by the supervisor at the other end of ``link``."""
        from ..checkpoints.keeper import Checkpoints  # only where a supervisor keeps them

        self.checkpoints = Checkpoints(
            self.ctrl, link, pgid, prompt=_PromptLines(self.prompt, self.frontend), revive=self._after_resume
        )
        self.ctrl.checkpoints = self.checkpoints

    def _after_resume(self) -> None:
        """In a session resumed from a checkpoint: keys typed ahead, and code put in the next input, were the
        forked process's; they are not run again here."""
        from prompt_toolkit.input.typeahead import clear_typeahead

        from ..checkpoints.services import KEPT  # loaded with the checkpoints

        clear_typeahead(self.prompt.app.input)
        self.frontend._next_input, self.frontend._typed_ahead = None, ""
        if self.frontend._typeahead is not None:
            self.frontend._typeahead = TypeAhead()
        # a live display drawn when the copy was taken (inside an answer) is not this session's to close
        KEPT.append(self.frontend._renderer)
        self.frontend._renderer = None

    def _prepare_now(self, app: Application[Any]) -> None:
        try:
            self.ctrl.prepare()
            if self.checkpoints is not None:
                self.checkpoints.prepare()
        except Exception:  # only a head start: the first input loads what it needs anyway
            pass

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

    def _take_back(self, code: str) -> None:
        """A withdrawn proposal's code leaves the input it was placed in, unless the person changed it (from
        another thread: done on the prompt's)."""
        app = self.prompt.app
        loop = app.loop
        buffer = self.prompt.default_buffer

        def drop() -> None:
            if buffer.text == code:
                buffer.reset()
            self._make_way()

        if loop is not None and app.is_running:
            loop.call_soon_threadsafe(drop)

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
        self._running = True
        try:
            self._guarded(lambda: self._handle(text))
        finally:
            self._running = False

    def _handle(self, text: str) -> None:
        as_python = self.ctrl.kind(text) == "python"
        self.ctrl.handle(text)
        if as_python:  # a question typed at >>> failed as Python: say once where to ask
            self.ctrl.hint_if_question(text)

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
            self._report(internal_error(exc), kind="internal")
        finally:
            try:
                self.frontend.finish(interrupted=interrupted)
            except Exception:
                pass

    def _seam(self, checkpoints: Checkpoints) -> None:
        try:
            checkpoints.seam()
        except (Resumed, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # a checkpoint not taken must not end the session
            self._report(internal_error(exc, "Checkpoints"), "internal")

    def _report(self, message: str, kind: str) -> None:
        try:
            from ..agent.events import ErrorEvent  # with the first event, not at start-up

            self.frontend.emit(ErrorEvent(message=message, kind=kind))
        except Exception:
            show(f"Error: {message}", file=sys.stderr)

    def run(self) -> int:
        try:
            return self._loop()
        finally:
            self.ctrl.close()

    def _loop(self) -> int:
        while not self.ctrl.should_exit:
            try:
                if self.checkpoints is not None:  # between inputs: the copy before the next one
                    self._seam(self.checkpoints)
                self.serve_proposals()
                text = self.read()
            except _Interjection:
                continue  # the loop asks about the proposal now
            except Resumed:
                continue  # resumed from a copy taken inside an input: back at the prompt
            except KeyboardInterrupt:
                self.ctrl.cancel_input()  # Ctrl-C at the prompt: drop the buffer, keep the session
                continue
            except EOFError:
                break
            except Exception as exc:  # a fault in the prompt itself must not end the session
                self._report(internal_error(exc, "pyaichat's prompt"), "internal")
                continue
            try:
                self.execute(text)
            except KeyboardInterrupt:  # a second Ctrl-C while finishing the output
                continue
            except Resumed:
                continue
        return 0
