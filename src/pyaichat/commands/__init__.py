"""Slash commands: one registry (``registry.COMMANDS``) shared by every front end.

``/help`` lists exactly what is registered, so it never advertises a command that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import COMMANDS, Command, all_commands, names

if TYPE_CHECKING:
    from .host import Controller

__all__ = ["Command", "all_commands", "dispatch", "names"]


def dispatch(ctrl: Controller, line: str) -> None:
    """Run the slash command in ``line`` (which starts with ``/``)."""
    name, _, arg = line[1:].partition(" ")
    cmd = COMMANDS.get(name.strip().lower())
    if cmd is None:
        known = " ".join(f"/{n}" for n in names())
        ctrl.notice(f"Unknown command /{name}. Known commands: {known}", level="warning")
        return
    cmd.handler(ctrl, arg.strip())
