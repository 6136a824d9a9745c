"""Commands about the assistant: forget (/clear) and look back (/trace, /sent, /cost, /receipts)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..agent.events import PageEvent, PageSection
from .table import command

if TYPE_CHECKING:
    from .host import CommandHost


@command("clear", "/clear", "Forget the conversation (the session's variables stay).")
def _clear(ctrl: CommandHost, arg: str) -> None:
    ctrl.assistant.clear()
    ctrl.notice("The assistant forgot the conversation.", level="success")


@command("trace", "/trace", "Show the steps of the last answer with durations and result sizes.")
def _trace(ctrl: CommandHost, arg: str) -> None:
    engine = ctrl.suggester_if_any
    quiet = engine.trace_line() if engine is not None else None  # a failed suggestion shows only here
    ctrl.notice(ctrl.assistant.trace_text() + (f"\n{quiet}" if quiet else ""))


@command("sent", "/sent", "Show exactly what the provider received in the last turn (after masking).")
def _sent(ctrl: CommandHost, arg: str) -> None:
    bodies = [json.loads(body) for body in ctrl.assistant.sent_json()]
    if not bodies:
        ctrl.notice("Nothing has been sent to a provider yet.")
        return
    labels = ctrl.assistant.sent_labels()
    sections = [
        PageSection(
            title=f"Request {n} of {len(bodies)}" + (f" (for {label})" if label else ""),
            code=json.dumps(view, indent=2, ensure_ascii=False),
        )
        for n, (view, label) in enumerate(zip(sent_view(bodies, labels), labels, strict=True), 1)
    ]
    ctrl.emit(PageEvent(sections=sections))
    tokens = ctrl.assistant.sent_tokens()
    if tokens:  # after the page: still on the screen once a pager is closed
        ctrl.notice(tokens)


def sent_view(bodies: list[dict[str, Any]], labels: list[str] | None = None) -> list[dict[str, Any]]:
    """The request bodies of a turn as ``/sent`` shows them, each part once: a tool list the same as an
    earlier request's is named, not repeated, and the messages a request shares with the turn's request
    before it are one line (each request repeats the whole conversation so far and every tool schema: a
    two-step question was 645 lines). A request made for someone else (``labels``: an MCP server's sampling)
    is shown whole and is no part of that chain. Nothing else changes."""
    shown: list[dict[str, Any]] = []
    tool_lists: list[tuple[int, Any]] = []
    previous: tuple[int, list[Any]] = (0, [])
    for n, body in enumerate(bodies, 1):
        view = dict(body)
        tools = body.get("tools")
        if tools is not None:
            first = next((m for m, seen in tool_lists if seen == tools), None)
            if first is None:
                tool_lists.append((n, tools))
            else:
                view["tools"] = f"(the same {len(tools)} tools as request {first})"
        shown.append(view)
        if labels and labels[n - 1]:
            continue
        messages = list(body.get("messages") or [])
        before, earlier = previous
        shared = len(earlier) if earlier and messages[: len(earlier)] == earlier else 0
        if shared:
            view["messages"] = [f"(messages 1–{shared}: as in request {before})", *messages[shared:]]
        previous = (n, messages)
    return shown


@command("cost", "/cost", "Show the session's token use and cost.")
def _cost(ctrl: CommandHost, arg: str) -> None:
    engine = ctrl.suggester_if_any
    suggestions = engine.usage_line() if engine is not None else None
    ctrl.notice(ctrl.assistant.cost_text() + (f"\n{suggestions}" if suggestions else ""))


@command("receipts", "/receipts", "Show each number of the last answer: the value it was tied to, and why.")
def _receipts(ctrl: CommandHost, arg: str) -> None:
    last = ctrl.assistant.last
    found = last.receipts if last is not None else None
    if found is None:
        why = "receipts are off (receipts = false)" if not ctrl.config.receipts else "no answer yet"
        ctrl.notice(f"No receipts to show: {why}.")
        return
    if not found.receipts:
        ctrl.notice("The last answer states no number to check.")
        return
    rows = found.lines()
    text = (
        "✓ the value its words name (its row, column, aggregate, noun) was shown by that call; ⚠ its words "
        "name a value the turn showed, and it differs; · nothing the turn showed is tied to it. A ✓ says the "
        "number is what the call returned, not that the call answers the question."
    )
    ctrl.emit(PageEvent(sections=[PageSection(title=found.summary(), rows=rows), PageSection(text=text)]))
