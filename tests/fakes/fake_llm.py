"""An in-process scripted model behind the agent's ``LLM`` protocol: enqueue replies, inspect requests.

Replies are used strictly in order (never chosen by looking at the conversation). A queued exception is raised
instead of answering; text is delivered to ``on_text`` in a few pieces, like a stream, and the stream stops
where ``on_text`` says to (the reply then comes back cut, as the real client's does).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pyaichat.agent.llm import LLMReply, OnText, Request, ToolCall, Usage


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

    def complete(self, request: Request, *, on_text: OnText, timeout: float) -> LLMReply:
        self.requests.append(
            {
                "messages": copy.deepcopy(request.messages),
                "tools": request.tools,
                "max_tokens": request.max_tokens,
                "timeout": timeout,
            }
        )
        item = self.queue.pop(0) if self.queue else LLMReply(text="(no scripted reply left)")
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Interrupt):
            if item.text:
                on_text(item.text)
            raise KeyboardInterrupt
        if callable(item):
            item = item()
        reply = copy.deepcopy(item)
        usage = Usage(prompt_tokens=100, completion_tokens=10, cost_usd=self.cost)
        step = max(1, len(reply.text) // 3)
        for start in range(0, len(reply.text), step):
            cut = on_text(reply.text[start : start + step])
            if cut is not None:
                return LLMReply(text=reply.text[: start + step], usage=usage, cut=cut)
        reply.usage = usage
        return reply
