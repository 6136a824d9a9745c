"""The seam through which a call that needs the person reaches them: what they are shown (``ToolRequest``) and
what they decided (``ToolDecision``). The front end's side is the one proposal path; this package only asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..capabilities.registry import CapabilityResult


@dataclass(frozen=True)
class ToolRequest:
    """A call that needs the person: what the approval panel shows, in full, and how to run it once they
    say yes (``run(arguments)``: the call, its result masked and bounded; the approver may call it itself,
    as the proposal path does, or leave it to ``ServerTools.run``)."""

    call_id: str
    server: str
    tool: str
    name: str  # as offered to the model
    args: dict[str, Any]  # masked
    description: str  # the server's description of the tool, masked
    reason: str  # why it needs approval
    run: Callable[[dict[str, Any]], CapabilityResult] | None = None


@dataclass(frozen=True)
class ToolDecision:
    """The person's answer: ``run`` (with ``args``, edited or not) or ``no``; ``note`` is what the model is
    told when it did not run (the default says the user declined)."""

    decision: str  # "run" | "no"
    args: dict[str, Any] | None = None
    edited: bool = False
    note: str | None = None


Approve = Callable[[ToolRequest], ToolDecision]
