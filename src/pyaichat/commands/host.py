"""What a slash command may use of the object that runs it (the ``Controller``), as a protocol.

The commands depend on this shape, not on ``controller.py``; the controller imports the commands, never the
other way round, so there is no ``commands ↔ controller`` import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from ..agent.assistant import Assistant
    from ..agent.events import Event
    from ..agent.suggest import Suggester
    from ..configuration.config import Config, Settings
    from ..journal import Journal
    from ..modes import Mode
    from ..ports import FrontEnd, Serving, Undo
    from ..proposals import Proposals
    from ..resume_file import ResumeFile
    from ..runtime import Runtime


class CommandHost(Protocol):
    settings: Settings  # the session's configuration: ``settings.replace(...)`` changes it everywhere

    @property
    def config(self) -> Config: ...  # ``settings.current()``

    runtime: Runtime
    frontend: FrontEnd
    assistant: Assistant
    journal: Journal
    proposals: Proposals
    resume_file: ResumeFile
    checkpoints: Undo | None  # checkpoints of the whole session, where the front end keeps them
    checkpoints_why: str  # why not, in one sentence, where it does not

    @property
    def suggester(self) -> Suggester: ...

    @property
    def suggester_if_any(self) -> Suggester | None: ...

    def mcp(self, *, create: bool) -> Serving | None: ...

    def set_mode(self, mode: Mode) -> None: ...

    def ask(self, question: str) -> None: ...

    def emit(self, event: Event) -> None: ...

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None: ...
