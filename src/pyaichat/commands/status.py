"""/status: where the session runs, and for a kernel how it is reached (the link's round trip measured now,
so a slow link to a remote server shows as such)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import command

if TYPE_CHECKING:
    from .host import Controller


@command("status", "/status", "Where the session runs; for a kernel, its state and the link's round trip.")
def _status(ctrl: Controller, arg: str) -> None:
    kernel = getattr(ctrl.runtime, "kernel", None)  # a kernel runtime's connection says how it is reached
    status_lines = getattr(kernel, "status_lines", None)
    lines = status_lines() if status_lines is not None else [ctrl.runtime.describe() or "In this process."]
    lines.append(f"Model: {ctrl.config.model or 'none set (Python mode only)'}.")
    ctrl.notice("\n".join(lines))
