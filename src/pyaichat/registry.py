"""Named entries that the modules defining them register, loaded on first use: the one mechanism behind the
capabilities (``capabilities.registry``), the slash commands (``commands.registry``) and the adapters
(``capabilities.adapters.registry``).

A registry names its *providers* up front: import paths — a module (importing it declares what it defines,
e.g. with a decorator) or ``module:function`` (called after the import, e.g. to load plugins) — or a
function to call. The first look-up loads them, so the start-up loads none of them. The entries a provider
declares go into a dict that lives apart from the registry that loads the provider (``entries``: in the
module that holds the decorator), so that a provider never imports the module that names it: each import
runs one way. Third-party entries come from entry-point groups (``pyaichat.capabilities``,
``pyaichat.adapters``), read by ``installed_entry_points``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class Registry(Generic[T]):
    """Entries by name, in the order they were added."""

    def __init__(
        self, providers: Iterable[str | Callable[[], object]], entries: dict[str, T] | None = None
    ) -> None:
        self.providers = tuple(providers)
        self.entries: dict[str, T] = entries if entries is not None else {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    def add(self, name: str, entry: T) -> T:
        self.entries[name] = entry
        return entry

    def get(self, name: str) -> T | None:
        self.load()
        return self.entries.get(name)

    def all(self) -> list[T]:
        self.load()
        return list(self.entries.values())

    def names(self) -> list[str]:
        self.load()
        return list(self.entries)

    def load(self) -> None:
        """Import the providers, once. Other threads wait for that; a provider that looks the registry up
        while it loads (the same thread) sees the entries added so far."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                for provider in self.providers:
                    if callable(provider):
                        provider()
                        continue
                    module, _, function = provider.partition(":")
                    loaded = importlib.import_module(module)
                    if function:
                        getattr(loaded, function)()
            finally:
                self._loading = False
                self._loaded = True


_installed: Any = None  # every installed entry point (``importlib.metadata.entry_points()``), read once
_installed_lock = threading.Lock()


def installed_entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` in the installed distributions. All groups come from one scan of the
    distributions' metadata (tens of milliseconds), made once per process; a failure to read it raises,
    each time, for the caller to report."""
    global _installed
    with _installed_lock:
        if _installed is None:
            from importlib.metadata import entry_points  # with the first plugin look-up, not at start-up

            _installed = entry_points()  # Python 3.10-3.11: grouped, and ``select`` reads across groups
        return list(_installed.select(group=group))
