"""Read-only capabilities over a live session (see ``registry``). ``call`` is the public entry point."""

from .registry import (
    Capability,
    CapabilityContext,
    CapabilityResult,
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
    "all_capabilities",
    "call",
    "capability",
    "get",
    "register",
    "tool_schemas",
]
