"""What the suggestion engine keeps between keys, and what it reports.

``SuggestStats`` counts requests, answers, tokens and failures (``/suggest``, ``/trace``, ``/cost``);
``Answers`` keeps what is known for a position without asking;
``Pending`` is the position waiting for the pause to end, ``Flight`` the request in flight; ``PromptLoop`` is
a front end's own event loop, which the engine uses so that no key wakes its thread.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio

    from ..llm.infill import CodeAnswer
    from .helper import ModelHelper

# deliver(before, after, text): the answer for that position arrived (called from the engine's thread)
Deliver = Callable[[str, str, str], None]
CACHE = 256  # answers kept, by position


class Answers:
    """The answers known without asking: by position, and along the last one (the user typing what it
    suggested needs no request). The caller holds its lock."""

    def __init__(self) -> None:
        self._by_position: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._latest: tuple[str, str, str] | None = None

    def known(self, before: str, after: str) -> str | None:
        found = self._by_position.get((before, after))
        if found is not None:
            self._by_position.move_to_end((before, after))
            return found
        if self._latest is not None:
            b0, a0, text = self._latest
            if a0 == after and before.startswith(b0) and text.startswith(before[len(b0) :]):
                rest = text[len(before) - len(b0) :]
                self.remember(before, after, rest)
                return rest
        return None

    def remember(self, before: str, after: str, text: str, *, latest: bool = False) -> None:
        self._by_position[(before, after)] = text
        self._by_position.move_to_end((before, after))
        while len(self._by_position) > CACHE:
            self._by_position.popitem(last=False)
        if latest:
            self._latest = (before, after, text)


class SuggestStats:
    """What ``/suggest``, ``/trace`` and ``/cost`` report."""

    __slots__ = (
        "answered",
        "cancelled",
        "completion_tokens",
        "cost_usd",
        "delivered",
        "failed",
        "failing",
        "last_failure",
        "prompt_tokens",
        "requests",
    )

    def __init__(self) -> None:
        self.requests = self.answered = self.delivered = self.cancelled = self.failed = 0
        self.prompt_tokens = self.completion_tokens = 0
        self.cost_usd: float | None = None
        self.last_failure: str | None = None
        self.failing = 0  # requests failed in a row since the last answer (the toolbar says so)

    def count(self, answer: CodeAnswer) -> None:
        self.answered += 1
        self.failing = 0
        self.prompt_tokens += answer.prompt_tokens
        self.completion_tokens += answer.completion_tokens
        if answer.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + answer.cost_usd

    def usage_line(self) -> str | None:
        """For ``/cost``: the suggestions' requests, tokens and cost (``None`` before the first request)."""
        if not self.requests:
            return None
        cost = f"${self.cost_usd:.6f}" if self.cost_usd is not None else "no price known"
        return (
            f"Suggestions: {self.requests} request(s), {self.prompt_tokens:,} prompt + "
            f"{self.completion_tokens:,} completion tokens; cost {cost}."
        )

    def trace_line(self) -> str | None:
        """For ``/trace``: the last failure, quietly (never shown on the screen when it happens)."""
        if self.last_failure is None:
            return None
        return f"Suggestions: {self.failed} failed request(s); last: {self.last_failure}"


class Pending:
    """A position the model will be asked about once the user has paused there since ``since``."""

    __slots__ = ("after", "before", "deliver", "since")

    def __init__(self, before: str, after: str, deliver: Deliver, since: float) -> None:
        self.before, self.after, self.deliver, self.since = before, after, deliver, since


class Flight:
    """The request in flight: its task on the engine's loop, its position, and the helper process that
    makes it (``None``: a model call that only the engine's thread can cancel)."""

    __slots__ = ("helper", "position", "task")

    def __init__(
        self, task: asyncio.Task[None], position: tuple[str, str], helper: ModelHelper | None
    ) -> None:
        self.task, self.position, self.helper = task, position, helper


class PromptLoop(Protocol):
    """A front end's own event loop, running anyway while the user types: with it, no key wakes the
    engine's thread."""

    def call_later(self, delay: float, func: Callable[[], None]) -> object:
        """Run ``func`` on that loop after ``delay`` seconds (the pause is timed there)."""
        ...

    def after_echo(self, func: Callable[[], None]) -> None:
        """Run ``func`` on that loop once the key being handled is on the screen (a stale request is
        aborted then: the helper's work for it never competes with the key's echo)."""
        ...
