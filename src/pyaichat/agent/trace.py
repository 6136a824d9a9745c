"""What a turn leaves behind: its steps, the requests it sent and its answer.

``/trace``, ``/sent``, ``/cost`` and ``/save`` report from these, and the conversation memory keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .llm import Usage
from .receipts import Receipts


@dataclass
class StepRecord:
    """One line of ``/trace``: an LLM request or a tool call. A request that got a reply carries its usage."""

    kind: str  # "llm" | "tool"
    name: str
    duration_ms: float
    size: int = 0
    ok: bool = True
    detail: str = ""
    usage: Usage | None = None
    note: str = ""  # e.g. why a tool call was not run


@dataclass
class TurnResult:
    question: str
    answer: str = ""
    stopped_by: str | None = None
    note: str | None = None
    error: str | None = None
    interrupted: bool = False
    steps: list[StepRecord] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)  # the bodies sent, for /sent
    # requests made for someone else during a tool call (an MCP server's sampling): index → who asked
    side_requests: dict[int, str] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    protocol: str = "native"  # the tool protocol in use when the turn ended
    duration_ms: float = 0.0
    receipts: Receipts | None = None  # the answer's numbers checked (None: off, or no answer)

    @property
    def usage(self) -> Usage:
        """Tokens and cost of this turn: the sum over its model requests (the one place usage is summed)."""
        return Usage.total(s.usage for s in self.steps if s.usage is not None)

    @property
    def requests_made(self) -> int:
        """Model requests that got a reply (whole or cut on purpose)."""
        return sum(1 for s in self.steps if s.usage is not None)
