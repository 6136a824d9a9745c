"""What the loop and a model client say to each other: a request, a reply, and the ``LLM`` protocol.

Plain data and one protocol, so the loop, the budget and the tests' scripted model share them without
importing litellm or the client.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Protocol

from ..calls import ToolCall as ToolCall  # a reply carries them: named here for the clients

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]
ProtocolName = Literal["native", "text"]


@dataclass
class Usage:
    """Tokens and cost of model requests. ``estimated``: some of it was counted here, because the request
    ended before the provider reported its usage (stopped at the deadline, by Ctrl-C, cut off).

    Of the prompt tokens, ``prefix_tokens`` were the stable prefix (system prompt and tools: the same bytes
    in every request, what prompt caches reuse), pyaichat's estimate (``Request.prefix_of``);
    ``cached_tokens`` the provider says it read from its prompt cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    estimated: bool = False
    prefix_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
            self.estimated or other.estimated,
            self.prefix_tokens + other.prefix_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    @staticmethod
    def total(usages: Iterable[Usage]) -> Usage:
        out = Usage()
        for usage in usages:
            out = out + usage
        return out


@dataclass
class Request:
    """One chat completion as the budget sized it: what is sent, and the most tokens the answer may have.

    ``prefix_tokens`` and ``counted_tokens``: the budget's counts of its stable prefix (the system message and
    the tools) and of all of it, for telling the provider's prompt tokens apart (``prefix_of``)."""

    messages: Messages
    tools: Tools | None
    max_tokens: int
    prefix_tokens: int = 0
    counted_tokens: int = 0

    def prefix_of(self, prompt_tokens: int) -> int:
        """How many of ``prompt_tokens`` (the provider's count of this request) were the stable prefix: its
        share by the budget's count (another model's tokenizer splits both parts alike)."""
        if not self.counted_tokens or not prompt_tokens:
            return 0
        return min(prompt_tokens, round(prompt_tokens * self.prefix_tokens / self.counted_tokens))


@dataclass
class LLMReply:
    """What a stream brought: all of the reply, or the part before the reader stopped it."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    # The server took the tool schemas but its prompt could not have held them: the model never saw them.
    tools_unseen: bool = False


@dataclass(frozen=True)
class Receiving:
    """A stream's note: the first chunk of the reply arrived (the model is writing, maybe a tool call the
    user does not see). Once per attempt."""


@dataclass(frozen=True)
class Retrying:
    """A stream's note: an attempt failed (``reason``: "HTTP 503", "a timeout"…) and attempt ``attempt`` of
    at most ``attempts`` starts after ``wait`` seconds."""

    reason: str
    attempt: int
    attempts: int
    wait: float


# What ``for item in stream`` hands out: streamed text, or a note on what the stream is doing.
StreamItem = str | Receiving | Retrying


class Stream(Protocol):
    """One streamed completion, pulled by its reader: ``for item in stream`` gives text pieces as they
    arrive and notes (``Receiving``, ``Retrying``); a failure is raised there as an ``LLMError``. Stopping is
    the reader's to do: leave the loop and ``close()`` (or use ``with``); ``reply()`` is then the part that
    arrived. Called before the items ran out, ``reply()`` reads the rest first (the whole reply)."""

    def __iter__(self) -> Iterator[StreamItem]: ...

    def close(self) -> None: ...

    def reply(self) -> LLMReply: ...

    def __enter__(self) -> Stream: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


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

    def stream(self, request: Request, *, timeout: float) -> Stream:
        """One completion as a ``Stream``, to be read by the caller; ``timeout``: seconds for all of it,
        retries included."""
        ...
