"""What the user sees of one streamed reply, before anyone knows whether it is an answer or a tool call.

Text goes out as ``answer_chunk`` events as soon as the protocol's gate lets it through (it holds back what
may be a call). When the reply ends as an answer, the held-back rest follows; when it turns out to call tools,
its prose was either already shown (its paragraph is closed) or is shown once as ``thinking``.
"""

from __future__ import annotations

from collections.abc import Callable

from .events import AnswerChunkEvent, Event, ThinkingEvent
from .stream_gate import StreamGate


class ReplyView:
    def __init__(
        self, gate: StreamGate, emit: Callable[[Event], None], answering: Callable[[], None]
    ) -> None:
        self.gate = gate
        self.emit = emit
        self._answering = answering  # announces the "answering" state, once per reply that shows text
        self.shown: list[str] = []

    @property
    def text(self) -> str:
        """Everything of this reply the user has seen."""
        return "".join(self.shown)

    def feed(self, piece: str) -> None:
        out = self.gate.feed(piece)
        if out:
            self.show(out)

    def show(self, text: str) -> None:
        if not self.shown:
            self._answering()
        self.shown.append(text)
        self.emit(AnswerChunkEvent(text=text))

    def end_as_answer(self) -> None:
        """The reply is the answer: release what the gate still holds."""
        rest = self.gate.rest()
        if rest.strip():
            self.show(rest)

    def end_with_calls(self, prose: str) -> None:
        """The reply calls tools; ``prose`` is its text around the calls."""
        prose = prose.strip()
        if not prose:
            return
        seen = self.text.strip()
        if not seen:
            self.emit(ThinkingEvent(text=prose))
            return
        unseen = prose[len(seen) :].strip() if prose.startswith(seen) else ""
        if unseen:  # prose after the call, held back while the call streamed
            self.show("\n\n" + unseen)
        full = self.text
        gap = "\n\n"[len(full) - len(full.rstrip("\n")) :]
        if gap:  # shown as answer text: end its paragraph before what comes next
            self.emit(AnswerChunkEvent(text=gap))
