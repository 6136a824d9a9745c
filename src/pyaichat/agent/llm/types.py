"""What the loop and a model client say to each other: a request, a reply, and the ``LLM`` protocol.

Plain data and one protocol, so the loop, the budget and the tests' scripted model share them without
importing litellm or the client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]

# Why a reply was cut short on purpose by the one reading it: it repeats itself, or the turn is out of time.
Cut = Literal["repetition", "deadline"]
# Called with each piece of streamed text; returning a ``Cut`` stops the stream there.
OnText = Callable[[str], Cut | None]
ProtocolName = Literal["native", "text"]


@dataclass
class ToolCall:
    """One tool call as the model wrote it; ``arguments`` is raw JSON text (it may be broken)."""

    id: str
    name: str
    arguments: str


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens, cost
        )

    @staticmethod
    def total(usages: Iterable[Usage]) -> Usage:
        out = Usage()
        for usage in usages:
            out = out + usage
        return out


@dataclass
class Request:
    """One chat completion as the budget sized it: what is sent, and the most tokens the answer may have."""

    messages: Messages
    tools: Tools | None
    max_tokens: int


@dataclass
class LLMReply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    # The reader stopped the stream on purpose (``on_text`` returned a reason): the text is what came before.
    cut: Cut | None = None
    # The server took the tool schemas but its prompt could not have held them: the model never saw them.
    tools_unseen: bool = False


class LLM(Protocol):
    """Everything the loop and the budget use of a model client."""

    model: str

    def prepare(self) -> None:
        """Finish loading what requests need (seconds, once per session), outside any request's clock."""
        ...

    def tool_protocol(self) -> ProtocolName:
        """How to offer tools to this model now: native function calling, or the text protocol."""
        ...

    def supports_images(self) -> bool:
        """True when the model can look at images sent in a user message."""
        ...

    def context_window(self) -> int | None:
        """The model's context window in tokens; ``None`` when there is no way to know."""
        ...

    def count_tokens(self, messages: Messages, tools: Tools | None) -> int:
        """Prompt tokens of a request, erring on the high side: the one count every budget decision uses."""
        ...

    def request_kwargs(self, request: Request) -> dict[str, Any]:
        """The request body as pyaichat builds it (what ``/sent`` shows), without credentials."""
        ...

    def complete(self, request: Request, *, on_text: OnText, timeout: float) -> LLMReply:
        """Stream one completion; raise an ``LLMError`` when it fails, return a reply when it is cut."""
        ...
