"""Allow-listed imports, handed to sandboxed code as proxies that refuse the dangerous parts of each module.

A proxy never exposes the real module: every attribute goes through ``ModuleProxy.__getattr__``, which is also
what ``from numpy import load`` uses, so the rules hold for both spellings.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

from ...errors import SandboxViolation
from .rules import (
    ALLOWED_MODULES,
    INTERNALS,
    IO_AND_STATE,
    MODULE_BLOCKS,
    PRIVATE_MESSAGE,
    SAFE_DUNDERS,
    SAFE_TO,
)

_TOKEN = object()


def module_allowed(name: str) -> bool:
    return name in ALLOWED_MODULES


def denied_module(name: str) -> SandboxViolation:
    return SandboxViolation(denied_text(name))


def denied_text(name: str) -> str:
    """Why an import is refused, with what can be imported: the model learns the list when it needs it, and
    ``run_python``'s description, sent with every request, need not carry it."""
    roots = sorted({m.split(".")[0] for m in ALLOWED_MODULES}, key=lambda m: (m in ("numpy", "pandas"), m))
    return f"the module {name} is not available in the sandbox (it can import {', '.join(roots)})"


def check_attr_name(name: object) -> None:
    """The name rules every attribute read obeys (``obj.name``, ``getattr``, ``attrgetter``, pandas dispatch,
    ``from module import name``)."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if not name or (name[0] == "_" and name not in SAFE_DUNDERS):
        raise SandboxViolation(PRIVATE_MESSAGE)
    if name in INTERNALS:
        raise SandboxViolation(f"the attribute {name} leads out of the sandbox and is not available")
    if name in IO_AND_STATE or name.startswith("read_") or (name.startswith("to_") and name not in SAFE_TO):
        raise SandboxViolation(
            f"the attribute {name} is not available in the sandbox (file, network or state)"
        )


class ModuleProxy:
    """Read-only, filtered view of one allow-listed module. ``resolve`` is the policy's attribute check
    applied to each value (modules become proxies, user code is refused, …)."""

    __slots__ = ("__cache", "__mod", "__overrides", "__resolve")

    def __init__(
        self,
        token: object,
        mod: types.ModuleType,
        resolve: Callable[[Any, str], Any],
        overrides: dict[str, Any] | None = None,
    ) -> None:
        if token is not _TOKEN:
            raise SandboxViolation("module proxies cannot be created by sandboxed code")
        self.__mod = mod
        self.__resolve = resolve
        self.__overrides = overrides or {}
        self.__cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__cache[name]
        except KeyError:
            pass
        check_attr_name(name)
        modname = self.__mod.__name__
        reason = MODULE_BLOCKS.get(modname, {}).get(name)
        if reason:
            raise SandboxViolation(f"{modname}.{name} is not available in the sandbox ({reason})")
        if name in self.__overrides:
            value = self.__overrides[name]
        else:
            try:
                value = getattr(self.__mod, name)
            except AttributeError:
                raise AttributeError(f"module {modname!r} has no attribute {name!r}") from None
            value = self.__resolve(value, f"{modname}.{name}")
        self.__cache[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_ModuleProxy__"):
            object.__setattr__(self, name, value)
            return
        raise SandboxViolation("modules cannot be changed in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise SandboxViolation("modules cannot be changed in the sandbox")

    def __dir__(self) -> list[str]:
        blocked = MODULE_BLOCKS.get(self.__mod.__name__, {})
        return sorted(n for n in dir(self.__mod) if not n.startswith("_") and n not in blocked)

    def __repr__(self) -> str:
        return f"<module {self.__mod.__name__!r} (sandboxed)>"

    # RestrictedPython's ``_getattr_`` fast path: one dict lookup for repeated ``math.sqrt`` in a loop.
    def _lookup(self, name: str) -> Any:
        return self.__cache[name] if name in self.__cache else self.__getattr__(name)


def make_proxy(
    mod: types.ModuleType, resolve: Callable[[Any, str], Any], overrides: dict[str, Any] | None = None
) -> ModuleProxy:
    return ModuleProxy(_TOKEN, mod, resolve, overrides)


def import_allowed(name: str) -> types.ModuleType:
    """Import an allow-listed module (already imported by the parent in fork mode, see ``preimport``)."""
    if not module_allowed(name):
        raise denied_module(name)
    mod = sys.modules.get(name)
    if mod is None:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            raise SandboxViolation(f"the module {name} is not installed") from None
    return mod


def preimport(names: set[str]) -> None:
    """Import the allow-listed modules a snippet names *before* forking: a child must not take the import
    lock another thread of the parent may hold, and importing pandas in every child would cost a second."""
    for name in names:
        if module_allowed(name) and name not in sys.modules:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
