"""Slash commands: one registry (``COMMANDS``) shared by every front end.

``/help`` lists exactly what is registered, so it never advertises a command that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import Registry
from .table import DECLARED, Command, closest, declared

if TYPE_CHECKING:
    from .host import CommandHost

__all__ = ["COMMANDS", "Command", "all_commands", "did_you_mean", "dispatch", "names", "unknown_sentence"]

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


def did_you_mean(name: str) -> list[str]:
    """The registered commands ``name`` is probably a slip for (``/mpc`` → ``/mcp``), closest first."""
    return closest(name, names())


def unknown_sentence(name: str) -> str:
    """One line for ``/name`` that is not a command: the likely one first, then every known command."""
    known = " ".join(f"/{n}" for n in names())
    guesses = did_you_mean(name)
    if guesses:
        options = " or ".join(f"/{g}" for g in guesses)
        return f"Unknown command /{name}; did you mean {options}? Known commands: {known}"
    return f"Unknown command /{name}. Known commands: {known}"


def dispatch(ctrl: CommandHost, line: str) -> None:
    """Run the slash command in ``line`` (which starts with ``/``)."""
    name, _, arg = line[1:].partition(" ")
    cmd = COMMANDS.get(name.strip().lower())
    if cmd is None:
        ctrl.notice(unknown_sentence(name.strip()), level="warning")
        return
    place = getattr(ctrl.frontend, "place", "piped")
    if not cmd.is_for(place):
        ctrl.notice(cmd.elsewhere or f"/{cmd.name} is not for this front end.", level="warning")
        return
    cmd.handler(ctrl, arg.strip())
