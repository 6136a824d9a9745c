"""Third-party adapters from the entry-point group ``pyaichat.adapters``.

An entry point is named after the module whose types it describes and names an ``Adapter`` subclass or
instance (``sensors = "sensors_pyaichat:SensorAdapter"``). Reading the group imports nothing: the adapter is
imported when a value of such a type is first described, so neither the plugin nor its library costs
anything until then. A plugin never replaces a built-in adapter, and one that cannot be read or loaded is
listed by ``/tools`` instead of breaking a summary.
"""

from __future__ import annotations

import re

from ...registry import installed_entry_points

GROUP = "pyaichat.adapters"
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def entry_points(problems: list[str]) -> list[tuple[str, str, str]]:
    """Every installed plugin adapter as (module of its types, its import path, who provides it), for the
    registry to declare after the built-in ones; what cannot be read is added to ``problems``."""
    try:
        found = installed_entry_points(GROUP)
    except Exception as exc:  # broken metadata of some unrelated distribution
        problems.append(f"Could not read installed adapters: {type(exc).__name__}: {exc}.")
        return []
    declared = []
    for ep in found:
        dist = getattr(getattr(ep, "dist", None), "name", None) or ep.module.split(".")[0]
        if not _MODULE_NAME.fullmatch(ep.name):
            problems.append(
                f"The adapter entry point {ep.name!r} of {dist} was ignored: its name must be the module "
                "whose types it describes (such as 'sensors' or 'sensors.core')."
            )
            continue
        declared.append((ep.name, f"{ep.module}:{ep.attr}" if ep.attr else ep.module, f"plugin {dist}"))
    return declared
