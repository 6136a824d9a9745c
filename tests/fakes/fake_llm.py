"""An in-process scripted model behind the agent's ``LLM`` interface: enqueue replies, inspect requests.

Replies are used strictly in order (never chosen by looking at the conversation). A queued exception is raised
instead of answering; text is delivered to ``on_text`` in a few pieces, like a stream.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from pyaichat.agent.llm import LLMReply, ToolCall, Usage


class Interrupt:
    """A queue item: stream ``text``, then raise ``KeyboardInterrupt`` as Ctrl-C would mid-stream."""

    def __init__(self, text: str = "") -> None:
        self.text = text


class FakeLLM:
    def __init__(self, *, native: bool = True, model: str = "fake/model", cost: float | None = None) -> None:
        self.model = model
        self.native = native
        self.cost = cost
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

    # -- the LLM interface -----------------------------------------------------------------------------------
    def native_tools(self) -> bool:
        return self.native

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        on_text: Callable[[str], None],
        timeout: float,
    ) -> LLMReply:
        self.requests.append({"messages": copy.deepcopy(messages), "tools": tools, "timeout": timeout})
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
        step = max(1, len(reply.text) // 3)
        for start in range(0, len(reply.text), step):
            on_text(reply.text[start : start + step])
        reply.usage = Usage(prompt_tokens=100, completion_tokens=10, cost_usd=self.cost)
        return reply
