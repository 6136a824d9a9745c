"""The slash-command registry: each area registers its commands with ``@command`` in its own module (``core``,
``inspect``, ``assistant``, ``work``), which the registry imports on its first look-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..registry import Registry

if TYPE_CHECKING:
    from .host import Controller

Handler = Callable[["Controller", str], None]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler


COMMANDS: Registry[Command] = Registry(
    (
        "pyaichat.commands.core",
        "pyaichat.commands.inspect",
        "pyaichat.commands.assistant",
        "pyaichat.commands.work",
        "pyaichat.commands.suggest",
        "pyaichat.commands.mcp",
        "pyaichat.commands.status",
    )
)


def all_commands() -> list[Command]:
    return sorted(COMMANDS.all(), key=lambda c: c.name)


def names() -> list[str]:
    return [c.name for c in all_commands()]


def command(name: str, usage: str = "", help: str = "") -> Callable[[Handler], Handler]:
    """Decorator: register ``handler(ctrl, arg)`` as ``/name``; its docstring is the help unless given."""

    def wrap(handler: Handler) -> Handler:
        COMMANDS.add(
            name, Command(name, usage or f"/{name}", help or (handler.__doc__ or "").strip(), handler)
        )
        return handler

    return wrap
