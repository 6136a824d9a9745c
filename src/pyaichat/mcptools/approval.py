"""The seams through which a server's wishes reach the person: a call that needs their approval (a
``Proposal`` on the one proposal path, ``tool_proposal``: the turn's ``decide`` answers it with an
``Outcome``), a question a server puts to them (``Question`` and ``Answer``, for elicitation), and a sampling
request answered by the turn's model (``SampledReply``). The front end's side is the proposal path and its
question panel; this package only asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..proposal import ASSISTANT, Proposal

if TYPE_CHECKING:
    from ..capabilities.catalog import CapabilityResult
    from .form import Field


def tool_proposal(
    *,
    call_id: str,
    server: str,
    name: str,
    arguments: dict[str, Any],
    description: str,
    reason: str,
    run: Callable[[dict[str, Any]], CapabilityResult],
    title: str = "",
    scopes: bool = False,
) -> Proposal:
    """A call of ``server``'s tool ``name`` (as offered to the model) that needs the person, as a proposal on
    the one proposal path: what the panel shows, in full — the ``arguments`` (masked), the server's
    ``description`` (masked) and ``reason`` it needs approval — and how it runs once they say yes: ``run``
    (the call, its result masked and bounded), whose text, or error, the proposal's outcome carries. The model
    asks for the call, so the proposal is the assistant's; the server it goes to is in the panel. A server's
    sampling request comes the same way (``title`` then says what it is). ``scopes``: the panel also offers to
    allow the tool for this session or always for this project."""

    def call(chosen: dict[str, Any]) -> str:
        result = run(chosen)
        return result.text if result.ok else f"Error: {result.error}"

    why = f"\n(MCP server {server!r}: {reason}.)" if reason else ""
    return Proposal.of_tool(
        name,
        arguments,
        call,
        source=ASSISTANT,
        explanation=f"{description}{why}".strip(),
        call_id=call_id or None,
        title=title,
        choices="scopes" if scopes else "",
    )


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


AnswerQuestion = Callable[[Question], Answer]
"""The person's answer to a server's question (``None`` where no one can be asked)."""


@dataclass(frozen=True)
class SampledReply:
    """The model's reply to a server's sampling request: its text, the model that wrote it, and why it
    stopped (``endTurn`` or ``maxTokens``, as the specification names them)."""

    text: str
    model: str
    stop_reason: str
    tokens: int = 0  # prompt and completion tokens it cost


Sample = Callable[[list[dict[str, Any]], int, str], SampledReply]
"""Send masked chat messages to the assistant's model with at most so many tokens for the reply, for the
named server; raises an exception whose text is one sentence when it cannot (a provider error, the
session's money budget)."""
