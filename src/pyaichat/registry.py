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
import os
import sys
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


_installed: Any = None  # every installed entry point, read once
_installed_lock = threading.Lock()
# ``sys.path`` as it was when pyaichat was imported (before any of the session's code ran): the places the
# installed distributions are read from (``installed_entry_points``).
_startup_path: tuple[str, ...] = tuple(entry for entry in sys.path if type(entry) is str)


def installed_entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` in the installed distributions. All groups come from one scan of the
    distributions' metadata (tens of milliseconds), made once per process, on the first plugin look-up
    (not at start-up: it must stay fast); a failure to read it raises, each time, for the caller to report.

    The scan may come after the session's code ran, so it asks none of what that code can change:
    ``importlib.metadata.entry_points()`` would call ``find_distributions`` of every finder on
    ``sys.meta_path`` (one the session appended is its code), read every ``sys.path`` entry (an object there
    is asked ``__fspath__``) and open a missing entry as a zip (``zipfile`` asks ``os.PathLike``'s ABC,
    which asks the session's subclasses). Read here: the standard ``MetadataPathFinder`` alone, over the
    directories of ``sys.path`` as it was at import (a directory the session added later is its code to
    import, not an installed plugin); zipped distributions are not read."""
    global _installed
    with _installed_lock:
        if _installed is None:
            _installed = _scan(_startup_path)
        return list(_installed.select(group=group))


def _scan(path: tuple[str, ...]) -> Any:
    """The entry points of the distributions in the directories ``path``, the first of each name only (what
    ``importlib.metadata.entry_points()`` keeps)."""
    from importlib.metadata import DistributionFinder, EntryPoints, MetadataPathFinder

    folders = [entry for entry in path if os.path.isdir(entry or ".")]
    found: list[Any] = []
    names: set[str] = set()
    for dist in MetadataPathFinder.find_distributions(DistributionFinder.Context(path=folders)):
        name = _normalized(dist)
        if name in names:
            continue
        names.add(name)
        found.extend(dist.entry_points)
    return EntryPoints(found)


def _normalized(dist: Any) -> str:
    """A distribution's name as ``importlib.metadata`` dedupes it: from its folder's name where it can (as
    ``entry_points()`` does; parsing every distribution's metadata costs ten times more), else from its
    metadata."""
    name = getattr(dist, "_normalized_name", None)
    if type(name) is str:
        return name
    import re

    return re.sub(r"[-_.]+", "-", str(dist.metadata["Name"] or "")).lower()
