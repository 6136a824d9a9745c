"""Reading what tests look at back: ``/sent``'s view expanded into the request bodies it shows, and the
cheap token estimate the picture's budgets are held to."""

from __future__ import annotations

import json
from typing import Any


def approx_tokens(obj: Any) -> int:
    """A cheap token estimate (≈4 characters a token); the provider's real counts are reported separately."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, default=str)
    return len(text) // 4 + 1


def expand_sent(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request bodies again from what ``sent_view`` showed (for whoever reads ``/sent`` back)."""
    bodies: list[dict[str, Any]] = []
    for view in shown:
        body = dict(view)
        tools = view.get("tools")
        if isinstance(tools, str) and tools.startswith("(the same "):
            first = int(tools.rsplit(" ", 1)[1].rstrip(")"))
            body["tools"] = bodies[first - 1]["tools"]
        messages = list(view.get("messages") or [])
        if messages and isinstance(messages[0], str) and messages[0].startswith("(messages 1–"):
            shared = int(messages[0].split("–", 1)[1].split(":", 1)[0])
            before = int(messages[0].rsplit(" ", 1)[1].rstrip(")"))
            messages = bodies[before - 1]["messages"][:shared] + messages[1:]
        if "messages" in view:
            body["messages"] = messages
        bodies.append(body)
    return bodies


def observed(content: str) -> str:
    """A tool message's words as the tool gave them: out of the data span a tool's result comes in
    (``pyaichat.untrusted``; a failure is ``Error: `` and its words in a span). pyaichat's own words (a
    proposal's outcome, a refused repeat) come in none and are returned as they are."""
    from pyaichat.untrusted import unwrap

    if content.startswith("Error: <data>\n"):
        return "Error: " + unwrap(content.removeprefix("Error: "))
    return unwrap(content)
