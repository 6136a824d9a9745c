"""Commands about the assistant: forget (/clear), look back (/trace, /sent, /cost) and keep (/save)."""

from __future__ import annotations

from pathlib import Path
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


@command("save", "/save <file>", "Write the conversation as a Markdown transcript.")
def _save(ctrl: Controller, arg: str) -> None:
    if not arg:
        ctrl.notice("Usage: /save <file>", level="warning")
        return
    path = Path(arg).expanduser()
    try:
        path.write_text(ctrl.assistant.transcript(), encoding="utf-8")
    except OSError as exc:
        ctrl.notice(f"Cannot write {path}: {exc.strerror or exc}.", level="warning")
        return
    ctrl.notice(f"Transcript saved to {path}.", level="success")
