"""Named entries that the modules defining them register, loaded on first use: the one mechanism behind the
capabilities (``capabilities.registry``), the slash commands (``commands.registry``) and the adapters
(``capabilities.adapters.registry``).

A registry names its *providers* up front, as import paths: a module (importing it registers what it
defines, e.g. with a decorator) or ``module:function`` (called after the import, e.g. to load plugins). The
first look-up imports them, so the start-up imports none of them, and a provider imports the registry, never
the other way round. Third-party entries come from entry-point groups (``pyaichat.capabilities``,
``pyaichat.adapters``), read by ``installed_entry_points``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class Registry(Generic[T]):
    """Entries by name, in the order they were added."""

    def __init__(self, providers: Iterable[str]) -> None:
        self.providers = tuple(providers)
        self.entries: dict[str, T] = {}
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
