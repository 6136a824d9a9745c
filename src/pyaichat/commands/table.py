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
    places: tuple[str, ...] = ()  # the front ends it is for (``FrontEnd.place``); (): every one
    elsewhere: str = ""  # what it says where it is not for (what to do there instead)

    def is_for(self, place: str) -> bool:
        return not self.places or place in self.places


DECLARED: dict[str, Command] = {}  # by name, as the command modules declare them


def command(
    name: str, usage: str = "", help: str = "", *, places: tuple[str, ...] = (), elsewhere: str = ""
) -> Callable[[Handler], Handler]:
    """Decorator: declare ``handler(ctrl, arg)`` as ``/name``; its docstring is the help unless given.
    ``places``: the front ends it is for (every one by default); ``elsewhere``: the sentence it says in
    another."""

    def wrap(handler: Handler) -> Handler:
        text = help or (handler.__doc__ or "").strip()
        DECLARED[name] = Command(name, usage or f"/{name}", text, handler, places, elsewhere)
        return handler

    return wrap


def closest(name: str, known: list[str]) -> list[str]:
    """The names in ``known`` that ``name`` is probably a slip for (``/mpc`` → ``/mcp``), closest first: a
    transposition or a missing or extra letter, or a prefix only one of them starts with."""
    import difflib  # only on a mistyped command

    lowered = name.lower()
    close = difflib.get_close_matches(lowered, known, n=2, cutoff=0.6)
    starts = [n for n in known if lowered and n.startswith(lowered)]
    if len(starts) == 1 and starts[0] not in close:
        close.insert(0, starts[0])
    return close


def declared() -> list[Command]:
    """Every command declared so far, by name (all of them once the package has looked one up: a command
    that runs, ``/help``, was found by that look-up)."""
    return sorted(DECLARED.values(), key=lambda c: c.name)
