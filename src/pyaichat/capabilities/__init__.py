"""Read-only capabilities over a live session (see ``registry``). ``call`` is the public entry point.

The capabilities register themselves into ``registry.CAPABILITIES`` when their modules are imported; the
registry imports them (``builtin``, then the plugins) on its first look-up.
"""

from .registry import (
    Capability,
    CapabilityContext,
    CapabilityResult,
    NoArgs,
    all_capabilities,
    call,
    capability,
    get,
    register,
    tool_schemas,
)

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
