"""Slash commands: one registry (``COMMANDS``) shared by every front end.

``/help`` lists exactly what is registered, so it never advertises a command that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import Registry
from .registry import DECLARED, Command, declared

if TYPE_CHECKING:
    from .host import CommandHost

__all__ = ["COMMANDS", "Command", "all_commands", "dispatch", "names"]

COMMANDS: Registry[Command] = Registry(
    (
        "pyaichat.commands.core",
        "pyaichat.commands.inspect",
        "pyaichat.commands.assistant",
        "pyaichat.commands.work",
        "pyaichat.commands.suggest",
        "pyaichat.commands.mcp",
        "pyaichat.commands.status",
    ),
    DECLARED,
)


def all_commands() -> list[Command]:
    COMMANDS.load()
    return declared()


def names() -> list[str]:
    return [c.name for c in all_commands()]


def dispatch(ctrl: CommandHost, line: str) -> None:
    """Run the slash command in ``line`` (which starts with ``/``)."""
    name, _, arg = line[1:].partition(" ")
    cmd = COMMANDS.get(name.strip().lower())
    if cmd is None:
        known = " ".join(f"/{n}" for n in names())
        ctrl.notice(f"Unknown command /{name}. Known commands: {known}", level="warning")
        return
    cmd.handler(ctrl, arg.strip())
