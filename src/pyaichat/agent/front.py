"""What one question's turn needs of whoever asked: a ``Front`` (a leaf: the assistant, the turn and the
controller name it, and it imports nothing of theirs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..mcptools.approval import AnswerQuestion
    from ..proposal import Decide
    from .events import Event


class Front:
    """What one question's turn needs of whoever asked (``Assistant.ask``): ``emit`` shows an event,
    ``decide`` puts a proposal to the person (the proposal path), ``answer_question`` puts an MCP server's
    question to them (``None``: no one can be asked). ``interactive``: a person can approve an MCP tool call
    or a sampling request (elsewhere only the tools that run at once are offered).

    A plain class, not a dataclass: this module loads at start-up, and a dataclass compiles its methods."""

    __slots__ = ("answer_question", "decide", "emit", "interactive")

    def __init__(
        self,
        emit: Callable[[Event], None],
        decide: Decide,
        *,
        interactive: bool = False,
        answer_question: AnswerQuestion | None = None,
    ) -> None:
        self.emit = emit
        self.decide = decide
        self.interactive = interactive
        self.answer_question = answer_question
