"""One pyaichat core per IPython shell: load, answer, unload.

``load`` builds a ``Session`` over ``shell.user_ns`` (the very same dict, so capabilities see what IPython
sees), one ``Controller`` with the IPython front end, and wires the magics, the history callbacks, the
``?``-keeping input transformer and (terminal only) the two-mode prompt. ``unload`` removes each of them
again; loading twice returns the existing extension.
"""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..agent import llm
from ..agent.events import ErrorEvent, StateEvent
from ..assemble import assemble
from ..configuration.config import Config, load_config
from ..configuration.settings import SETTINGS
from ..errors import ConfigError, PyAIChatError, internal_error
from ..printable import show
from ..runtime.cells import is_question, shell_runtime
from .frontend import IPythonFrontEnd
from .magics import AIMagics
from .transform import keep_question_mark

if TYPE_CHECKING:
    from .magics import Request

# c.PyAIChat.model = "…" in ipython_config.py, or --PyAIChat.model=… on IPython's command line
CONFIG_SECTION = "PyAIChat"

_extensions: weakref.WeakKeyDictionary[Any, Extension] = weakref.WeakKeyDictionary()


def shell_overrides(shell: Any) -> dict[str, Any]:
    """Settings from IPython's configuration (``c.PyAIChat.<setting>``); they win over file and env."""
    try:
        section = shell.config.get(CONFIG_SECTION, {})
    except Exception:
        return {}
    return {key: value for key, value in dict(section).items() if key in SETTINGS}


class Extension:
    """The pyaichat core attached to one IPython shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.config_error: ConfigError | None = None
        config = self._load_config()
        self.runtime, self.recorder = shell_runtime(shell, config)
        self.session = self.runtime.session
        self.frontend = IPythonFrontEnd(shell, config)
        self.controller = assemble(self.runtime, self.frontend)
        self.controller.checkpoints_why = (
            "No checkpoints in IPython: IPython runs the session's loop, not pyaichat, so /undo takes back "
            "the last approved proposal only (python -m pyaichat keeps a checkpoint before every input)."
        )
        self.magics = AIMagics(shell, self)
        self.prompt: Any = None
        self.suggestions: Any = None

    # -- configuration ---------------------------------------------------------------------------------------
    def _load_config(self, warn: Any = None) -> Config:
        try:
            config = load_config(shell_overrides(self.shell), warn=warn)
        except ConfigError as exc:  # keep IPython usable; every %ai repeats the sentence until it is fixed
            self.config_error = exc
            return Config()
        self.config_error = None
        return config

    def _retry_config(self) -> None:
        """A broken configuration may have been fixed (e.g. ``%env``) since the extension was loaded."""
        if self.config_error is None:
            return
        config = self._load_config(warn=lambda sentence: None)  # said once, when the extension loaded
        if self.config_error is not None:
            raise UsageError(str(self.config_error))
        self.controller.settings.replace(config)  # every part reads it there

    # -- wiring ----------------------------------------------------------------------------------------------
    def install(self) -> None:
        shell = self.shell
        shell.register_magics(self.magics)
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_run_cell", self.post_run_cell)
        if keep_question_mark not in shell.input_transformers_cleanup:
            shell.input_transformers_cleanup.append(keep_question_mark)
        if getattr(shell, "pt_app", None) is not None:  # a terminal IPython (not a kernel or a notebook)
            from .prompt import TwoModePrompt  # prompt_toolkit: terminal only

            self.prompt = TwoModePrompt(shell, self.controller, serve=self.serve_proposals)
            self.prompt.install()
            from .ghost_text import IPythonSuggestions  # terminal only

            self.suggestions = IPythonSuggestions(shell, self.controller)
            self.suggestions.install()
        if self.config_error is not None:
            show(f"pyaichat: {self.config_error}", file=sys.stderr)

    def uninstall(self) -> None:
        shell = self.shell
        if self.suggestions is not None:
            self.suggestions.uninstall()
            self.suggestions = None
        service = self.controller.mcp(create=False)
        if service is not None:  # it served: stop (a served session needs its hooks)
            service.stop()
        if self.prompt is not None:
            self.prompt.uninstall()
            self.prompt = None
        manager = shell.magics_manager
        for kind in ("line", "cell"):
            handler = manager.magics[kind].get("ai")
            if getattr(handler, "__self__", None) is self.magics:
                del manager.magics[kind]["ai"]
        if manager.registry.get(type(self.magics).__name__) is self.magics:
            del manager.registry[type(self.magics).__name__]
        for name, callback in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                shell.events.unregister(name, callback)
            except ValueError:
                pass
        while keep_question_mark in shell.input_transformers_cleanup:
            shell.input_transformers_cleanup.remove(keep_question_mark)

    # -- each cell: recorded into the session's history; the one that settles a proposal --------------------
    # A proposal goes into the next input; the cell run after it settles it on the one proposal path
    # (``proposals.Proposals``): unchanged, it is approved (checkpointed for /undo, journaled for /save);
    # changed, it is the user's own input; a question instead of it declines it.
    def pre_run_cell(self, info: Any) -> None:
        self.controller.gate.enter()  # outside agents' calls (/mcp) wait while the cell runs
        self.recorder.pre_run_cell(info)
        source = getattr(info, "raw_cell", None) or ""
        if is_question(source):
            self.controller.proposals.drop_placed()
        else:
            self.controller.proposals.cell_starting(source)

    def post_run_cell(self, result: Any) -> None:
        try:
            self._after_cell(result)
        finally:
            self.controller.gate.leave()

    def _after_cell(self, result: Any) -> None:
        self.recorder.post_run_cell(result)
        number = getattr(result, "execution_count", None)
        history = self.session.history
        entry = history[-1] if history and history[-1].number == number else None
        self.controller.proposals.cell_finished(number, entry)
        if self.prompt is not None:  # the terminal's two-mode prompt: a question typed as a cell gets a hint
            self.controller.hint_if_question(getattr(getattr(result, "info", None), "raw_cell", None) or "")

    def serve_proposals(self) -> None:
        """The terminal prompt is idle: ask about proposals submitted from other threads (an outside agent's);
        their code goes into the next input, as the assistant's does."""
        if self.controller.proposals.needs_prompt:
            self._run(self.controller.serve_proposals)

    # -- asking ----------------------------------------------------------------------------------------------
    def answer(self, request: Request) -> None:
        """Run one ``%ai`` request: a slash command, or a question with per-question overrides."""
        self._retry_config()
        if request.text.startswith("/"):
            if request.overrides:
                raise UsageError("--model and --max-steps apply to a question, not to a slash command.")
            self._run(lambda: self.controller.handle(request.text))
            return
        try:  # this question's own configuration; the session's stays as it is
            config = self.controller.config
            overrides = dict(request.overrides)
            if "model" in overrides:  # another provider's model does not go to this one's base (/model)
                config = config.for_model(overrides.pop("model"))
            config = config.replace(**overrides)
        except ConfigError as exc:
            key = exc.key or ""
            value = request.overrides.get(key)
            raise UsageError(f"%ai cannot use {value!r} for --{key.replace('_', '-')}.") from None
        if not config.model:
            from ..commands import all_commands  # the sentence names /model: worded as typed here
            from ..commands.wording import worded

            all_commands()
            raise UsageError(worded(llm.NO_MODEL, self.frontend.place))
        self.frontend.begin()
        self._run(lambda: self._ask(request.text, config))

    def _ask(self, question: str, config: Config) -> None:
        if not llm.is_loaded():
            self.frontend.emit(StateEvent(state="starting", detail="loading the model library"))
            llm.load_litellm()  # waits for the warm-up thread; Ctrl-C ends the wait, not the import
        self.controller.ask(question, config)

    def _run(self, action: Any) -> None:
        """Run ``action``; Ctrl-C stops the answer (keeping what arrived), any error is one line."""
        interrupted = False
        try:
            action()
        except KeyboardInterrupt:
            interrupted = True
        except PyAIChatError as exc:
            self.frontend.emit(ErrorEvent(message=str(exc)))
        except Exception as exc:  # a bug in pyaichat must not look like a failure of the user's cell
            self.frontend.emit(ErrorEvent(message=internal_error(exc), kind="internal"))
        finally:
            self.frontend.close(interrupted=interrupted)


def load(shell: Any) -> Extension:
    """Attach pyaichat to ``shell``; a second load returns the extension already attached."""
    extension = _extensions.get(shell)
    if extension is None:
        extension = Extension(shell)
        extension.install()
        _extensions[shell] = extension
    return extension


def unload(shell: Any) -> None:
    extension = _extensions.pop(shell, None)
    if extension is not None:
        extension.uninstall()


def get(shell: Any) -> Extension | None:
    """The extension attached to ``shell``, if loaded (for tests and other front ends)."""
    return _extensions.get(shell)
