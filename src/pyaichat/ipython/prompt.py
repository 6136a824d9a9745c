"""Terminal IPython's two-mode prompt: TAB on an empty line toggles Python ⇄ Assistant.

Only used when the shell has a prompt_toolkit prompt (``shell.pt_app``). Everything is added beside IPython's
own machinery and removed again on unload:

- key bindings merged *after* IPython's (prompt_toolkit runs the last matching binding), each gated by a
  ``Condition`` so completion, indentation and Enter keep IPython's behaviour wherever ours do not apply:
  TAB on an empty buffer toggles the mode, Shift-TAB toggles and keeps the text (not while a completion menu
  is open), and in Assistant mode Enter sends the line (IPython's Enter would wait for "complete Python");
- ``shell.prompt_for_code`` is wrapped: in Assistant mode the submitted text comes back as ``%ai <question>``
  (``%%ai`` for several lines), so IPython runs, numbers and stores it like any magic;
- ``shell.prompts`` is wrapped to prefix the prompt with ``ai``; a bottom toolbar appears in Assistant mode;
- a proposal an outside agent submits from another thread is asked about when the prompt is idle: an empty
  line makes way for it (never a line being typed), and the wrapped ``prompt_for_code`` serves it before the
  next prompt (its code goes into that prompt, IPython's way).

The mode itself is the ``Controller``'s (``/ai``, ``/py`` and a proposal switch it too).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.terminal.prompts import Prompts
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import (
    Condition,
    emacs_insert_mode,
    has_completions,
    has_focus,
    has_selection,
    vi_insert_mode,
)
from prompt_toolkit.formatted_text import PygmentsTokens
from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
from prompt_toolkit.key_binding.key_bindings import KeyBindingsBase
from pygments.token import Token

from ..controller import Mode

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyPressEvent

    from ..controller import Controller

MODE_TOKEN = (Token.OutPrompt, "ai ")


def as_question(text: str) -> str:
    """What an Assistant-mode submission runs: ``%ai …`` (``%%ai`` cell when it has several lines). Magics
    (``%…``) and shell escapes (``!…``) typed in Assistant mode still run as themselves."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("%", "!")):
        return text
    if "\n" in stripped:
        return "%%ai\n" + stripped
    return "%ai " + stripped


class ModePrompts(Prompts):
    """IPython's prompts (whatever class the user configured) with an ``ai`` prefix in Assistant mode."""

    def __init__(self, shell: Any, inner: Prompts, controller: Controller) -> None:
        super().__init__(shell)
        self.inner = inner
        self.controller = controller

    def in_prompt_tokens(self) -> list[tuple[Any, str]]:
        tokens = list(self.inner.in_prompt_tokens())
        return [MODE_TOKEN, *tokens] if self.controller.mode is Mode.ASSISTANT else tokens

    def continuation_prompt_tokens(self, width: int | None = None, **kw: Any) -> Any:
        if width is None:
            width = self._width()
        method = self.inner.continuation_prompt_tokens
        params = inspect.signature(method).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):  # older Prompts take fewer keywords
            kw = {key: value for key, value in kw.items() if key in params}
        return method(width, **kw)

    def rewrite_prompt_tokens(self) -> Any:
        return self.inner.rewrite_prompt_tokens()

    def out_prompt_tokens(self) -> Any:
        return self.inner.out_prompt_tokens()


class _Interjection(Exception):
    """The idle prompt made way for a proposal from another thread."""


class TwoModePrompt:
    """Installs (and removes) the TAB mode toggle on a terminal IPython shell."""

    def __init__(self, shell: Any, controller: Controller, serve: Callable[[], None] | None = None) -> None:
        self.shell = shell
        self.controller = controller
        self.serve = serve or controller.serve_proposals  # asks about proposals from other threads
        self.installed = False
        self._bindings: KeyBindingsBase | None = None
        self._merged: KeyBindingsBase | None = None
        self._original_bindings: KeyBindingsBase | None = None
        self._toolbar_fn = self._toolbar  # one bound method, so "is ours?" checks work
        self._prompts: ModePrompts | None = None
        self._had_prompt_attr = False
        self._original_prompt: Any = None

    # -- install / uninstall ---------------------------------------------------------------------------------
    def install(self) -> bool:
        """Add bindings, prompt and input wrapper; ``False`` when the shell has no prompt_toolkit prompt."""
        pt_app = getattr(self.shell, "pt_app", None)
        if self.installed or pt_app is None:
            return self.installed
        self._bindings = self._build_bindings()
        self._original_bindings = pt_app.key_bindings
        self._merged = merge_key_bindings([self._original_bindings or KeyBindings(), self._bindings])
        pt_app.key_bindings = self._merged
        self._prompts = ModePrompts(self.shell, self.shell.prompts, self.controller)
        self.shell.prompts = self._prompts
        self._had_prompt_attr = "prompt_for_code" in vars(self.shell)
        self._original_prompt = self.shell.prompt_for_code
        self.shell.prompt_for_code = self._prompt_for_code
        self.controller.mode_listeners.append(self._on_mode)
        self.controller.proposals.on_waiting.append(self._wake)
        self.installed = True
        return True

    def uninstall(self) -> None:
        if not self.installed:
            return
        self.installed = False
        self.controller.set_mode(Mode.PYTHON)
        pt_app = getattr(self.shell, "pt_app", None)
        if pt_app is not None:
            if pt_app.key_bindings is self._merged:
                pt_app.key_bindings = self._original_bindings
            if pt_app.bottom_toolbar is self._toolbar_fn:
                pt_app.bottom_toolbar = None
        if self.shell.prompts is self._prompts and self._prompts is not None:
            self.shell.prompts = self._prompts.inner
        if vars(self.shell).get("prompt_for_code") == self._prompt_for_code:
            if self._had_prompt_attr:
                self.shell.prompt_for_code = self._original_prompt
            else:
                del self.shell.prompt_for_code
        if self._on_mode in self.controller.mode_listeners:
            self.controller.mode_listeners.remove(self._on_mode)
        if self._wake in self.controller.proposals.on_waiting:
            self.controller.proposals.on_waiting.remove(self._wake)

    # -- behaviour -------------------------------------------------------------------------------------------
    def _prompt_for_code(self) -> str:
        while True:
            self.serve()  # proposals submitted meanwhile: their code becomes the next prompt's text
            self._refresh_toolbar()  # /suggest may have turned suggestions on or off since the last prompt
            self.shell.pt_app.app.pre_run_callables.append(self._make_way)
            try:
                text = self._original_prompt()
            except _Interjection:
                continue
            break
        if self.controller.mode is Mode.ASSISTANT:
            return as_question(text)
        return text

    def _wake(self) -> None:
        """A proposal was submitted on another thread: have the prompt's thread look at it."""
        app = self.shell.pt_app.app
        loop = app.loop
        if loop is not None and app.is_running:
            loop.call_soon_threadsafe(self._make_way)

    def _make_way(self) -> None:
        """On the prompt's thread: an empty line makes way for waiting proposals (or the notice that one was
        withdrawn); a line being typed stays."""
        pt_app = self.shell.pt_app
        app = pt_app.app
        if not app.is_running or app.is_done:
            return
        if pt_app.default_buffer.text or not self.controller.proposals.needs_prompt:
            app.invalidate()  # the toolbar says whether one waits
            return
        try:
            app.exit(exception=_Interjection())
        except Exception:  # it was ending anyway (a key raced the wake-up)
            pass

    def _build_bindings(self) -> KeyBindings:
        kb = KeyBindings()
        shell_ready = has_focus(DEFAULT_BUFFER) & ~has_selection & (emacs_insert_mode | vi_insert_mode)
        empty = Condition(lambda: not self.shell.pt_app.default_buffer.text)
        assistant = Condition(lambda: self.controller.mode is Mode.ASSISTANT)

        @kb.add("tab", filter=shell_ready & empty)
        def _toggle(event: KeyPressEvent) -> None:
            """TAB on an empty line: switch Python ⇄ Assistant."""
            self.controller.toggle_mode()

        @kb.add("s-tab", filter=shell_ready & ~has_completions)
        def _toggle_keep(event: KeyPressEvent) -> None:
            """Shift-TAB: switch mode and keep the typed text."""
            self.controller.toggle_mode()

        @kb.add("enter", filter=shell_ready & assistant)
        def _send(event: KeyPressEvent) -> None:
            """Assistant mode: Enter sends the question (it need not be complete Python)."""
            buffer = event.current_buffer
            if buffer.complete_state:
                completion = buffer.complete_state.current_completion
                if completion:
                    buffer.apply_completion(completion)
                else:
                    buffer.cancel_completion()
                return
            buffer.validate_and_handle()

        return kb

    def _on_mode(self, mode: Mode) -> None:
        pt_app = getattr(self.shell, "pt_app", None)
        if pt_app is None:
            return
        self._refresh_toolbar()
        if not callable(pt_app.message):  # emacs mode computes the prompt once per input: refresh it
            pt_app.message = PygmentsTokens(self.shell.prompts.in_prompt_tokens())
        pt_app.app.invalidate()

    def _refresh_toolbar(self) -> None:
        """A bottom toolbar in Assistant mode, in Python mode while suggestions are on (it says which model
        gets what is typed) and while the session is served over MCP (it says so, and when an agent's
        proposal waits for an empty line); none otherwise, as IPython has it."""
        pt_app = getattr(self.shell, "pt_app", None)
        if pt_app is None:
            return
        ctrl = self.controller
        wanted = (
            ctrl.mode is Mode.ASSISTANT
            or bool(ctrl.config.suggest_model)
            or bool(ctrl.gate.serving or ctrl.proposals.waiting)
        )
        if wanted and pt_app.bottom_toolbar is None:
            pt_app.bottom_toolbar = self._toolbar_fn
        elif not wanted and pt_app.bottom_toolbar is self._toolbar_fn:
            pt_app.bottom_toolbar = None

    def _toolbar(self) -> list[tuple[str, str]]:
        ctrl = self.controller
        if ctrl.mode is Mode.PYTHON:
            from ..repl.ghost_text import toolbar_part  # prompt_toolkit only, like this module

            part = toolbar_part(ctrl.config, ctrl.suggester_if_any, ctrl.mode)
            tab = [("bold", "TAB"), ("", " on empty line: ask ")]
            return [("bold", " Python mode "), ("", "│ "), *part, *self._outside(), *tab]
        model = self.controller.config.model or "no model"
        return [
            ("bold", " Assistant mode "),
            ("", f"│ {model} │ "),
            *self._outside(),
            ("", "Enter: ask · "),
            ("bold", "TAB"),
            ("", " on empty line: back to Python · %ai /help "),
        ]

    def _outside(self) -> list[tuple[str, str]]:
        """While outside agents are served (``%ai /mcp on``): say so, and that a proposal of theirs waits for
        an empty line (it never interrupts a line being typed)."""
        ctrl = self.controller
        parts: list[tuple[str, str]] = []
        if ctrl.gate.serving:
            parts += [("bold", ctrl.gate.serving), ("", " │ ")]
        waiting = ctrl.proposals.waiting
        if waiting:
            plural = "s" if waiting > 1 else ""
            parts.append(("", f"{waiting} proposal{plural} waiting: clear the line to see │ "))
        return parts
