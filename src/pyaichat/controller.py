"""Modes and input dispatch, shared by the interactive REPL, piped mode and the IPython extension.

The front ends only read input and render events; what an input *means* (a slash command, Python code, a
question) is decided here, once. The controller is given what it dispatches to, and keeps none of their work:

- ``runtime``, where the user's session lives, and ``assistant``, which answers questions: both built by the
  entry point (``cli``, ``attach``, the IPython extension) and handed over at construction;
- ``settings`` (the runtime's ``config.Settings``, the session's one holder of its configuration): the
  controller alone replaces it (``/model``, ``/suggest``; IPython once a broken configuration is fixed), and
  every part reads it there; a question may have its own (``ask(question, config=...)``: ``%ai --model M``);
- ``proposals`` (the ``proposals`` package): every proposal's life, whoever proposes it: preview, the person's
  decision, the run, the journal, ``/undo``;
- ``resume_file`` (``resume_file.py``): what ``--resume`` brings back, written off the keystroke path;
- ``journal``: the questions and approved code, for ``/save``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .agent.assistant import Front
from .errors import PyAIChatError, internal_error
from .journal import Journal
from .mcpserve.gate import SessionGate
from .modes import Kind, Mode
from .proposals import Proposals
from .resume_file import ResumeFile

if TYPE_CHECKING:
    from collections.abc import Callable

    from .agent.assistant import Assistant
    from .agent.events import Event
    from .agent.suggest import Suggester
    from .configuration.config import Config
    from .mcptools.approval import Answer, Question
    from .ports import FrontEnd, Serving, Undo
    from .records import ExecResult
    from .runtime import Runtime

__all__ = ["Controller", "Mode"]


class Controller:
    """Routes each complete input to a slash command, the Python session or the assistant."""

    def __init__(
        self,
        runtime: Runtime,
        frontend: FrontEnd,
        *,
        assistant: Assistant,
        serving: Callable[[Controller], Serving] | None = None,
    ) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.frontend = frontend
        self.assistant = assistant
        self.mode = Mode.PYTHON
        self.should_exit = False
        self.mode_listeners: list[Callable[[Mode], None]] = []
        self.journal = Journal()
        self.proposals = Proposals(
            runtime,
            frontend,
            self.journal,
            model=lambda: self.config.model,
            tell=assistant.tell,
            on_placed=lambda: self.set_mode(Mode.PYTHON),  # the code placed in the next input is Python
        )
        self.resume_file = ResumeFile(
            runtime,
            assistant,
            config=self.settings.current,
            keep=self._keeps,
            notice=self.notice,
            journal=self.journal,
        )
        self._suggester: Suggester | None = None
        # outside agents' calls (/mcp) wait while an input is handled: they never see it half-done
        self.gate = SessionGate()
        self._serving = serving  # makes the session's MCP service (``assemble``); None: it cannot serve
        self._service: Serving | None = None
        # checkpoints of the whole session, where the front end keeps them (``checkpoints``); else why not,
        # in one sentence (``/undo`` then takes back the last approved proposal alone)
        self.checkpoints: Undo | None = None
        self.checkpoints_why = "Checkpoints are kept only in pyaichat's own REPL (python -m pyaichat)."
        self._question_hinted = False

    # -- the configuration -----------------------------------------------------------------------------------
    @property
    def config(self) -> Config:
        """The current configuration (``settings.current()``; a ``Config`` never changes: ``settings.replace``
        makes a new one current)."""
        return self.settings.current()

    def _keeps(self) -> bool:
        """Whether the session is kept for ``--resume``: ``autosave = "auto"`` keeps a terminal's, not piped
        input's or a notebook's."""
        autosave = self.config.autosave
        return autosave == "on" or (autosave == "auto" and self.frontend.remembers)

    # -- modes -----------------------------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        if mode is self.mode:
            return
        self.mode = mode
        if mode is Mode.ASSISTANT:  # the first question should not wait for litellm's import
            self.assistant.warm_up()
        for listener in self.mode_listeners:
            listener(mode)

    def toggle_mode(self) -> Mode:
        self.set_mode(Mode.ASSISTANT if self.mode is Mode.PYTHON else Mode.PYTHON)
        return self.mode

    # -- dispatch --------------------------------------------------------------------------------------------
    def kind(self, text: str) -> Kind:
        """What an input is, decided here once for every front end (Enter, piped input's grouping, dispatch):
        a slash command in either mode, else Python or a question by the mode."""
        stripped = text.strip()
        if not stripped:
            return "empty"
        if stripped.startswith("/"):
            return "command"
        return "python" if self.mode is Mode.PYTHON else "question"

    def handle(self, text: str) -> None:
        """Handle one complete input. ``SystemExit`` from user code propagates to the front end."""
        kind = self.kind(text)
        try:
            with self.gate:
                if kind == "python":
                    self.run_python(text)
                    return
                self.proposals.drop_placed()  # code placed in this input was not run
                if kind == "command":
                    from .commands import dispatch  # with the first slash command, not at start-up

                    dispatch(self, text.strip())
                elif kind == "question":
                    self.ask(text.strip())
        finally:
            self.resume_file.changed()

    def hint_if_question(self, source: str) -> None:
        """``source`` ran as Python but reads like a question (it failed, or IPython took it for a help
        request): say once a session where questions go."""
        if self._question_hinted:
            return
        from .prose import QUESTION_HINT, looks_like_question  # only after an input that ran as Python

        if looks_like_question(source):
            self._question_hinted = True
            self.notice(QUESTION_HINT)

    def cancel_input(self) -> None:
        """The person dropped the input being typed (Ctrl-C at the prompt): code placed in it did not run."""
        self.proposals.drop_placed()

    def run_python(self, source: str) -> ExecResult | None:
        """Run ``source`` in the session (it settles a proposal placed in the input); a session that cannot
        run it (a dead kernel) is one sentence."""
        try:
            return self.proposals.run_input(source)
        except PyAIChatError as exc:
            from .agent.events import ErrorEvent  # compiled at import: not at start-up

            self.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return None

    def ask(self, question: str, config: Config | None = None) -> None:
        """Answer a question with the assistant, with ``config`` for this question only (default: the
        current one): events go to the front end, proposals to ``proposals``."""
        # the agent (its events, the loop) loads with the first question, not at start-up
        from .agent.events import ErrorEvent

        before = self.runtime.last_input_number
        person = self.frontend.interactive  # piped input, a notebook: no one to ask
        front = Front(
            self.frontend.emit,
            self.proposals.decide,  # everything proposed on the way: the one proposal path
            interactive=person,
            answer_question=self._answer_question if person else None,
        )
        try:
            result = self.assistant.ask(question, front, config=config or self.config)
        except Exception as exc:  # a bug in pyaichat must not end the session (piped mode has no other guard)
            self.emit(ErrorEvent(message=internal_error(exc, "The assistant"), kind="internal"))
            return
        finally:
            self.resume_file.changed()
        if result is not None:
            self.journal.question(result, before, self.runtime.last_input_number)

    def _answer_question(self, question: Question) -> Answer:
        """An MCP server's question (elicitation), put to the person: its panel, then their answer."""
        from .agent.events import QuestionEvent  # compiled at import: with the first question

        self.emit(
            QuestionEvent(
                call_id=question.call_id,
                source=question.server,
                message=question.message,
                fields=[(_field_label(f), _field_hint(f)) for f in question.fields],
                url=question.url,
                secret_fields=[_field_label(f) for f in question.fields if f.asks_for_secret],
            )
        )
        return self.frontend.answer_question(question)

    def serve_proposals(self) -> None:
        """The front end is idle: ask about proposals submitted from other threads (an outside agent's).
        Approved code runs here, so outside calls wait meanwhile, as for any input."""
        with self.gate:
            served = self.proposals.serve()
        if served:
            self.resume_file.changed()

    def mcp(self, *, create: bool) -> Serving | None:
        """The session's MCP service (``/mcp``): made with the first ``create``; ``None`` before, or where
        this session cannot serve."""
        if self._service is None and create and self._serving is not None:
            self._service = self._serving(self)
        return self._service

    # -- ghost-text suggestions ------------------------------------------------------------------------------
    @property
    def suggester(self) -> Suggester:
        """The session's ghost-text suggestions (created on first use; idle until ``suggest_model`` is set,
        and it starts no thread before its first request)."""
        if self._suggester is None:
            from .agent.suggest import Suggester  # standard library only

            self._suggester = Suggester(self.settings.current, self.runtime)
        return self._suggester

    @property
    def suggester_if_any(self) -> Suggester | None:
        return self._suggester

    def active_suggester(self) -> Suggester | None:
        """The suggester when a suggestion model is set (what a prompt asks on every keystroke)."""
        return self.suggester if self.config.suggest_model else None

    def prepare(self) -> None:
        """The front end is idle before the first input: load now what that input would otherwise wait for
        (the records of a run; what keeping the session for ``--resume`` needs). Nothing runs or is said."""
        from . import records  # noqa: F401  (the first run's, see above)

        self.resume_file.prepare()

    def close(self) -> None:
        """The session ends: whoever waits on a proposal is told, what is kept for ``--resume`` is written,
        and the suggestions' thread stops (its open connections are closed)."""
        self.proposals.close()
        self.resume_file.flush()
        self.assistant.close()  # the MCP servers it started
        if self._suggester is not None:
            self._suggester.close()

    # -- output ----------------------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self.frontend.emit(event)

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None:
        from .agent.events import NoticeEvent  # compiled at import: not at start-up

        self.emit(NoticeEvent(text=text, level=level))


def _field_label(field: Any) -> str:
    return field.label + ("" if field.required else " (optional)")


def _field_hint(field: Any) -> str:
    hint = field.hint()
    return f"{field.description} — {hint}" if field.description else hint
