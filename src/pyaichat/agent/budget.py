"""The one budget of a turn: the loop asks it for the next request, and gets one sized to fit, or a stop.

It owns every "how much" of a turn:

- the bounds: steps (``max_steps``), time (``turn_timeout``, a deadline set when the model library is loaded)
  and money (``budget_usd``, over the whole session: the next request is not sent when a typical one would go
  over);
- the window: asked of the model once per turn, giving the most prompt tokens per request (the window less
  room for the answer, and never more than ``context_tokens``);
- the one token counter: the model client's ``count_tokens``; every size below is its count;
- the history: remembered turns go newest first, whole when they fit, else compacted to question and answer;
  the oldest are dropped until the request fits; older tool results of this turn are shortened when the turn
  alone is too long;
- the tools from outside (MCP servers): in full while their schemas fit in ``mcp_tool_tokens``, else by name
  and first line, with ``describe_tool`` for a schema when the model asks (decided once per turn, so every
  request of the turn sends the same tools and prompt caches keep them);
- the lean tool set, when even this turn alone does not fit with every tool;
- the answer cap (``max_tokens``) of each request: the setting, or what the window has left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .context import mask_messages
from .llm import LLM, Request, Usage
from .protocol import Prompt, Remembered, ToolProtocol

if TYPE_CHECKING:
    from ..configuration.config import Config

Messages = list[dict[str, Any]]

# The tools kept when the window cannot hold all of them: one fact at a time, least power first.
LEAN_TOOLS = ("list_globals", "get_repr", "eval_expr", "get_last_exception")
MIN_ANSWER_TOKENS = 16
MIN_PROMPT_TOKENS = 256
KEEP_OBSERVATION_CHARS = 600  # what an older tool result keeps when the turn alone is over the budget


@dataclass(frozen=True)
class Limits:
    """The settings a turn is bounded by."""

    max_steps: int = 8
    turn_timeout: float = 120.0
    request_timeout: float = 60.0
    context_tokens: int = 8000
    max_tokens: int = 1024
    budget_usd: float | None = None

    @classmethod
    def of(cls, cfg: Config) -> Limits:
        return cls(
            max_steps=cfg.max_steps,
            turn_timeout=cfg.turn_timeout,
            request_timeout=cfg.request_timeout,
            context_tokens=cfg.context_tokens,
            max_tokens=cfg.max_tokens,
            budget_usd=cfg.budget_usd,
        )


@dataclass(frozen=True)
class Stop:
    """The turn ends here: ``bound`` names the bound, ``note`` says it to the user in one sentence."""

    bound: str  # "max_steps" | "turn_timeout" | "context_tokens" | "budget_usd"
    note: str


def money_stop(limits: Limits, spent: Usage, requests: int) -> Stop | None:
    """A stop when the next request would go over the session's money budget (``budget_usd``), given what
    the session has ``spent`` in ``requests`` model requests."""
    if limits.budget_usd is None:
        return None
    cost = spent.cost_usd or 0.0
    average = cost / requests if requests else 0.0
    left = limits.budget_usd - cost
    if left <= 0 or left < average:  # a typical request would go over
        return Stop(
            "budget_usd", "Stopped: the next request would go over the session's money budget (budget_usd)."
        )
    return None


class Budget:
    """Bounds and sizes one turn's requests (see the module docstring)."""

    def __init__(
        self,
        llm: LLM,
        limits: Limits,
        prompt: Prompt,
        *,
        spent_before: Usage | None = None,
        requests_before: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.llm = llm
        self.limits = limits
        self.prompt = prompt
        self.spent_before = spent_before or Usage()
        self.requests_before = requests_before
        self.clock = clock
        self.offered = prompt.schemas  # our tools and, from ``start``, the outside ones in the form chosen
        self.outside_form: str | None = None  # "full" or "brief" once chosen
        self.tools = prompt.schemas  # becomes the lean set, for the rest of the turn, when a window is small
        self.window: int | None = None
        self.prompt_limit = limits.context_tokens
        self.prompt_tokens = 0  # of the latest request (or of the one that did not fit)
        self.deadline = clock() + limits.turn_timeout
        self._sizes: dict[tuple[int, str], int] = {}
        self._prefixes: dict[tuple[int, int], int] = {}

    def start(self) -> None:
        """Size the turn once the model library is loaded: the window, and the turn's clock starts now
        (loading the library is a one-off cost of the session, not of this question)."""
        self.window = self.llm.context_window()
        if self.window:
            room = min(self.limits.max_tokens, max(self.window // 4, 64))
            self.prompt_limit = max(MIN_PROMPT_TOKENS, min(self.limits.context_tokens, self.window - room))
        self.offered = self.tools = [*self.prompt.schemas, *self._outside_tools()]
        self.deadline = self.clock() + self.limits.turn_timeout

    def _outside_tools(self) -> list[dict[str, Any]]:
        """The MCP tools in full when they fit in their share, else by name and first line with
        ``describe_tool`` (the token counter measures what each form adds to a request)."""
        outside = self.prompt.outside
        if outside is None or not outside.full:
            return []
        probe: Messages = [{"role": "user", "content": "?"}]
        added = self._count(probe, outside.full) - self._count(probe, None)
        if added <= outside.full_tokens:
            self.outside_form = "full"
            return outside.full
        self.outside_form = "brief"
        return [*outside.brief, outside.describe]

    # -- time ----------------------------------------------------------------------------------------------
    def out_of_time(self, margin: float = 0.0) -> bool:
        return self.clock() >= self.deadline - margin

    def time_up(self) -> Stop:
        return Stop("turn_timeout", f"Stopped after {self.limits.turn_timeout:g} s (the turn_timeout bound).")

    def request_timeout(self) -> float:
        return max(0.1, min(self.limits.request_timeout, self.deadline - self.clock()))

    # -- the next request ----------------------------------------------------------------------------------
    def next_request(
        self, protocol: ToolProtocol, current: Messages, *, step: int, spent: Usage, requests: int
    ) -> Request | Stop:
        """The request for step ``step + 1`` of this turn (``current``: its messages so far), or a stop."""
        stop = self._bound(step, spent, requests)
        if stop is not None:
            return stop
        now = protocol.messages(self.prompt, self.offered, current)
        fitted = self._fit(protocol, now, protocol.tools(self.tools))
        if fitted is None and protocol.tools(self.tools) and len(self.tools) > len(LEAN_TOOLS):
            lean = [s for s in self.tools if s.get("function", {}).get("name") in LEAN_TOOLS]
            if lean:
                self.tools = lean
                fitted = self._fit(protocol, now, protocol.tools(lean))
        if fitted is None:
            return Stop("context_tokens", self._context_note(current[0], step))
        messages, tools, tokens = fitted
        self.prompt_tokens = tokens
        cap = self.limits.max_tokens if not self.window else min(self.limits.max_tokens, self.window - tokens)
        prefix = self._prefix_tokens(messages[0], tools)
        return Request(messages, tools, max(MIN_ANSWER_TOKENS, cap), prefix, tokens)

    def _prefix_tokens(self, system: dict[str, Any], tools: list[dict[str, Any]] | None) -> int:
        """Tokens of the stable prefix, the system message and the tools (counted once per turn and form)."""
        key = (hash(system["content"]) if isinstance(system.get("content"), str) else 0, id(tools))
        if key not in self._prefixes:
            self._prefixes[key] = self._count([system], tools)
        return self._prefixes[key]

    def _bound(self, step: int, spent: Usage, requests: int) -> Stop | None:
        limits = self.limits
        if step >= limits.max_steps:
            return Stop(
                "max_steps",
                f"Stopped after {limits.max_steps} steps (the max_steps bound); ask a narrower question or "
                "raise --max-steps.",
            )
        if self.out_of_time():
            return self.time_up()
        return self.money_stop(spent, requests)

    def money_stop(self, spent: Usage, requests: int) -> Stop | None:
        """``money_stop`` for this turn, given what it has ``spent`` in ``requests`` model requests."""
        return money_stop(self.limits, self.spent_before + spent, self.requests_before + requests)

    # -- fitting -------------------------------------------------------------------------------------------
    def _fit(
        self, protocol: ToolProtocol, now: Messages, tools: list[dict[str, Any]] | None
    ) -> tuple[Messages, list[dict[str, Any]] | None, int] | None:
        """System + as much history as fits + this turn, and its tokens; ``None`` when this turn alone is
        too long even with its older tool results shortened."""
        system, current = now[0], now[1:]
        limit = self.prompt_limit
        base = self._count([system, *current], tools)
        if base > limit:
            current = self._shorten_observations(system, current, tools)
            base = self._count([system, *current], tools)
            if base > limit:
                self.prompt_tokens = base
                return None
        history = self._history(protocol, room=limit - base)
        while True:
            messages = [system, *(m for turn in history for m in turn), *current]
            tokens = self._count(messages, tools) if history else base
            if tokens <= limit:
                return messages, tools, tokens
            history = history[1:]  # the pieces' counts were a little off: drop the oldest turn until it fits

    def _history(self, protocol: ToolProtocol, room: int) -> list[Messages]:
        """Remembered turns that fit in ``room`` tokens, oldest first: the newest whole where possible, older
        ones compacted; the first turn that fits in neither form ends the history."""
        mask = self.prompt.mask
        kept: list[Messages] = []
        for turn in reversed(self.prompt.history):
            full = mask_messages(protocol.remembered(turn.messages, turn.compact), mask)
            compact = mask_messages(turn.compact, mask)
            for form, messages in (("full", full), ("compact", compact)):
                size = self._size(turn, protocol.name + form, messages)
                if size <= room:
                    kept.insert(0, messages)
                    room -= size
                    break
            else:
                break
        return kept

    def _size(self, turn: Remembered, form: str, messages: Messages) -> int:
        key = (id(turn), form)
        if key not in self._sizes:
            self._sizes[key] = self._count(messages, None)
        return self._sizes[key]

    def _shorten_observations(
        self, system: dict[str, Any], current: Messages, tools: list[dict[str, Any]] | None
    ) -> Messages:
        """Cut this turn's older tool results (never the question or the newest result) until it fits."""
        out = [dict(m) for m in current]
        results = [i for i, m in enumerate(out) if i > 0 and m.get("role") in ("tool", "user")]
        for i in results[:-1]:
            text = out[i].get("content")
            if isinstance(text, str) and len(text) > KEEP_OBSERVATION_CHARS:
                dropped = len(text) - KEEP_OBSERVATION_CHARS
                out[i]["content"] = (
                    text[:KEEP_OBSERVATION_CHARS]
                    + f"\n… {dropped:,} characters dropped to fit the context budget"
                )
                if self._count([system, *out], tools) <= self.prompt_limit:
                    break
        return out

    def _count(self, messages: Messages, tools: list[dict[str, Any]] | None) -> int:
        return self.llm.count_tokens(messages, tools)

    def _context_note(self, question: dict[str, Any], step: int) -> str:
        """Why the request cannot be sent, and what helps. The history is already dropped to fit (``_fit``),
        so forgetting it (``/clear``) never does: what is too long is the question itself, or this turn's
        tool results."""
        if self.window and self.prompt_limit < self.window:
            bound = f"the model's {self.window:,}-token window holds with room for the answer"
            larger = "use a model with a larger window"
        else:
            bound = f"the context budget of {self.limits.context_tokens:,} tokens allows (context_tokens)"
            larger = "raise context_tokens"
        own = self._count([{"role": "user", "content": question.get("content") or ""}], None)
        rest = self.prompt_tokens - own  # the instructions, the tools, the picture and the turn's results
        if own * 2 > self.prompt_limit or own > rest:
            return (
                f"Stopped: the question itself is about {own:,} tokens (the whole request about "
                f"{self.prompt_tokens:,}), more than {bound}; /clear cannot help, as it only forgets earlier "
                'turns: put the text in a variable (it = """…""" in Python mode) and ask about @it, '
                f"which the assistant reads in bounded pieces, or {larger}."
            )
        if step == 0:
            return (
                f"Stopped: pyaichat's instructions, tools and the session picture need about {rest:,} "
                f"tokens, more than {bound}; {larger}."
            )
        return (
            f"Stopped: this turn's request, with its tool results, needs about {self.prompt_tokens:,} "
            f"tokens, more than {bound}; ask a narrower question, or {larger}."
        )
