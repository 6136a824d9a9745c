"""Which modules and classes a preview watches for replaced attributes (``watch``), and whose each is.

Every module loaded in the process and the classes it defines, with an owner that decides what a change
means:

* the session's: the modules it holds (``pd``), the classes it holds (``Account``), the classes its modules
  export (``pd.Series``), the classes of its values and their bases (``DataFrame``, ``NDFrame``), and the
  module a function it holds comes from (``from mylib import helper``) — each change is listed, by the name
  the session knows it under;
* Python's: ``builtins`` and the standard library's modules (``json``, ``pickle``, ``os``, ``logging`` …) and
  their classes — replacing a function or class of one of them is tampering with Python itself;
* pyaichat's own modules and classes (its masking, sandbox, preview, assistant): any change to one is
  tampering with pyaichat;
* every other module the process loaded for itself or a library (``litellm``, ``httpx``, a library's
  dependencies), a ``library``: replacing one of its functions or classes is listed — it changes every later
  use, the assistant's own requests included.

Found in the parent, cached between previews while ``sys.modules`` and the modules' dicts keep their version
tags (``dictwatch``); where dicts have no version tag (Python 3.14) the watch narrows to what the preview
leans on, pyaichat's own and the session's (every watched dict is then compared entry by entry).
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import dictwatch

MAX_TARGETS = 40_000  # dicts watched (modules and classes: a REPL with litellm loaded has ~15,000)
MAX_NAMES = 20_000  # of the session's names looked at
HEAP = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class whose attributes code can set
OURS = "pyaichat."
# pyaichat's modules the preview's report runs through once the code has run (the rest of the sandbox is not)
REPORT_PATH = frozenset(
    f"pyaichat.capabilities.{name}"
    for name in (
        "layout",
        "deadline",
        "sandbox.preview",
        "sandbox.stops",
        "sandbox.effects",
        "sandbox.forms",
        "sandbox.pages",
        "sandbox.watch",
        "sandbox.watchlist",
        "sandbox.unseen",
        "sandbox.dictwatch",
        "sandbox.isolation",
        "sandbox.shared_memory",
    )
)
# the standard library's modules the preview and its report lean on
MACHINERY = frozenset(
    """
    builtins sys os posix posixpath io _io abc _abc types functools _functools collections _collections
    _collections_abc operator _operator itertools reprlib dataclasses copy copyreg json json.encoder
    json.decoder json.scanner _json pickle _pickle marshal threading _thread weakref _weakref _weakrefset
    time gc errno select signal _signal mmap ctypes _ctypes resource struct _struct math hashlib _hashlib
    importlib importlib._bootstrap importlib._bootstrap_external traceback linecache warnings _warnings
    contextlib enum re codecs _codecs socket _socket subprocess _posixsubprocess shutil tempfile asyncio
    asyncio.events asyncio.tasks _asyncio
    """.split()  # noqa: SIM905 (a list of 70 names reads better as words)
)
# Where dicts carry no version tag (``dictwatch.TAGS`` False: Python 3.14), every watched dict is compared
# entry by entry in the child, a copy-on-write fault per object: the watch narrows to these modules,
# pyaichat's own, and the session's own modules and classes (not their exports nor the classes of its
# values, nor the other modules loaded).
CORE = frozenset(
    ("builtins", "sys", "os", "posix", "json", "json.encoder", "pickle", "_pickle", "copyreg", "threading")
)
MACHINERY_CLASSES = (
    ("json", "JSONEncoder"),
    ("json", "JSONDecoder"),
    ("os", "_Environ"),
    ("threading", "Thread"),
    ("reprlib", "Repr"),
    ("pickle", "_Pickler"),
)
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}
# Python's own, taken when this module is imported: a class's dict is put back through them
_set_type_attr, _del_type_attr = type.__setattr__, type.__delattr__
_FLAGS = type.__dict__["__flags__"].__get__  # not what a metaclass says a class's flags are
PYTHONS_OWN = frozenset({"__slotnames__", "__abstractmethods__"})  # what Python caches in a class's dict


@dataclass
class Target:
    label: str  # as the session names it: "pd.DataFrame", "json.encoder", "builtins"
    obj: Any  # the module or class
    owner: str  # "session", "python" (builtins and the standard library) or "ours" (the preview's modules)


def targets(namespace: dict[str, Any]) -> list[Target]:
    """The modules and classes to watch: builtins first, then the machinery (a module both in the session
    and in the standard library, such as ``json``, is Python's), then the session's."""
    found: dict[int, Target] = {}

    def add(label: str, obj: Any, owner: str) -> None:
        if id(obj) not in found and len(found) < MAX_TARGETS:
            found[id(obj)] = Target(label, obj, owner)

    add("builtins", sys.modules["builtins"], "python")
    narrow = not dictwatch.TAGS
    machinery = [(n, m) for n, m in _machinery_modules() if not narrow or n in CORE or n in REPORT_PATH]
    for name, module in machinery:
        add(name, module, owner_of(name))
    for module_name, class_name in MACHINERY_CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type):
            add(f"{module_name}.{class_name}", cls, "python")
    loaded = _loaded()
    for label, obj, owner in loaded:  # pyaichat's own: its masking, sandbox and preview
        if owner == "ours":
            add(label, obj, owner)
    items = list(namespace.items())[:MAX_NAMES]
    kinds = set(map(type, (value for _, value in items)))
    if types.ModuleType in kinds or types.FunctionType in kinds or any(issubclass(k, type) for k in kinds):
        for name, value in items:  # modules, classes and functions: one pass, only when there are some
            try:
                _add_named(add, name, value, narrow)
            except Exception:  # an object whose names are not what Python's own are: not watched
                continue
    for kind in () if narrow else kinds:
        if issubclass(kind, type):
            continue  # a metaclass: the classes themselves were added by name
        for cls in kind.__mro__:
            if cls.__flags__ & HEAP:
                home = str(getattr(cls, "__module__", "?"))
                add(f"{home}.{cls.__qualname__}", cls, owner_of(home))
    if not narrow:  # every other module loaded in the process (the REPL's own: litellm, httpx, logging)
        for label, obj, owner in loaded:
            add(label, obj, owner)
    return [t for t in found.values() if _has_dict(t.obj)]


_loaded_seen: tuple[int | None, list[tuple[str, Any, str]]] | None = None  # (sys.modules' tag, targets)


def _loaded() -> list[tuple[str, Any, str]]:
    """Every module in ``sys.modules`` and the classes it defines, with their owner (``ours``, ``python``,
    or ``library`` for one the session does not hold), found again only when ``sys.modules`` changed."""
    global _loaded_seen
    tag = dictwatch.tag(sys.modules)
    if _loaded_seen is not None and tag is not None and _loaded_seen[0] == tag:
        return _loaded_seen[1]
    found: list[tuple[str, Any, str]] = []
    for name, module in list(sys.modules.items()):
        if type(module) is not types.ModuleType or name == "__main__" or type(name) is not str:
            continue
        owner = owner_of(name)
        owner = "library" if owner == "session" else owner
        found.append((name, module, owner))
        for attr, cls in _module_classes(module):
            if cls.__module__ == name:
                found.append((f"{name}.{attr}", cls, owner))
    _loaded_seen = (tag, found)
    return found


def _has_dict(obj: Any) -> bool:
    try:
        dict_of(obj)
    except Exception:  # a class whose ``__dict__`` a metaclass replaced, say
        return False
    return True


def _add_named(add: Callable[[str, Any, str], None], name: str, value: Any, narrow: bool) -> None:
    kind = type(value)
    if kind is types.ModuleType:
        if value.__name__ == "__main__":
            return
        owner = owner_of(value.__name__)
        add(name, value, owner)
        if owner == "session" and not narrow:
            for attr, cls in _module_classes(value):
                add(f"{name}.{attr}", cls, owner_of(cls.__module__))
    elif issubclass(kind, type):
        if value.__flags__ & HEAP:
            add(name, value, owner_of(str(value.__module__)))
    elif kind is types.FunctionType:  # ``from mylib import helper``: mylib is the session's too
        home = sys.modules.get(str(value.__module__ or ""))
        if isinstance(home, types.ModuleType) and home.__name__ != "__main__":
            add(home.__name__, home, owner_of(home.__name__))


def owner_of(module_name: str) -> str:
    if module_name.startswith(OURS):
        return "ours"
    return "python" if module_name.partition(".")[0] in _STDLIB else "session"


_machinery_seen: tuple[int | None, list[tuple[str, types.ModuleType]]] | None = None  # (sys.modules' tag, …)


def _machinery_modules() -> list[tuple[str, types.ModuleType]]:
    """The machinery's loaded modules (``json``, ``json.encoder``, ``os`` …) and the preview's own, under
    the names ``sys.modules`` has them."""
    global _machinery_seen
    tag = dictwatch.tag(sys.modules)
    if _machinery_seen is not None and tag is not None and _machinery_seen[0] == tag:
        return _machinery_seen[1]
    found = [
        (name, module)
        for name, module in list(sys.modules.items())
        if (name in MACHINERY or name in REPORT_PATH) and isinstance(module, types.ModuleType)
    ]
    _machinery_seen = (tag, found)
    return found


_classes: dict[int, tuple[Any, int | None, list[tuple[str, type]]]] = {}  # id(module) -> (module, tag, …)


def _module_classes(module: types.ModuleType) -> list[tuple[str, type]]:
    """The classes a module exports (``pd.DataFrame``), found again only when its dict changed."""
    namespace = vars(module)
    tag = dictwatch.tag(namespace)
    known = _classes.get(id(module))
    if known is not None and known[0] is module and tag is not None and known[1] == tag:
        return known[2]
    found = [(k, v) for k, v in list(namespace.items()) if issubclass(type(v), type) and _FLAGS(v) & HEAP]
    if len(_classes) > 8000:
        _classes.clear()
    _classes[id(module)] = (module, tag, found)
    return found


_dicts: dict[int, tuple[type, dict[str, Any]]] = {}  # id(class) -> (class, its __dict__'s own dict)


def dict_of(obj: Any) -> dict[str, Any]:
    """A module's ``__dict__``, or the dict behind a class's read-only ``__dict__`` mapping."""
    if isinstance(obj, types.ModuleType):
        return vars(obj)
    known = _dicts.get(id(obj))
    if known is not None and known[0] is obj:
        return known[1]
    proxy = type.__dict__["__dict__"].__get__(obj)  # not what a metaclass may say ``__dict__`` is
    (real,) = gc.get_referents(proxy)
    if not isinstance(real, dict):
        raise TypeError("not a class's own dict")
    if len(_dicts) > 2 * MAX_TARGETS:
        _dicts.clear()
    _dicts[id(obj)] = (obj, real)
    return real


def class_setter(cls: type) -> Callable[[str, Any], None]:
    """How ``dictwatch.Watched.restore`` writes a class's dict: ``type.__setattr__`` (a metaclass's own
    ``__setattr__`` is not asked)."""

    def put(key: str, value: Any) -> None:
        if value is dictwatch.GONE:
            _del_type_attr(cls, key)
        else:
            _set_type_attr(cls, key, value)

    return put


def is_machinery(value: Any) -> bool:
    """A function, class or module: replacing one changes how Python itself behaves (a replaced number or
    cache of the standard library is its own business)."""
    return callable(value) or isinstance(value, types.ModuleType)


def plumbing(module: types.ModuleType, key: str, value: Any) -> bool:
    """A name Python adds to a module by itself: a submodule imported, ``__warningregistry__``."""
    if key.startswith("__"):
        return True
    return isinstance(value, types.ModuleType) and value.__name__ == f"{module.__name__}.{key}"
