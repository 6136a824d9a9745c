"""Read-only capabilities over a live session (see ``registry``). ``call`` is the public entry point.

Imports inside the package go one way: ``registry`` imports none of the modules that register into it; this
``__init__`` tells it how to load them (``builtin`` and ``plugins``) on first use.
"""

from . import registry as _registry
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


def _load_capabilities() -> None:
    from . import builtin, plugins  # noqa: F401  (importing ``builtin`` registers the built-in capabilities)

    plugins.load_all()


_registry.load_capabilities = _load_capabilities
