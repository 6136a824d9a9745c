"""Completion from the live namespace that never runs user code with side effects (the local runtime's
``complete`` and ``user_names``; a kernel answers those itself).

Names, attribute paths (``df.col``) and dict keys (``d["ke``) are completed from the session's namespace.
Attribute paths are resolved with ``inspect.getattr_static``: properties and unknown descriptors are never
called, only C-level slot/getset descriptors and pandas' axis properties, which only read memory. The one
call that may run foreign code is an overridden ``__dir__`` (pandas adds column names there); it runs in a
worker thread with a deadline, so a hanging ``__dir__`` cannot freeze the prompt.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import keyword
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..workers import within

_PATH = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_KEY_RE = re.compile(rf"(?<![\w.])(?P<path>{_PATH})\[\s*(?P<quote>['\"])(?P<prefix>[^'\"\\]*)$")
_ATTR_RE = re.compile(rf"(?<![\w.])(?P<path>{_PATH})\.(?P<prefix>\w*)$")
_NAME_RE = re.compile(r"(?<![\w.])(?P<prefix>[A-Za-z_]\w*)$")

#: Descriptor types whose ``__get__`` only reads memory (C slots and C getters), so resolving them is safe.
_SAFE_DESCRIPTORS: tuple[type, ...] = (types.MemberDescriptorType, types.GetSetDescriptorType)
#: Third-party descriptor types known to be pure reads (``df.columns``, ``df.index``).
_SAFE_DESCRIPTOR_MODULES = ("pandas._libs.properties",)
_MAX_KEYS = 2000
DIR_TIMEOUT = 0.2


class Completion:
    """One candidate: ``text`` replaces the ``-start`` characters before the cursor; ``display`` is what a
    menu shows instead of the text, ``meta`` a note beside it (a type name)."""

    __slots__ = ("display", "meta", "start", "text")

    def __init__(
        self, text: str, start: int = 0, display: str | None = None, meta: str | None = None
    ) -> None:
        self.text, self.start, self.display, self.meta = text, start, display, meta

    def __repr__(self) -> str:
        return f"Completion({self.text!r}, {self.start})"


class Unresolvable(Exception):
    """The path cannot be resolved without running code we do not trust."""


def resolve_path(namespace: Mapping[str, Any], path: str) -> Any:
    """The object named by a dotted ``path``, found without calling properties or ``__getattr__``."""
    first, *rest = path.split(".")
    if first in namespace:
        obj = namespace[first]
    elif hasattr(builtins, first):
        obj = getattr(builtins, first)
    else:
        raise Unresolvable(first)
    for name in rest:
        obj = static_attr(obj, name)
    return obj


def static_attr(obj: Any, name: str) -> Any:
    """``getattr(obj, name)`` for attributes that can be read without running Python-level code."""
    try:
        attr = inspect.getattr_static(obj, name)
    except AttributeError:
        raise Unresolvable(name) from None
    if isinstance(obj, (type, types.ModuleType)):
        # Class and module attributes: unwrap the classic wrappers, never trigger other descriptors.
        # (a property or other descriptor is returned as the descriptor object: completing its own attributes
        # is harmless, and nothing is triggered)
        if isinstance(attr, (staticmethod, classmethod)):
            return attr.__func__
        return attr
    own = _instance_dict(obj)
    if own is not None and own.get(name, _MISSING) is attr:
        return attr  # a value stored on the instance: returned as is, whatever its type
    kind = type(attr)
    if isinstance(attr, _SAFE_DESCRIPTORS) or kind.__module__.startswith(_SAFE_DESCRIPTOR_MODULES):
        try:
            return getattr(obj, name)
        except Exception:
            raise Unresolvable(name) from None
    if isinstance(attr, (types.FunctionType, staticmethod, classmethod)):
        return attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
    if not _is_plain(attr):
        raise Unresolvable(name)  # a property or unknown descriptor would run code
    return attr


_MISSING = object()


def _instance_dict(obj: Any) -> dict[str, Any] | None:
    """``obj.__dict__`` through the C-level getter (as getattr_static reads it), never ``__getattr__``."""
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:
        return None
    return own if isinstance(own, dict) else None


def _is_plain(attr: Any) -> bool:
    """True for values stored as they are (no ``__get__`` that could run code on access)."""
    return not hasattr(type(attr), "__get__") or isinstance(
        attr, (types.FunctionType, types.BuiltinFunctionType)
    )


def run_bounded(fn: Callable[[], Any], timeout: float = DIR_TIMEOUT) -> Any:
    """``fn()`` in a worker thread; ``None`` if it fails or does not finish within ``timeout``."""
    try:
        return within(fn, timeout)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a custom __dir__ that fails or hangs: no completions from it
        return None


def attribute_names(obj: Any, timeout: float = DIR_TIMEOUT) -> set[str]:
    """Attribute names: static ones (``__dict__``, the MRO) plus those of a bounded custom ``__dir__``."""
    names: set[str] = set()
    own = _instance_dict(obj)
    if own is not None:
        names.update(k for k in own if isinstance(k, str))
    klass = obj if isinstance(obj, type) else type(obj)
    for base in getattr(klass, "__mro__", (klass,)):
        names.update(k for k in vars(base) if isinstance(k, str))
    if isinstance(obj, type):
        names.update(k for k in vars(type(obj)) if isinstance(k, str) and not k.startswith("__"))
    custom_dir = inspect.getattr_static(type(obj), "__dir__", None)
    if custom_dir is not None and custom_dir is not object.__dir__ and not isinstance(obj, types.ModuleType):
        extra = run_bounded(lambda: list(dir(obj)), timeout)
        if isinstance(extra, list):
            names.update(k for k in extra if isinstance(k, str))
    return names


def mapping_keys(obj: Any) -> list[str] | None:
    """String keys of a plain dict or the column names of a pandas DataFrame; ``None`` for anything else."""
    if isinstance(obj, dict) and inspect.getattr_static(type(obj), "keys", None) is dict.keys:
        keys: Iterable[Any] = list(itertools.islice(dict.keys(obj), _MAX_KEYS))
    elif type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas"):
        try:
            keys = list(itertools.islice(static_attr(obj, "columns"), _MAX_KEYS))
        except Unresolvable:
            return None
    else:
        return None
    return [k for k in keys if isinstance(k, str)]


def _inside_string(line_before: str) -> bool:
    """A cheap check that the cursor is inside a string literal (then names are not completed)."""
    quote = None
    i = 0
    while i < len(line_before):
        ch = line_before[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return True  # a comment: nothing to complete either
        i += 1
    return quote is not None


def _type_name(value: Any) -> str:
    return type(value).__name__


def complete(
    namespace: Mapping[str, Any], text: str, cursor: int | None = None, *, dir_timeout: float = DIR_TIMEOUT
) -> list[Completion]:
    """Names, attributes and dict keys for the line of ``text`` before ``cursor`` (default: its end)."""
    line = text[: len(text) if cursor is None else cursor].rpartition("\n")[2]
    try:
        return list(_complete(namespace, line, dir_timeout))
    except Exception:  # completion must never break the prompt
        return []


def _complete(namespace: Mapping[str, Any], line: str, dir_timeout: float) -> Iterator[Completion]:
    match = _KEY_RE.search(line)
    if match:
        yield from _keys(namespace, match)
        return
    if _inside_string(line):
        return
    match = _ATTR_RE.search(line)
    if match:
        yield from _attributes(namespace, match.group("path"), match.group("prefix"), dir_timeout)
        return
    match = _NAME_RE.search(line)
    if match:
        yield from _names(namespace, match.group("prefix"))


def _keys(namespace: Mapping[str, Any], match: re.Match[str]) -> Iterator[Completion]:
    try:
        obj = resolve_path(namespace, match.group("path"))
    except Unresolvable:
        return
    keys = mapping_keys(obj)
    prefix, quote = match.group("prefix"), match.group("quote")
    for key in sorted(keys or ()):
        if key.startswith(prefix) and quote not in key and "\\" not in key:
            yield Completion(f"{key}{quote}]", -len(prefix), display=key)


def _attributes(
    namespace: Mapping[str, Any], path: str, prefix: str, dir_timeout: float
) -> Iterator[Completion]:
    try:
        obj = resolve_path(namespace, path)
    except Unresolvable:
        return
    for name in sorted(attribute_names(obj, dir_timeout), key=_sort_key):
        if name.startswith(prefix) and (prefix.startswith("_") or not name.startswith("_")):
            yield Completion(name, -len(prefix))


def _names(namespace: Mapping[str, Any], prefix: str) -> Iterator[Completion]:
    seen: set[str] = set()
    groups: list[tuple[Iterable[str], str | None]] = [
        (namespace.keys(), None),
        (keyword.kwlist, "keyword"),
        (dir(builtins), "builtin"),
    ]
    for names, meta in groups:
        for name in sorted((n for n in names if isinstance(n, str)), key=_sort_key):
            if name in seen or not name.startswith(prefix):
                continue
            if name.startswith("_") and not prefix.startswith("_"):
                continue
            seen.add(name)
            yield Completion(name, -len(prefix), meta=meta or _type_name(namespace[name]))


# What IPython binds in a user namespace that is not the user's (as ``capabilities.introspect`` leaves out).
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def user_names(namespace: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Public variables (no modules, nothing IPython put there) with their type names, sorted: what ``@name``
    completes."""
    found = []
    for name in sorted((n for n in namespace if isinstance(n, str)), key=_sort_key):
        if not name.startswith("_") and name.isidentifier() and name not in _IPYTHON_NAMES:
            value = namespace[name]
            if not isinstance(value, types.ModuleType):
                found.append((name, _type_name(value)))
    return found


def _sort_key(name: str) -> tuple[int, str]:
    return (name.startswith("_"), name.lower())
