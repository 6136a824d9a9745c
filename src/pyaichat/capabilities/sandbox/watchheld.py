"""pyaichat's own state held in containers, for the preview's watch (``watch``): the lists, dicts, sets and
bytearrays its modules hold (``redact._PATTERNS``, ``redact._maskers``), and those one or two steps further —
in a container, in a class's dict, in an instance's ``__dict__`` (a ``Masker`` in ``_maskers``).

Changing one changes no module's dict (``r._PATTERNS.clear()`` leaves ``redact``'s version tag as it was), yet
it can turn pyaichat's masking off for the rest of the session: any change is tampering. Dicts join the
``dictwatch`` list (their version tags); the others are compared by a fingerprint read in the child before and
after the run — for a list, the raw array of its item pointers, read without touching an item (after
``fork`` each object touched is a copy-on-write fault) — and put back from a copy made in the parent.

Found in the parent, again for a module only when its dict or one of its containers' dicts changed.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

from . import dictwatch
from .watchlist import dict_of

DEPTH = 2  # steps below a module's names: a container's items, a class's or an instance's attributes
MAX_ITEMS = 200  # items of one container looked into
OURS = "pyaichat."
# the watch's own bookkeeping, rebuilt in the parent for every preview: watched, not looked into (thousands
# of other modules' dicts and their copies)
SHALLOW = frozenset(("dictwatch._known", "dictwatch._last", "watchlist._dicts", "watchlist._classes",
                     "watchlist._loaded_seen", "watchlist._machinery_seen", "watch._plans",
                     "watch._held_plans", "watch._plan_ids", "watch._names_seen", "watch._env_seen",
                     "watchheld._found", "scrub._last", "scrub._checks"))  # fmt: skip
_MUTABLE = (dict, list, set, bytearray)


@functools.lru_cache(maxsize=1)
def _list_layout() -> bool:
    """Whether a list's size and item array can be read where CPython puts them (checked on our own list)."""
    try:
        import ctypes  # with the first preview

        if sys.implementation.name != "cpython":
            return False
        probe = [object(), object()]
        word = ctypes.sizeof(ctypes.c_void_p)
        size = ctypes.c_ssize_t.from_address(id(probe) + 2 * word).value
        items = ctypes.c_void_p.from_address(id(probe) + 3 * word).value
        first = ctypes.c_void_p.from_address(items).value if items else None
        return size == 2 and first == id(probe[0])
    except Exception:
        return False


def fingerprint(container: Any) -> Any:
    """What ``container`` holds, by identity: equal fingerprints, the same items (no ``==`` of an item)."""
    if isinstance(container, list) and _list_layout():
        import ctypes  # as above

        word = ctypes.sizeof(ctypes.c_void_p)
        size = ctypes.c_ssize_t.from_address(id(container) + 2 * word).value
        items = ctypes.c_void_p.from_address(id(container) + 3 * word).value
        return size, ctypes.string_at(items, size * word) if items and size > 0 else b""
    if isinstance(container, bytearray):
        return bytes(container)
    return len(container), frozenset(map(id, container))


def copy(container: Any) -> Any:
    return bytes(container) if isinstance(container, bytearray) else list(container)


def put_back(container: Any, copied: Any) -> None:
    """``container`` made to hold what ``copied`` holds again (in the child, before the report)."""
    if isinstance(container, (list, bytearray)):
        container[:] = copied
    else:
        container.clear()
        container.update(copied)


# id(module) -> (module, the session's namespace, the tags it was found under, the containers found)
_found: dict[int, tuple[Any, int, tuple[Any, ...], list[tuple[str, Any]]]] = {}


def held(
    modules: list[tuple[str, types.ModuleType]], seen: set[int], namespace: dict[str, Any]
) -> list[tuple[str, Any]]:
    """The containers pyaichat's ``modules`` hold (``seen``: the ids of dicts watched already, skipped). The
    session's ``namespace`` is never one of them, nor looked into, wherever pyaichat holds it (a kernel
    helper's session): the names in it are the session's, reported as such, not pyaichat's state."""
    out: list[tuple[str, Any]] = []
    for name, module in modules:
        known = _found.get(id(module))
        if (
            known is not None
            and known[0] is module
            and known[1] == id(namespace)
            and None not in known[2]
            and known[2] == _tags(module, known[3])
        ):
            out += known[3]
            continue
        found: list[tuple[str, Any]] = []
        _walk(name, vars(module), 0, found, {id(vars(module)), id(namespace)} | seen)
        _found[id(module)] = (module, id(namespace), _tags(module, found), found)
        out += found
    unique: dict[int, tuple[str, Any]] = {}
    for label, container in out:
        unique.setdefault(id(container), (label, container))
    return list(unique.values())


def _tags(module: types.ModuleType, found: list[tuple[str, Any]]) -> tuple[Any, ...]:
    """The module dict's tag and its dicts' tags (a new ``Masker`` in ``_maskers`` is a new place to look)."""
    tags: list[Any] = [dictwatch.tag(vars(module))]
    tags += [dictwatch.tag(c) if type(c) is dict else len(c) for _, c in found]
    return tuple(tags)


def _walk(label: str, names: dict[str, Any], depth: int, found: list[Any], seen: set[int]) -> None:
    """The containers among ``names`` (a module's, a class's or an instance's attributes), and below them."""
    for key, value in list(names.items())[:MAX_ITEMS] if depth else list(names.items()):
        if type(key) is not str or key.startswith("__"):
            continue
        _visit(f"{label}.{key}", value, depth, found, seen)


def _visit(label: str, value: Any, depth: int, found: list[Any], seen: set[int]) -> None:
    if id(value) in seen:
        return
    kind = type(value)
    mutable = next((base for base in _MUTABLE if issubclass(kind, base)), None)
    if mutable is not None:
        seen.add(id(value))
        found.append((label, value))
    if depth >= DEPTH or label.removeprefix("pyaichat.capabilities.sandbox.") in SHALLOW:
        return
    if mutable is dict or mutable is list:
        items = list(value.values()) if mutable is dict else list(value)
        for i, item in enumerate(items[:MAX_ITEMS]):
            _visit(f"{label}[{i}]", item, depth + 1, found, seen)
    elif kind is tuple or kind is frozenset:
        for i, item in enumerate(list(value)[:MAX_ITEMS]):
            _visit(f"{label}[{i}]", item, depth + 1, found, seen)
    elif mutable is not None:
        return
    elif issubclass(kind, type):  # a class of pyaichat's: its dict is watched already, what it holds is not
        if str(type.__dict__["__module__"].__get__(value)).startswith(OURS):
            seen.add(id(value))
            _walk(label, dict_of(value), depth + 1, found, seen)
    elif str(getattr(kind, "__module__", "")).startswith(OURS) and kind is not types.ModuleType:
        own = _instance_dict(value)  # an instance of pyaichat's class (``Masker``): its attributes
        if own is not None and id(own) not in seen:
            seen.add(id(value))
            found.append((f"{label}.__dict__", own))
            seen.add(id(own))
            _walk(label, own, depth + 1, found, seen)


def _instance_dict(value: Any) -> dict[str, Any] | None:
    """An instance's own ``__dict__`` (read as ``object`` reads it: no ``__getattr__`` of the class)."""
    try:
        own = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return None
    return own if type(own) is dict else None
