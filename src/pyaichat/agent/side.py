"""Model requests a turn makes on someone else's behalf while one of its tool calls runs: an MCP server's
sampling request that the person approved.

They go to the turn's own model through the same client, masked like every request, with at most the
turn's ``max_tokens`` (fewer when the server asks for fewer) and within ``request_timeout``; the session's
money budget (``budget_usd``) refuses one that would go over it. Each is recorded in the turn as it happens,
between the turn's own requests, so ``/trace`` lists it, ``/sent`` shows exactly what the provider received
(named as a request for that server) and ``/cost`` counts its tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import PyAIChatError
from .budget import Limits, money_stop
from .context import mask_messages
from .events import Event, StateEvent
from .llm import LLM, LLMReply, Request, Usage
from .trace import StepRecord, TurnResult


class SideRefused(PyAIChatError):
    """A side request was not sent (the money budget); ``str()`` is the sentence."""


class SideRequests:
    """The side requests of one turn (see the module docstring); the loop ``bind``s the turn's record.
    ``spent``/``requests``: what the session spent, in how many requests, before this turn."""

    def __init__(
        self,
        llm: LLM,
        limits: Limits,
        *,
        mask: Callable[[str], str],
        emit: Callable[[Event], None] = lambda event: None,
        spent: Usage | None = None,
        requests: int = 0,
    ) -> None:
        self.llm = llm
        self.limits = limits
        self.mask = mask
        self.emit = emit
        self.spent = spent or Usage()
        self.requests = requests
        self.result: TurnResult | None = None

    def bind(self, result: TurnResult) -> None:
        """The turn's record, where each side request is written as it is made."""
        self.result = result

    def complete(self, messages: list[dict[str, Any]], max_tokens: int, *, label: str) -> LLMReply:
        """One completion of ``messages`` (masked here once more) for ``label`` (who asked: "the MCP server
        'fault'"); an ``LLMError`` when the provider fails, ``SideRefused`` when a bound forbids it."""
        result = self.result if self.result is not None else TurnResult(question="")
        spent, made = self.spent + result.usage, self.requests + result.requests_made
        if money_stop(self.limits, spent, made) is not None:
            raise SideRefused("another request would go over the session's money budget (budget_usd).")
        request = Request(
            mask_messages(messages, self.mask), None, max(1, min(max_tokens, self.limits.max_tokens))
        )
        body = self.llm.request_kwargs(request)
        result.requests.append(body)
        result.side_requests[len(result.requests) - 1] = label
        name = f"{self.llm.model} for {label}"
        self.emit(StateEvent(state="calling", detail=f"your model writes a reply for {label}"))
        started = time.monotonic()
        try:
            with self.llm.stream(request, timeout=self.limits.request_timeout) as stream:
                reply = stream.reply()  # read whole: the server gets the reply, not the person
        except BaseException as exc:  # Ctrl-C too: the request left, the record says so
            detail = str(exc) or "interrupted by Ctrl-C"
            result.steps.append(StepRecord("llm", name, _ms(started), ok=False, detail=detail))
            raise
        detail = f"{reply.usage.prompt_tokens} in / {reply.usage.completion_tokens} out tokens"
        result.steps.append(StepRecord("llm", name, _ms(started), len(reply.text), True, detail, reply.usage))
        return reply


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)
