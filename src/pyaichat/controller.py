"""Mode state and input dispatch, shared by the interactive REPL and piped mode.

The front ends only read input and render events; everything a line *means* (a slash command, Python code, a
question) is decided here, once.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Literal, Protocol

from .agent.events import ApprovalRequiredEvent, ErrorEvent, NoticeEvent

if TYPE_CHECKING:
    from .agent.events import Event
    from .config import Config
    from .session import ExecResult, Session


class Mode(str, enum.Enum):
    PYTHON = "python"
    ASSISTANT = "assistant"

    @property
    def label(self) -> str:
        return "Python" if self is Mode.PYTHON else "Assistant"


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
    """Routes each complete input to a slash command, the Python session or the assistant."""

    def __init__(self, config: Config, session: Session, frontend: FrontEnd) -> None:
        self.config = config
        self.session = session
        self.frontend = frontend
        self.mode = Mode.PYTHON
        self.should_exit = False
        self.mode_listeners: list = []

    # -- modes -----------------------------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        if mode is self.mode:
            return
        self.mode = mode
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
            from .commands import dispatch

            dispatch(self, stripped)
        elif self.mode is Mode.PYTHON:
            self.run_python(text)
        else:
            self.ask(stripped)

    def run_python(self, source: str) -> ExecResult:
        return self.session.run(source)

    def ask(self, question: str) -> None:
        """Answer a question with the assistant."""
        self.emit(ErrorEvent(message="The assistant is not available yet in this version.", kind="unavailable"))

    # -- output ----------------------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self.frontend.emit(event)

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None:
        self.emit(NoticeEvent(text=text, level=level))
