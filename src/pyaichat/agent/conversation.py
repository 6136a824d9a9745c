"""One turn's messages, kept valid to send at every moment: every tool call gets exactly one result.

The turn adds the model's replies and the results of its calls here; however the turn ends (an answer, a
bound, a failed request, Ctrl-C in the middle of the calls), the messages end with an assistant message and no
call is left without a result, so the next question can send them again from memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..capabilities.catalog import CapabilityResult
from .calls import ToolCall
from .protocol import CANCELLED, Observed, ToolProtocol

Messages = list[dict[str, Any]]


@dataclass
class _OpenCalls:
    writer: ToolProtocol
    calls: list[ToolCall]
    results: list[Observed] = field(default_factory=list)


class Conversation:
    def __init__(self, content: str) -> None:
        self.messages: Messages = [{"role": "user", "content": content}]
        self.call_ids: set[str] = set()  # every call id of the turn, so that none repeats
        self._open: _OpenCalls | None = None

    def calls_made(self, writer: ToolProtocol, message: dict[str, Any], calls: list[ToolCall]) -> None:
        """The model's reply asking for ``calls``; ``writer`` will write their results back."""
        self.messages.append(message)
        self._open = _OpenCalls(writer, calls)

    def result(self, call: ToolCall, result: CapabilityResult) -> None:
        """``call``'s result as the model reads it (its ``text`` is the observation)."""
        assert self._open is not None
        self._open.results.append((call, result))

    def close_calls(self, *, see_images: bool) -> None:
        """Every call has its result: they go into the conversation."""
        if self._open is not None:
            self.messages += self._open.writer.results(self._open.results, see_images=see_images)
            self._open = None

    def cancel_calls(self) -> None:
        """Ctrl-C while calls were running: the finished ones keep their results, the rest are cancelled."""
        if self._open is not None:
            for call in self._open.calls[len(self._open.results) :]:
                self._open.results.append((call, CapabilityResult(name=call.name, ok=False, text=CANCELLED)))
            self.close_calls(see_images=False)

    def end(self, text: str) -> None:
        """The turn's last word, as the model will remember it."""
        self.messages.append({"role": "assistant", "content": text})

    def end_without_answer(self) -> None:
        """After a failed request: end with an assistant message, so the next request is valid."""
        last = self.messages[-1]
        if last.get("role") != "assistant" or last.get("tool_calls"):
            self.end("(no answer: the model request failed)")
