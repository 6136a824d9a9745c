"""/status: where the session runs, and for a kernel how it is reached (the link's round trip measured now,
so a slow link to a remote server shows as such)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .table import command

if TYPE_CHECKING:
    from .host import CommandHost


@command("status", "/status", "Where the session runs; for a kernel, its state and the link's round trip.")
def _status(ctrl: CommandHost, arg: str) -> None:
    lines = ctrl.runtime.status_lines()
    lines.append(f"Model: {ctrl.config.model or 'none set (Python mode only)'}.")
    ctrl.notice("\n".join(lines))
