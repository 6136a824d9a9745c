"""Commands about the assistant: forget (/clear) and look back (/trace, /sent, /cost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.events import CodeEvent
from .registry import command

if TYPE_CHECKING:
    from .host import Controller


@command("clear", "/clear", "Forget the conversation (the session's variables stay).")
def _clear(ctrl: Controller, arg: str) -> None:
    ctrl.assistant.clear()
    ctrl.notice("The assistant forgot the conversation.", level="success")


@command("trace", "/trace", "Show the steps of the last answer with durations and result sizes.")
def _trace(ctrl: Controller, arg: str) -> None:
    ctrl.notice(ctrl.assistant.trace_text())


@command("sent", "/sent", "Show exactly what the provider received in the last turn (after masking).")
def _sent(ctrl: Controller, arg: str) -> None:
    bodies = ctrl.assistant.sent_json()
    if not bodies:
        ctrl.notice("Nothing has been sent to a provider yet.")
        return
    for n, body in enumerate(bodies, 1):
        ctrl.emit(CodeEvent(code=body, language="json", title=f"Request {n} of {len(bodies)}"))


@command("cost", "/cost", "Show the session's token use and cost.")
def _cost(ctrl: Controller, arg: str) -> None:
    ctrl.notice(ctrl.assistant.cost_text())
