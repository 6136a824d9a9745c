"""Modes and input dispatch, shared by the interactive REPL, piped mode and the IPython extension.

The front ends only read input and render events; what an input *means* (a slash command, Python code, a
question) is decided here, once. The controller is given what it dispatches to, and keeps none of their work:

- ``runtime``, where the user's session lives, and ``assistant``, which answers questions: both built by the
  entry point (``cli``, ``attach``, the IPython extension) and handed over at construction;
- ``config``: the current configuration, which the controller alone replaces (``/model``; IPython once a
  broken configuration is fixed) and hands to the runtime and the assistant; a question may have its own
  (``ask(question, config=...)``: ``%ai --model M``);
- ``proposals`` (the ``proposals`` package): every proposal's life, whoever proposes it: preview, the person's
  decision, the run, the journal, ``/undo``;
- ``lasting`` (``lasting.py``): what ``--resume`` brings back, written off the keystroke path;
- ``journal``: the questions and approved code, for ``/save``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from .errors import PyAIChatError
from .journal import Journal
from .lasting import LastingState
from .mcpserve.gate import SessionGate
from .modes import Mode
from .proposals import ASSISTANT, Decision, Proposal, Proposals

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from .agent.events import ApprovalRequiredEvent, Event
    from .agent.loop import Approval
    from .agent.suggest import Suggester
    from .config import Config
    from .mcptools.approval import Answer, Approve, Ask, Question, ToolDecision, ToolRequest
    from .records import ExecResult
    from .runtime import Runtime

__all__ = ["AssistantPort", "Controller", "Decision", "FrontEnd", "Mode"]


class FrontEnd(Protocol):
    """What the shared core needs from a front end."""

    interactive: bool
    remembers: bool  # keeps the session for --resume when the autosave setting is "auto" (not piped input)

    def emit(self, event: Event) -> None: ...

    def decide(self, proposal: ApprovalRequiredEvent) -> Decision:
        """Ask the person what to do with a proposal ("shown" where no one can be asked: piped input)."""
        ...

    def set_next_input(self, code: str) -> None:
        """Put ``code`` into the next input for the person to edit (the controller is in Python mode)."""
        ...

    # Optional, where a person can answer: ``answer_question(question) -> Answer``, an MCP server's question
    # (elicitation) after its ``QuestionEvent`` is on screen.


class AssistantPort(Protocol):
    """What the controller and the slash commands use of the assistant (``agent.assistant.Assistant``, or
    the ``DeferredAssistant`` that makes one on first use)."""

    config: Config

    def ask(
        self,
        question: str,
        emit: Callable[[Event], None],
        approve: Callable[[ApprovalRequiredEvent], Approval],
        *,
        config: Config | None = None,
        approve_tool: Approve | None = None,
        ask_person: Ask | None = None,
    ) -> Any: ...

    def warm_up(self) -> None: ...

    def close(self) -> None: ...

    @property
    def servers(self) -> Any: ...  # the MCP servers as tools, or None (``/tools``)

    def clear(self) -> None: ...

    def tell(self, note: str) -> None: ...

    def memory_state(self) -> tuple[list[dict[str, Any]], list[str]]: ...

    def restore(self, turns: Iterable[Mapping[str, Any]], notes: Iterable[str]) -> None: ...

    def trace_text(self) -> str: ...

    def sent_json(self) -> list[str]: ...

    def sent_labels(self) -> list[str]: ...

    def cost_text(self) -> str: ...


class Controller:
    """Routes each complete input to a slash command, the Python session or the assistant."""

    def __init__(
        self, config: Config, runtime: Runtime, frontend: FrontEnd, *, assistant: AssistantPort
    ) -> None:
        self.runtime = runtime
        self.frontend = frontend
        self.assistant = assistant
        self.config = config  # hands it to the runtime and the assistant
        self.mode = Mode.PYTHON
        self.should_exit = False
        self.mode_listeners: list[Callable[[Mode], None]] = []
        self.journal = Journal()
        self.proposals = Proposals(
            runtime,
            frontend,
            self.journal,
            model=lambda: self._config.model,
            tell=assistant.tell,
            on_placed=lambda: self.set_mode(Mode.PYTHON),  # the code placed in the next input is Python
        )
        self.lasting = LastingState(
            runtime,
            assistant,
            config=lambda: self._config,
            keep=self._keeps,
            notice=self.notice,
            journal=self.journal,
        )
        self._suggester: Suggester | None = None
        # outside agents' calls (/mcp) wait while an input is handled: they never see it half-done
        self.gate = SessionGate()

    # -- the configuration -----------------------------------------------------------------------------------
    @property
    def config(self) -> Config:
        """The current configuration (a ``Config`` never changes: a new one replaces it)."""
        return self._config

    @config.setter
    def config(self, config: Config) -> None:
        self._config = config
        self.runtime.config = config
        self.assistant.config = config

    def _keeps(self) -> bool:
        """Whether the session is kept for ``--resume``: ``autosave = "auto"`` keeps a terminal's, not piped
        input's or a notebook's."""
        autosave = self._config.autosave
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
    def handle(self, text: str) -> None:
        """Handle one complete input. ``SystemExit`` from user code propagates to the front end."""
        stripped = text.strip()
        try:
            with self.gate:
                if stripped.startswith("/") or not stripped:
                    self.proposals.drop_placed()  # code placed in this input was not run
                    if stripped:
                        from .commands import dispatch  # with the first slash command, not at start-up

                        dispatch(self, stripped)
                elif self.mode is Mode.PYTHON:
                    self.run_python(text)
                else:
                    self.proposals.drop_placed()
                    self.ask(stripped)
        finally:
            self.lasting.changed()

    def cancel_input(self) -> None:
        """The person dropped the input being typed (Ctrl-C at the prompt): code placed in it did not run."""
        self.proposals.drop_placed()

    def run_python(self, source: str) -> ExecResult | None:
        """Run ``source`` in the session (it settles a proposal placed in the input); a session that cannot
        run it (a dead kernel) is one sentence."""
        try:
            return self.proposals.run_input(source)
        except PyAIChatError as exc:
            from .agent.events import ErrorEvent  # pydantic: not at start-up

            self.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return None

    def ask(self, question: str, config: Config | None = None) -> None:
        """Answer a question with the assistant, with ``config`` for this question only (default: the
        current one): events go to the front end, proposals to ``proposals``."""
        # the agent (pydantic, the loop) loads with the first question, not at start-up
        from .agent.events import ErrorEvent

        before = self.runtime.last_input_number
        person = self.frontend.interactive  # piped input, a notebook: no one to ask
        try:
            result = self.assistant.ask(
                question,
                self.emit,
                self._approve,
                config=config or self._config,
                approve_tool=self._approve_tool if person else None,
                ask_person=self._ask_person if person and hasattr(self.frontend, "answer_question") else None,
            )
        except Exception as exc:  # a bug in pyaichat must not end the session (piped mode has no other guard)
            self.emit(
                ErrorEvent(
                    message=f"The assistant hit an internal error ({type(exc).__name__}: {exc}); "
                    "your session is intact.",
                    kind="internal",
                )
            )
            return
        finally:
            self.lasting.changed()
        if result is not None:
            self.journal.question(result, before, self.runtime.last_input_number)

    def _approve(self, event: ApprovalRequiredEvent) -> Approval:
        """The assistant's ``propose_code``: on the one proposal path; the model is told what happened."""
        from .agent.loop import Approval  # the agent: with the first question

        proposal = Proposal.of_code(event.code, event.explanation, call_id=event.call_id)
        outcome = self.proposals.decide(proposal, announced=True)  # the loop showed its panel
        return Approval(outcome.decision, outcome.observation, input_number=outcome.input_number)

    def _approve_tool(self, request: ToolRequest) -> ToolDecision:
        """A call of an MCP server's tool that needs the person: on the one proposal path (the same panel,
        run / edit its arguments / no); the call runs through the request's own ``run``."""
        from .mcptools.approval import ToolDecision  # with the first such call

        def call(arguments: dict[str, Any]) -> str:
            if request.run is None:  # the server's tools run it after a "run"
                return ""
            result = request.run(arguments)
            return result.text if result.ok else f"Error: {result.error}"

        why = f"\n(MCP server {request.server!r}: {request.reason}.)" if request.reason else ""
        explanation = f"{request.description}{why}".strip()
        proposal = Proposal.of_tool(
            request.name,
            request.args,
            call,
            source=ASSISTANT,  # the model asks for the call; the server it goes to is in the panel
            explanation=explanation,
            call_id=request.call_id or None,
            title=request.title,
        )
        outcome = self.proposals.decide(proposal)
        if outcome.ran:
            return ToolDecision("run", outcome.arguments, edited=outcome.status == "edited")
        return ToolDecision("no", note=outcome.observation)

    def _ask_person(self, question: Question) -> Answer:
        """An MCP server's question (elicitation), put to the person: its panel, then their answer."""
        from .agent.events import QuestionEvent  # pydantic: with the first question

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
        return self.frontend.answer_question(question)  # type: ignore[attr-defined]

    def serve_proposals(self) -> None:
        """The front end is idle: ask about proposals submitted from other threads (an outside agent's).
        Approved code runs here, so outside calls wait meanwhile, as for any input."""
        with self.gate:
            served = self.proposals.serve()
        if served:
            self.lasting.changed()

    # -- ghost-text suggestions ------------------------------------------------------------------------------
    @property
    def suggester(self) -> Suggester:
        """The session's ghost-text suggestions (created on first use; idle until ``suggest_model`` is set,
        and it starts no thread before its first request)."""
        if self._suggester is None:
            from .agent.suggest import Suggester  # standard library only

            self._suggester = Suggester(lambda: self.config, self.runtime)
        return self._suggester

    @property
    def suggester_if_any(self) -> Suggester | None:
        return self._suggester

    def active_suggester(self) -> Suggester | None:
        """The suggester when a suggestion model is set (what a prompt asks on every keystroke)."""
        return self.suggester if self.config.suggest_model else None

    def close(self) -> None:
        """The session ends: whoever waits on a proposal is told, what is kept for ``--resume`` is written,
        and the suggestions' thread stops (its open connections are closed)."""
        self.proposals.close()
        self.lasting.flush()
        self.assistant.close()  # the MCP servers it started
        if self._suggester is not None:
            self._suggester.close()

    # -- output ----------------------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self.frontend.emit(event)

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None:
        from .agent.events import NoticeEvent  # pydantic: not at start-up

        self.emit(NoticeEvent(text=text, level=level))


def _field_label(field: Any) -> str:
    return field.label + ("" if field.required else " (optional)")


def _field_hint(field: Any) -> str:
    hint = field.hint()
    return f"{field.description} — {hint}" if field.description else hint
