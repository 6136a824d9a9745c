"""What the session did beyond its numbered inputs, kept for ``/save`` and for resuming it tomorrow.

The runtime keeps the inputs (with their text output); the assistant keeps the conversation. What neither
knows is where each question fell among the inputs and which inputs were approved proposals: the controller
writes the questions here, and the proposal service (``pyaichat.proposals``) the approved code, as they
happen; ``persist.notebook`` puts everything back in order. The records' types load with the first record,
so the journal itself costs the start-up nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .records import ApprovedProposal, AssistantTurn, FinishedTurn


class Journal:
    """The questions (with the input numbers around them) and the approved proposals of one session."""

    def __init__(self) -> None:
        self.turns: list[AssistantTurn] = []
        self.approved: list[ApprovedProposal] = []

    def question(self, result: FinishedTurn, after_input: int, end_input: int) -> None:
        """A turn ended (``result``: the agent's ``TurnResult``); ``after_input``/``end_input``: the last
        input number before the question and when its answer came."""
        from .records import AssistantTurn  # with the first question

        self.turns.append(AssistantTurn.from_result(result, after_input, end_input))

    def approve(
        self,
        code: str,
        model: str | None,
        input_number: int | None,
        explanation: str = "",
        *,
        proposed_by: str = "assistant",
    ) -> None:
        """Approved code ran as input ``input_number`` (``proposed_by``: "assistant" or an outside client)."""
        from .records import ApprovedProposal  # with the first approved proposal

        now = ApprovedProposal.now()
        self.approved.append(
            ApprovedProposal(code, model, now, input_number, explanation, proposed_by=proposed_by)
        )

    def undone(self, text: str, last_input: int | None = None) -> None:
        """``/undo`` took back the last approved proposal: a saved notebook keeps its cell but skips it.
        ``last_input``: the last input number then — inputs up to it ran while the proposal's effects stood,
        so replayed without them they may fail."""
        if self.approved:
            self.approved[-1].undone = text
            self.approved[-1].undone_after = last_input

    def restore(self, turns: list[AssistantTurn], approved: list[ApprovedProposal]) -> None:
        """A resumed session's records (``--resume``), before anything of this session: ``/save`` places its
        questions and approved proposals, and ``/history`` marks them, as the session that made them did."""
        self.turns[:0] = turns
        self.approved[:0] = approved

    def state(self) -> tuple[int, int, int]:
        """What changes when the journal does (for the resume file: written again only then)."""
        return len(self.turns), len(self.approved), sum(1 for p in self.approved if p.undone)
