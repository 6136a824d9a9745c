"""Slash commands: one registry shared by every front end.

Each area registers its commands in its own module (``core``, ``inspect``, ``assistant``); ``/help`` lists
exactly what is registered, so it never advertises a command that does not exist.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .host import Controller

Handler = Callable[["Controller", str], None]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler


_COMMANDS: dict[str, Command] = {}
# Modules that register commands; each is imported on first use of any command.
_MODULES = ("core", "inspect", "assistant")
_loaded = False


def command(name: str, usage: str = "", help: str = "") -> Callable[[Handler], Handler]:
    def wrap(handler: Handler) -> Handler:
        _COMMANDS[name] = Command(name, usage or f"/{name}", help or (handler.__doc__ or "").strip(), handler)
        return handler

    return wrap


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _MODULES:
        try:
            importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module}":
                raise


def all_commands() -> list[Command]:
    _ensure_loaded()
    return sorted(_COMMANDS.values(), key=lambda c: c.name)


def names() -> list[str]:
    return [c.name for c in all_commands()]


def dispatch(ctrl: Controller, line: str) -> None:
    """Run the slash command in ``line`` (which starts with ``/``)."""
    _ensure_loaded()
    name, _, arg = line[1:].partition(" ")
    cmd = _COMMANDS.get(name.strip().lower())
    if cmd is None:
        known = " ".join(f"/{n}" for n in names())
        ctrl.notice(f"Unknown command /{name}. Known commands: {known}", level="warning")
        return
    cmd.handler(ctrl, arg.strip())
