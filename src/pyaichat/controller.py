"""Mode state and input dispatch, shared by the interactive REPL and piped mode.

The front ends only read input and render events; everything a line *means* (a slash command, Python code, a
question) is decided here, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from .errors import PyAIChatError
from .modes import Mode
from .runtime import Runtime, as_runtime

if TYPE_CHECKING:
    from .agent.assistant import Assistant
    from .agent.events import ApprovalRequiredEvent, Event
    from .config import Config
    from .records import ExecResult
    from .session import Session

__all__ = ["Controller", "Decision", "FrontEnd", "Mode"]


Decision = Literal["run", "edit", "no"]


class FrontEnd(Protocol):
    """What the shared core needs from a front end."""

    interactive: bool

    def emit(self, event: Event) -> None: ...

    def decide(self, proposal: ApprovalRequiredEvent) -> Decision:
        """Ask the user what to do with proposed code (piped mode always answers "no")."""
        ...

    def set_next_input(self, code: str) -> None:
        """Put ``code`` into the next Python-mode input for the user to edit."""
        ...


class Controller:
    """Routes each complete input to a slash command, the Python session or the assistant.

    ``runtime`` is where the user's session lives (a ``Session`` runs in this process)."""

    def __init__(self, config: Config, runtime: Runtime | Session, frontend: FrontEnd) -> None:
        self.config = config
        self.runtime = as_runtime(runtime)
        self.frontend = frontend
        self.mode = Mode.PYTHON
        self.should_exit = False
        self.mode_listeners: list = []
        self._assistant: Assistant | None = None

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
        if not stripped:
            return
        if stripped.startswith("/"):
            from .commands import dispatch  # with the first slash command, not at start-up

            dispatch(self, stripped)
        elif self.mode is Mode.PYTHON:
            self.run_python(text)
        else:
            self.ask(stripped)

    def run_python(self, source: str) -> ExecResult | None:
        """Run ``source`` in the session; a session that cannot run it (a dead kernel) is one sentence."""
        try:
            return self.runtime.run(source)
        except PyAIChatError as exc:
            from .agent.events import ErrorEvent  # pydantic: not at start-up

            self.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return None

    def ask(self, question: str) -> None:
        """Answer a question with the assistant: events go to the front end, proposals through ``decide``."""
        # the agent (pydantic, the loop) loads with the first question, not at start-up
        from .agent.assistant import DECLINED, EDITING, describe_run
        from .agent.events import ErrorEvent
        from .agent.loop import Approval

        def approve(event: ApprovalRequiredEvent) -> Approval:
            decision = self.frontend.decide(event)
            if decision == "run":
                try:
                    return Approval("run", describe_run(self.runtime.run(event.code)))
                except PyAIChatError as exc:  # e.g. the kernel died: the code did not run
                    self.emit(ErrorEvent(message=str(exc), kind="runtime"))
                    return Approval("run", f"The proposed code could not run: {exc}")
            if decision == "edit":
                self.frontend.set_next_input(event.code)
                self.set_mode(Mode.PYTHON)
                return Approval("edit", EDITING)
            return Approval("no", DECLINED)

        try:
            self.assistant.ask(question, self.emit, approve)
        except Exception as exc:  # a bug in pyaichat must not end the session (piped mode has no other guard)
            self.emit(
                ErrorEvent(
                    message=f"The assistant hit an internal error ({type(exc).__name__}: {exc}); "
                    "your session is intact.",
                    kind="internal",
                )
            )

    @property
    def assistant(self) -> Assistant:
        """The session's assistant, created on first use (creating it imports no heavy library)."""
        if self._assistant is None:
            from .agent.assistant import Assistant  # not at start-up

            self._assistant = Assistant(self.config, self.runtime)
        return self._assistant

    # -- output ----------------------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self.frontend.emit(event)

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None:
        from .agent.events import NoticeEvent  # pydantic: not at start-up

        self.emit(NoticeEvent(text=text, level=level))
