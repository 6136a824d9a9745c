"""What a slash command is, and where each area declares its own: ``@command`` in its module (``core``,
``inspect``, ``assistant``, ``work``, ``suggest``, ``mcp``) puts it into ``DECLARED``. The package
(``commands.COMMANDS``) names those modules and imports them on its first look-up; they import only this
module, so no import runs back to the one that loads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .host import CommandHost

Handler = Callable[["CommandHost", str], None]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler


DECLARED: dict[str, Command] = {}  # by name, as the command modules declare them


def command(name: str, usage: str = "", help: str = "") -> Callable[[Handler], Handler]:
    """Decorator: declare ``handler(ctrl, arg)`` as ``/name``; its docstring is the help unless given."""

    def wrap(handler: Handler) -> Handler:
        DECLARED[name] = Command(name, usage or f"/{name}", help or (handler.__doc__ or "").strip(), handler)
        return handler

    return wrap


def declared() -> list[Command]:
    """Every command declared so far, by name (all of them once the package has looked one up: a command
    that runs, ``/help``, was found by that look-up)."""
    return sorted(DECLARED.values(), key=lambda c: c.name)
