"""The seams through which a server's wishes reach the person: a call that needs their approval
(``ToolRequest`` and ``ToolDecision``), and a question a server puts to them (``Question`` and ``Answer``, for
elicitation). The front end's side is the one proposal path and its question panel; this package only asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..capabilities.registry import CapabilityResult
    from .form import Field


@dataclass(frozen=True)
class ToolRequest:
    """A call that needs the person: what the approval panel shows, in full, and how to run it once they
    say yes (``run(arguments)``: the call, its result masked and bounded; the approver may call it itself,
    as the proposal path does, or leave it to ``ServerTools.run``). A server's sampling request comes the
    same way: its arguments are the messages it wants completed, ``run`` sends them to the model."""

    call_id: str
    server: str
    tool: str
    name: str  # as offered to the model
    args: dict[str, Any]  # masked
    description: str  # the server's description of the tool, masked
    reason: str  # why it needs approval ("" when the title says it)
    run: Callable[[dict[str, Any]], CapabilityResult] | None = None
    title: str = ""  # the panel's title when it is not a tool call (a sampling request)


@dataclass(frozen=True)
class ToolDecision:
    """The person's answer: ``run`` (with ``args``, edited or not) or ``no``; ``note`` is what the model is
    told when it did not run (the default says the user declined)."""

    decision: str  # "run" | "no"
    args: dict[str, Any] | None = None
    edited: bool = False
    note: str | None = None


Approve = Callable[[ToolRequest], ToolDecision]


@dataclass(frozen=True)
class Question:
    """A server's question to the person (an elicitation): a form of ``fields`` to fill in, or (``url``) an
    address it asks them to open themselves. ``message`` is the server's own text."""

    call_id: str
    server: str
    message: str
    fields: tuple[Field, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class Answer:
    """The person's answer, as the MCP specification words it: ``accept`` (with ``content``, the form's
    values), ``decline`` (they said no) or ``cancel`` (they dismissed it without choosing)."""

    action: str  # "accept" | "decline" | "cancel"
    content: dict[str, Any] | None = None


Ask = Callable[[Question], Answer]


@dataclass(frozen=True)
class Completion:
    """The model's reply to a server's sampling request: its text, the model that wrote it, and why it
    stopped (``endTurn`` or ``maxTokens``, as the specification names them)."""

    text: str
    model: str
    stop_reason: str
    tokens: int = 0  # prompt and completion tokens it cost


Sample = Callable[[list[dict[str, Any]], int, str], Completion]
"""Send masked chat messages to the assistant's model with at most so many tokens for the reply, for the
named server; raises an exception whose text is one sentence when it cannot (a provider error, the
session's money budget)."""
