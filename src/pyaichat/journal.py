"""What the session did beyond its numbered inputs, kept for ``/save`` and for resuming it tomorrow.

The runtime keeps the inputs (with their text output); the assistant keeps the conversation. What neither
knows is where each question fell among the inputs and which inputs were the assistant's approved code: the
controller writes both here as they happen, and ``persist.notebook`` puts everything back in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .persist.notebook import ApprovedProposal, AssistantTurn


@dataclass
class Journal:
    """The questions (with the input numbers around them) and the approved proposals of one session."""

    turns: list[AssistantTurn] = field(default_factory=list)
    approved: list[ApprovedProposal] = field(default_factory=list)

    def question(self, result: Any, after_input: int, end_input: int) -> None:
        """A turn ended (``result``: the agent's ``TurnResult``); ``after_input``/``end_input``: the last
        input number before the question and when its answer came."""
        self.turns.append(AssistantTurn.from_result(result, after_input, end_input))

    def approve(self, code: str, model: str | None, input_number: int | None, explanation: str = "") -> None:
        self.approved.append(ApprovedProposal(code, model, ApprovedProposal.now(), input_number, explanation))

    def undone(self, text: str) -> None:
        """``/undo`` took back the last approved proposal: a saved notebook keeps its cell but skips it."""
        if self.approved:
            self.approved[-1].undone = text
