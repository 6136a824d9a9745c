"""Where adapters are registered and how a value's adapter is found — never by importing a library.

Adapters are entries of the project's one ``Registry`` mechanism, in two instances that each load on first
use: ``ADAPTERS``, the built-in ones (declared in ``builtin``), and ``PLUGIN_ADAPTERS``, the third-party ones
from the entry-point group ``pyaichat.adapters`` (``plugins``). An entry names the module whose types it
describes and where its adapter is; the adapter itself is imported when a value of such a type is first
described.

``entry_for(value)`` walks the type's MRO and takes the first class whose module — or a package above it
(``pandas`` for ``pandas.core.frame``) — has an entry, counting a class of Python code only where its module
holds it (``structural.defined_at``: a class's ``__module__`` is its own to set). The module is read with
``type``'s own descriptor, so a metaclass runs no code, and the answer is cached per type, by identity. The
installed plugins are read (one scan of the distributions' metadata) only when a class comes from a module
outside the standard library that no built-in adapter describes: a DataFrame, a date or a class of the user's
never costs that scan.
"""

from __future__ import annotations

import importlib
import sys
import threading
import weakref
from typing import Any

from ...registry import Registry
from ..structural import compiled, defined_at, module_of, mro
from .protocol import Adapter


class AdapterEntry:
    """One registered adapter: the module whose types it describes, where it is, and who provides it."""

    __slots__ = ("_adapter", "_lock", "module", "problem", "source", "target")

    def __init__(self, module: str, target: str | Adapter, source: str = "builtin") -> None:
        self.module = module  # "pandas", "_duckdb", "sensors.core"
        self.target = target  # "package.module:Name" (an Adapter subclass or instance), or the adapter itself
        self.source = source  # "builtin", or "plugin <distribution>"
        self.problem = ""  # why it could not be loaded ("" while fine)
        self._adapter: Adapter | None = target if isinstance(target, Adapter) else None
        self._lock = threading.Lock()

    @property
    def builtin(self) -> bool:
        return self.source == "builtin"

    def adapter(self) -> Adapter | None:
        """The adapter, imported on first use; ``None`` (with ``problem`` set) when it cannot be loaded."""
        if self._adapter is not None or self.problem:
            return self._adapter
        with self._lock:
            if self._adapter is None and not self.problem:
                try:
                    self._adapter = _load(self.target)
                except Exception as exc:
                    if self.builtin:
                        raise  # our own: a bug to see, not to hide
                    self.problem = f"{type(exc).__name__}: {exc}"
                    report(f"The adapter for {self.module} ({self.source}) failed to load: {self.problem}.")
        return self._adapter

    def __repr__(self) -> str:
        return f"AdapterEntry({self.module!r}, {self.target!r}, source={self.source!r})"


def _load(target: str | Adapter) -> Adapter:
    if isinstance(target, Adapter):
        return target
    module, _, attr = target.partition(":")
    loaded: Any = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        loaded = getattr(loaded, part)
    if isinstance(loaded, type) and issubclass(loaded, Adapter):
        loaded = loaded()
    if not isinstance(loaded, Adapter):
        raise TypeError(f"{target} is not an Adapter (see pyaichat.capabilities.adapters.protocol)")
    return loaded


def _declare_builtin() -> None:
    from .builtin import targets  # the table of built-in adapters: with the first look-up

    for module, target in targets().items():
        declare(module, target)


def declare_plugins() -> None:
    from .plugins import entry_points  # the installed distributions' metadata: with the first look-up

    for module, target, source in entry_points(problems):
        declare(module, target, source)


ADAPTERS: Registry[AdapterEntry] = Registry((_declare_builtin,))
# Adapters for modules no built-in one describes, from the installed distributions.
PLUGIN_ADAPTERS: Registry[AdapterEntry] = Registry((declare_plugins,))

# Problems with third-party adapters (one sentence each, each said once), listed by ``/tools``.
problems: list[str] = []


def report(problem: str) -> None:
    """Note a problem with a third-party adapter for ``/tools`` (each one once)."""
    if problem not in problems:
        problems.append(problem)


def declare(module: str, target: str | Adapter, source: str = "builtin") -> AdapterEntry | None:
    """Register the adapter at ``target`` for the types of ``module`` (and of its sub-modules). A plugin's
    adapter for a module a built-in adapter describes (or a sub-module of one), or a second one for the same
    module, is refused: a plugin cannot replace a built-in adapter."""
    entry = AdapterEntry(module, target, source)
    if entry.builtin:
        _by_type.clear()
        return ADAPTERS.add(module, entry)
    ADAPTERS.load()
    taken = _match(ADAPTERS.entries, module) or PLUGIN_ADAPTERS.entries.get(module)
    if taken is not None:
        report(
            f"The adapter for {module} from {source} was ignored: {module} is already described by "
            f"{'a built-in adapter' if taken.builtin else taken.source}."
        )
        return None
    _by_type.clear()  # a type seen before may now have an adapter
    return PLUGIN_ADAPTERS.add(module, entry)


def all_entries() -> list[AdapterEntry]:
    """Every adapter, built-in ones first (reading the installed plugins)."""
    return ADAPTERS.all() + PLUGIN_ADAPTERS.all()


# -- finding a value's adapter -------------------------------------------------------------------------------
# Per type, by its id, with a weak reference that says the id is still that type's: a weak-keyed dict would
# hash the class and compare it with ``==``, and a metaclass of the session's may define either.
_by_type: dict[int, tuple[weakref.ref[type], AdapterEntry | None]] = {}
MAX_TYPES = 4096


def entry_for(value: Any) -> AdapterEntry | None:
    """The entry for ``value``'s type, or ``None`` (a dict look-up by id once the type was seen)."""
    cls = type(value)
    known = _by_type.get(id(cls))
    if known is not None and known[0]() is cls:
        return known[1]
    found = _find(cls)
    if len(_by_type) >= MAX_TYPES:
        _by_type.clear()
    _by_type[id(cls)] = (weakref.ref(cls), found)
    return found


def adapter_for(value: Any) -> Adapter | None:
    """The adapter that describes ``value``'s type, or ``None`` (importing the adapter, never the library)."""
    entry = entry_for(value)
    return entry.adapter() if entry is not None else None


def _find(cls: type) -> AdapterEntry | None:
    for klass in mro(cls):  # type's own descriptors: a metaclass cannot run code here
        module = module_of(klass)
        if not module or module in ("builtins", "__main__"):
            continue
        if not (compiled(klass) or defined_at(klass)):
            continue  # it names a module it is not found in: its own claim, not its library's
        ADAPTERS.load()
        entry = _match(ADAPTERS.entries, module)
        if entry is None and module.partition(".")[0] not in _STDLIB:
            PLUGIN_ADAPTERS.load()  # the first such class reads the installed plugins
            entry = _match(PLUGIN_ADAPTERS.entries, module)
        if entry is not None:
            return entry
    return None


def _match(entries: dict[str, AdapterEntry], module: str) -> AdapterEntry | None:
    """The entry for ``module`` or the nearest package above it: ``a.b.c``, then ``a.b``, then ``a``."""
    while module:
        entry = entries.get(module)
        if entry is not None:
            return entry
        module = module.rpartition(".")[0]
    return None


_STDLIB = sys.stdlib_module_names


def load_imported() -> None:
    """Load the registry and the adapters of every library already imported. Called before a fork: a forked
    child must import nothing (another thread of the parent may hold the import lock), yet describes
    whatever its code returns."""
    for entry in all_entries():
        if entry.module in sys.modules:
            try:
                entry.adapter()
            except Exception:  # a broken built-in shows where it is used, not here
                pass
