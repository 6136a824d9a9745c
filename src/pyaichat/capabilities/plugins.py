"""Third-party capabilities from the entry-point group ``pyaichat.capabilities``.

An entry point may name a module (whose ``@capability`` functions register on import), a ``Capability``, a
list of them, or a function returning either. A plugin that fails to load is reported by ``/tools`` instead of
breaking the assistant, and a plugin can never replace a built-in capability of the same name.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

from ..registry import installed_entry_points
from .catalog import _REGISTRY, Capability

GROUP = "pyaichat.capabilities"
# Messages about plugins that could not be loaded, for ``/tools``.
errors: list[str] = []


def _entry_points() -> list[EntryPoint]:
    try:
        return installed_entry_points(GROUP)
    except Exception as exc:  # broken metadata of some unrelated distribution
        errors.append(f"Could not read installed plugins: {type(exc).__name__}: {exc}.")
        return []


def load_all() -> None:
    """Load every plugin once (called by the registry after the built-ins are registered)."""
    for ep in _entry_points():
        dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value.split(":")[0].split(".")[0]
        load_one(ep, f"plugin {dist}")


def load_one(ep: EntryPoint, source: str) -> None:
    before = dict(_REGISTRY)
    try:
        loaded = ep.load()
        found = _capabilities_in(loaded)
    except Exception as exc:
        _REGISTRY.clear()
        _REGISTRY.update(before)
        errors.append(f"Plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}.")
        return
    # Capabilities registered by importing the module, plus any the entry point returned directly.
    new = [cap for name, cap in _REGISTRY.items() if before.get(name) is not cap] + found
    _REGISTRY.clear()
    _REGISTRY.update(before)
    for cap in new:
        if cap.name in before:
            errors.append(f"Plugin {ep.name!r} tried to replace the capability {cap.name!r}; it was ignored.")
            continue
        cap.source = source
        _REGISTRY[cap.name] = cap


def _capabilities_in(loaded: Any) -> list[Capability]:
    if isinstance(loaded, Capability):
        return [loaded]
    if isinstance(loaded, (list, tuple)):
        return [c for c in loaded if isinstance(c, Capability)]
    if callable(loaded) and not isinstance(loaded, type):
        if any(cap.func is loaded for cap in _REGISTRY.values()):
            return []  # an @capability function: importing its module registered it
        return _capabilities_in(loaded())
    return []  # a module: its @capability decorators registered it already
