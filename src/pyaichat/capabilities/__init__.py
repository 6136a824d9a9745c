"""Read-only capabilities over a live session (see ``catalog``). ``call`` is the public entry point.

The capabilities declare themselves in ``catalog`` when their modules are imported; ``invoke`` (the one door,
``call``) imports them (``builtin``, then the plugins) on its first look-up.

The registry (and pydantic with it) loads when one of its names is first asked for, not with the package:
the light modules here (``redact``, ``summary``) serve the start-up path, e.g. masking what ``--resume``
keeps after the first input, without the ~100 ms of pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalog import Capability, CapabilityContext, CapabilityResult, NoArgs, capability, register
    from .invoke import all_capabilities, call, get, tool_schemas

__all__ = [
    "Capability",
    "CapabilityContext",
    "CapabilityResult",
    "NoArgs",
    "all_capabilities",
    "call",
    "capability",
    "get",
    "register",
    "tool_schemas",
]


_IN_INVOKE = frozenset({"all_capabilities", "call", "get", "tool_schemas"})


def __getattr__(name: str) -> Any:
    if name in __all__:
        # pydantic: with the first capability, not with the package
        from . import catalog, invoke

        return getattr(invoke if name in _IN_INVOKE else catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
