"""An in-process scripted model behind the agent's ``LLM`` protocol: enqueue replies, inspect requests.

Replies are used strictly in order (never chosen by looking at the conversation). A queued exception is raised
instead of answering; text is streamed in a few pieces through the real ``ChatStream`` (so a reader that stops
reading gets the part before, as with the real client), without retries.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from pyaichat.agent.llm import ChatStream, LLMReply, Request, Retry, ToolCall, Usage


class Interrupt:
    """A queue item: stream ``text``, then raise ``KeyboardInterrupt`` as Ctrl-C would mid-stream."""

    def __init__(self, text: str = "") -> None:
        self.text = text


class FakeLLM:
    def __init__(
        self,
        *,
        native: bool = True,
        model: str = "fake/model",
        cost: float | None = None,
        window: int | None = None,
        images: bool = False,
    ) -> None:
        self.model = model
        self.native = native
        self.cost = cost
        self.window = window
        self.images = images
        self.queue: list[Any] = []
        self.requests: list[dict[str, Any]] = []

    # -- scripting -------------------------------------------------------------------------------------------
    def enqueue(self, *items: Any) -> FakeLLM:
        self.queue.extend(items)
        return self

    def text(self, text: str) -> FakeLLM:
        return self.enqueue(LLMReply(text=text))

    def tool(self, name: str, args: dict[str, Any] | str | None = None, *, text: str = "") -> FakeLLM:
        return self.tools((name, args or {}), text=text)

    def tools(self, *calls: tuple[str, dict[str, Any] | str], text: str = "") -> FakeLLM:
        made = [
            ToolCall(f"call_{len(self.queue)}_{i}", n, a if isinstance(a, str) else json.dumps(a))
            for i, (n, a) in enumerate(calls)
        ]
        return self.enqueue(LLMReply(text=text, tool_calls=made))

    # -- the LLM protocol ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        pass

    def tool_protocol(self) -> str:
        return "native" if self.native else "text"

    def supports_images(self) -> bool:
        return self.images

    def context_window(self) -> int | None:
        return self.window

    def count_tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """About four characters a token, like the real client's count when litellm has no tokenizer."""
        return len(json.dumps(messages)) // 4 + (len(json.dumps(tools)) // 4 if tools else 0)

    def request_kwargs(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        if request.tools:
            body["tools"] = request.tools
        body["max_tokens"] = request.max_tokens
        return body

    def stream(self, request: Request, *, timeout: float) -> ChatStream:
        self.requests.append(
            {
                "messages": copy.deepcopy(request.messages),
                "tools": request.tools,
                "max_tokens": request.max_tokens,
                "timeout": timeout,
            }
        )
        item = self.queue.pop(0) if self.queue else LLMReply(text="(no scripted reply left)")
        return ChatStream(_Scripted(item, self.cost), Retry(retries=0), timeout)


class _Scripted:
    """One scripted reply as a ``Call``: its text in three pieces, then the reply itself."""

    def __init__(self, item: Any, cost: float | None) -> None:
        self.item = item
        self.cost = cost

    def open(self, timeout: float) -> Iterator[str]:
        item = self.item
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Interrupt):
            return self._interrupted(item.text)
        if callable(item):
            item = self.item = item()
        text = item.text
        step = max(1, len(text) // 3)
        return iter([text[start : start + step] for start in range(0, len(text), step)])

    @staticmethod
    def _interrupted(text: str) -> Iterator[str]:
        if text:
            yield text
        raise KeyboardInterrupt

    def failed(self, exc: Exception, timeout: float) -> Any:
        raise exc

    def text(self, chunk: str) -> str:
        return chunk

    def why(self, exc: Any) -> str:
        return type(exc).__name__

    def close(self, response: Any) -> None:
        pass

    def reply(self, chunks: list[str], *, whole: bool, sent: bool) -> LLMReply:
        if whole:
            reply = copy.deepcopy(self.item)
            reply.usage = Usage(prompt_tokens=100, completion_tokens=10, cost_usd=self.cost)
            return reply
        if not sent:
            return LLMReply()
        usage = Usage(prompt_tokens=100, completion_tokens=len(chunks), cost_usd=self.cost, estimated=True)
        return LLMReply(text="".join(chunks), usage=usage)
