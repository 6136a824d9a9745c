"""Reading the session's objects in the session's own process without running any code of theirs: the
primitives of every in-process read.

pyaichat reads the person's objects in their own process for the fast tier of ``eval_expr`` and the ``expr``
of the introspection tools (``expression``), the session picture and ``list_globals`` (``summary``), the
secret-values scan before every call (``secret_values``), the layouts the fingerprints use (``layout``) and
the facts of a suggestion. Every such read is made of the few kinds below, none of which runs Python code of
any object, nor C code of CPython's that would call back into one:

* **Types.** A value's type is ``type(x)`` — never ``x.__class__`` (a property can answer it) nor
  ``isinstance`` (which asks ``__class__`` when the type alone says no). A class's name, module, MRO and own
  namespace are read with ``type``'s own descriptors (``name_of``, ``module_of``, ``mro``, ``own_dict``), so
  a metaclass's ``__getattribute__`` or properties never run; a class attribute is found by looking in those
  namespaces along the MRO (``lookup``), never by ``getattr`` on the class. ``is_subclass`` compares MRO
  entries by identity (``issubclass`` would ask an ABC's ``__subclasscheck__``).
* **Instance state.** ``attribute(obj, name)`` answers what ``obj.name`` holds when that is a lookup: an
  entry of the instance's ``__dict__`` (found through the type's own ``__dict__`` descriptor), a slot, a
  C-level field of one of Python's own types, a plain class attribute, or a function bound to it. It
  refuses (``NotStructural``) a property — whatever its getter: ``property(list.pop)`` is code too — any
  descriptor whose ``__get__`` is not CPython's own, a type with its own ``__getattribute__``, a miss on a
  type with ``__getattr__``, and a ``__dict__`` with a key that is not an exact ``str`` (looking a name up
  there could compare it with that key).
* **Plain values** (``is_plain``): ``None``, exact ``bool``/``int``/``float``/``complex``/``str``/``bytes``,
  numpy scalars of number, string and date kinds, and exact ``tuple``/``list``/``dict``/``set``/``frozenset``
  of plain values, checked type by type and bounded. Only plain values are compared, hashed, ordered or
  printed by the in-process reads: their ``==``, ``hash``, ``<`` and ``repr`` are CPython's or numpy's own.

The expression reader (``expression.reader``) adds the operators and builtins it allows over plain values,
each with its result's size checked before it is computed (``expression.sizes``), and the declared metadata
attributes of the data libraries (``library_metadata``). Whatever none of these reads goes to the walled
child (``sandbox``), where the session's code may run on a copy.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import sys
import types
from collections.abc import Collection, Iterator
from typing import Any

__all__ = [
    "MISSING",
    "NoAttribute",
    "NotStructural",
    "all_scalars",
    "attribute",
    "class_attribute",
    "collector_paused",
    "defined_at",
    "instance_dict",
    "instance_state",
    "is_plain",
    "is_plain_key",
    "is_subclass",
    "library_root",
    "loaded_module",
    "lookup",
    "module_namespace",
    "module_of",
    "mro",
    "name_of",
    "names_only",
    "own_dict",
    "qualname_of",
    "root_of",
    "shown_plain",
    "str_keys",
]

MISSING: Any = object()
PLAIN_ITEMS = 10_000  # items looked at to call a container plain
PLAIN_DEPTH = 10
MAX_STATE_KEYS = 10_000  # keys of an instance ``__dict__`` checked to be strings

# ``type``'s own descriptors: reading a class's name or namespace through them runs no metaclass code.
_type_dict = type.__dict__["__dict__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_type_name = type.__dict__["__name__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_type_module = type.__dict__["__module__"].__get__
_OBJECT_GETATTRIBUTE = object.__dict__["__getattribute__"]
_MODULE_DICT = vars(types.ModuleType)["__dict__"].__get__
_type_flags = type.__dict__["__flags__"].__get__
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (``class`` statements, ``type()``)

_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_SCALAR_IDS = frozenset(map(id, _SCALARS))
_CONTAINER_IDS = frozenset(map(id, (tuple, list, dict, set, frozenset)))


class NotStructural(Exception):
    """Reading this would run code (the object's or a library's on its behalf); ``reason`` says whose."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class NoAttribute(Exception):
    """The attribute is not there (a plain ``AttributeError``, with nothing that could compute it)."""


def one_of(cls: type, ids: frozenset[int]) -> bool:
    """``cls`` is one of the classes whose ids are ``ids``: ``cls in (a, b)`` would compare classes with
    ``==`` and ``cls in {a, b}`` hash one, and a metaclass of the session's may define either."""
    return id(cls) in ids


def ids(*classes: type) -> frozenset[int]:
    return frozenset(map(id, classes))


# -- types ---------------------------------------------------------------------------------------------------
def mro(cls: type) -> tuple[type, ...]:
    return _type_mro(cls)


def own_dict(cls: type) -> Any:
    """The class's own namespace (a read-only view of its ``__dict__``)."""
    return _type_dict(cls)


def name_of(cls: type) -> str:
    return _type_name(cls)


def qualname_of(cls: type) -> str:
    return _type_qualname(cls)


def module_of(cls: type) -> str:
    """``cls.__module__``, or ``""`` when a class put something else there."""
    module = _type_module(cls)
    return module if type(module) is str else ""


def root_of(cls: type) -> str:
    """The top-level package of the module ``cls`` comes from (``pandas`` for ``pandas.core.frame``)."""
    return module_of(cls).partition(".")[0]


def lookup(cls: type, name: str) -> Any:
    """The first entry named ``name`` in the own namespaces along ``cls``'s MRO (``MISSING`` if none): what
    ``getattr`` would find on the type, found without running anything."""
    for klass in _type_mro(cls):
        found = _type_dict(klass).get(name, MISSING)
        if found is not MISSING:
            return found
    return MISSING


def compiled(cls: type) -> bool:
    """``cls`` is a static type of compiled code (numpy's ``ndarray``, pyarrow's arrays, Python's own): no
    ``class`` statement made it, and nothing can be set on it, so its namespace is its library's own."""
    return not _type_flags(cls) & _HEAP_TYPE


def defined_at(cls: type) -> bool:
    """``cls`` is the class its module says it is: the object found under its qualified name in the real
    module ``sys.modules[cls.__module__]`` (module and name read from the type's own slots, the namespaces
    through their own dicts). A class that sets ``__module__ = "pandas.x"`` itself is not pandas'."""
    module = module_of(cls)
    if not module or module == "__main__":
        return False
    namespace = module_namespace(loaded_module(module))
    found: Any = MISSING
    for part in qualname_of(cls).split("."):
        if found is not MISSING:  # a nested class: its outer class's own namespace, names only
            if not is_subclass(type(found), type) or not names_only(_namespace(found)):
                return False
            namespace = _namespace(found)
        found = namespace.get(part, MISSING)
        if found is MISSING:
            return False
    return found is cls


def loaded_module(name: str) -> Any:
    """``sys.modules[name]`` (``None`` if absent), looked up only while the table's keys are all names: a key
    of the session's with the same hash would be compared with ``name`` by its own ``__eq__``."""
    modules = sys.modules
    return dict.get(modules, name) if type(modules) is dict and _modules_named(modules) else None


# (id of ``sys.modules``, its version tag) when every key was last seen to be a name: the check walks a few
# thousand keys, and one look at a session's objects asks for hundreds of modules (0.9 s in a preview's child)
_modules_checked: list[int | None] = [None, None]


def _modules_named(modules: dict[Any, Any]) -> bool:
    """``names_only(modules)``, not walked again while the table's version tag has not moved: any key added,
    removed or swapped — even for one of the same count — moves it (``version_tag``)."""
    from . import version_tag  # its ctypes with the first look at a class's module, never at start-up

    tag = version_tag.peek(modules)
    if tag is not None and _modules_checked == [id(modules), tag]:
        return True
    named = names_only(modules)
    if named and tag is not None:
        _modules_checked[:] = [id(modules), tag]
    return named


def library_root(cls: type) -> str:
    """The top-level package of a library's own class (``pandas`` for a DataFrame): a compiled type's
    module is its C code's, a class of Python code's counts only where it is found (``defined_at``);
    ``""`` for anything else — a session's class claiming a library module is nobody's."""
    if compiled(cls) or defined_at(cls):
        return root_of(cls)
    return ""


def compiled_call(obj: Any, name: str, *args: Any) -> Any:
    """``obj.name(*args)`` where ``obj``'s exact type is compiled (``compiled``): the method its library
    defines, called by CPython (``NotStructural`` for any other object)."""
    cls = type(obj)
    found = lookup(cls, name)
    if not compiled(cls) or found is MISSING:
        raise NotStructural(f"{qualname_of(cls)}.{name} is not a compiled library's own method")
    return found.__get__(obj, cls)(*args)


def is_subclass(cls: type, base: object) -> bool:
    """``base`` is in ``cls``'s MRO (identity, so no ``__subclasscheck__`` and no ``__eq__`` runs)."""
    return any(klass is base for klass in _type_mro(cls))


_IS_STR_ID = id(str).__eq__  # ``int.__eq__``: a key's type compared by id, in C, never hashed


def str_keys(mapping: dict[Any, Any], most: int = MAX_STATE_KEYS) -> bool:
    """Every key is an exact ``str`` (then a look-up by a string compares strings only), within ``most``:
    checked each time, through ``dict``'s own iterator and the keys' types' ids, one C loop."""
    if not is_subclass(type(mapping), dict):
        return False
    return dict.__len__(mapping) <= most and all(map(_IS_STR_ID, map(id, map(type, dict.__iter__(mapping)))))


# -- instance state ------------------------------------------------------------------------------------------
def instance_dict(obj: Any) -> dict[str, Any] | None:
    """The instance's ``__dict__`` through the type's own ``__dict__`` descriptor (``None`` when it has none,
    or when its class put something else under that name — a property named ``__dict__`` is code)."""
    descriptor = lookup(type(obj), "__dict__")
    if type(descriptor) is not types.GetSetDescriptorType:
        return None
    try:
        found = descriptor.__get__(obj, type(obj))
    except (AttributeError, TypeError):
        return None
    return found if type(found) is dict else None


def instance_state(obj: Any, slots: bool = True) -> dict[str, Any] | None:
    """An instance's own attributes — its ``__dict__`` and (with ``slots``) its filled slots, named
    ``Class.slot`` — read without running anything; ``None`` when it has neither, or when its ``__dict__``
    holds a key that is not an exact ``str`` (not read: such an object is not structural)."""
    found = instance_dict(obj)
    if found is not None and not str_keys(found):
        return None  # a key that is not a name: copying the dict would hash it, and its name is not a name
    state = dict(dict.items(found)) if found is not None else {}
    if slots:
        for klass in _type_mro(type(obj)):
            names = _type_dict(klass).get("__slots__", ())
            listed = type(names) is tuple or type(names) is list
            for slot in (names,) if type(names) is str else names if listed else ():
                if type(slot) is not str:
                    continue
                descriptor = _type_dict(klass).get(slot)
                if type(descriptor) is types.MemberDescriptorType:
                    try:
                        state[f"{name_of(klass)}.{slot}"] = descriptor.__get__(obj, type(obj))
                    except AttributeError:
                        pass
    if not state and found is None:
        return None
    return state


# Descriptors whose ``__get__`` is CPython's own C code and computes nothing of the object's.
_C_FIELDS = ids(types.MemberDescriptorType, types.GetSetDescriptorType)
_C_METHODS = ids(
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    types.BuiltinFunctionType,
)
_AS_IS = _C_FIELDS | _C_METHODS | ids(types.FunctionType, property)


def _builtin_field(descriptor: Any) -> bool:
    """A slot, or a C field of one of Python's own types (``function.__name__``, ``BaseException.args``,
    the ``__dict__`` of a class defined in Python): reading it is a C getter that calls nothing back."""
    if type(descriptor) is types.MemberDescriptorType:
        return True
    owner = descriptor.__objclass__
    return module_of(owner) == "builtins" or descriptor.__name__ in ("__dict__", "__weakref__")


def _data_descriptor(kind: type) -> bool:
    return lookup(kind, "__set__") is not MISSING or lookup(kind, "__delete__") is not MISSING


def attribute(obj: Any, name: str) -> Any:
    """What ``obj.name`` holds, found by lookup only (module docstring): ``NotStructural`` when reading it
    would run code, ``NoAttribute`` when it is not there."""
    cls = type(obj)
    if cls is types.ModuleType:
        return module_attribute(obj, name)
    if is_subclass(cls, type):
        return class_attribute(obj, name)
    if not _generic_getattribute(lookup(cls, "__getattribute__")):
        raise NotStructural(f"{qualname_of(cls)} has its own __getattribute__")
    found = lookup(cls, name)
    kind = type(found)
    if found is not MISSING and id(kind) in _C_FIELDS:
        if not _builtin_field(found):
            raise NotStructural(f"{qualname_of(cls)}.{name} is computed by its library")
        try:
            return found.__get__(obj, cls)
        except AttributeError:
            raise NoAttribute(name) from None
    if found is not MISSING and _data_descriptor(kind):
        raise NotStructural(f"{qualname_of(cls)}.{name} is a property")
    state = instance_dict(obj)
    if state is not None:
        if not str_keys(state):
            raise NotStructural(f"the attributes of this {qualname_of(cls)} have a key that is not a name")
        value = state.get(name, MISSING)
        if value is not MISSING:
            return value
    if found is not MISSING:
        return _bound(found, obj, cls, name)
    if lookup(cls, "__getattr__") is not MISSING:
        raise NotStructural(f"{qualname_of(cls)} computes missing attributes (__getattr__)")
    raise NoAttribute(name)


# Python's own types whose attribute look-up is not the generic one: a class's, a method's (it forwards to
# its function), a module's, ``super``'s (``module_attribute`` and ``class_attribute`` read the two first).
_SPECIAL_LOOKUP = ids(type, super, types.MethodType, types.ModuleType)


def _generic_getattribute(found: Any) -> bool:
    """The ``__getattribute__`` a type has is CPython's generic one: ``object``'s, or the slot a builtin
    type (``int``, ``list``, ``BaseException`` …) re-declares for it — never one a class of Python code
    wrote, nor a compiled library's (which may compute anything)."""
    if found is _OBJECT_GETATTRIBUTE:
        return True
    if type(found) is not types.WrapperDescriptorType:
        return False
    owner = found.__objclass__
    return module_of(owner) == "builtins" and compiled(owner) and not one_of(owner, _SPECIAL_LOOKUP)


def _bound(found: Any, obj: Any, cls: type, name: str) -> Any:
    """A class attribute as read through an instance: a function bound to it, a C method bound by CPython,
    or the attribute itself when it is no descriptor."""
    kind = type(found)
    if kind is types.FunctionType:
        return types.MethodType(found, obj)
    if kind is staticmethod:
        return _plain_callable(found.__func__, cls, name)
    if kind is classmethod:
        return types.MethodType(_plain_callable(found.__func__, cls, name), cls)
    if id(kind) in _C_METHODS:
        return found.__get__(obj, cls)
    if lookup(kind, "__get__") is MISSING:
        return found
    raise NotStructural(f"{qualname_of(cls)}.{name} is computed when read")


def _plain_callable(func: Any, cls: type, name: str) -> Any:
    """What a ``staticmethod``/``classmethod`` wraps, when reading it runs nothing (a wrapped descriptor's
    ``__get__`` would run)."""
    if type(func) is types.FunctionType or id(type(func)) in _C_METHODS:
        return func
    if lookup(type(func), "__get__") is MISSING:
        return func
    raise NotStructural(f"{qualname_of(cls)}.{name} is computed when read")


_METHOD_FUNC = types.MethodType.__dict__["__func__"].__get__


def method_function(method: types.MethodType) -> Any:
    """The function a bound method wraps, by the method type's own C field (a method object forwards every
    other attribute to its function, so ``attribute`` does not read it)."""
    return _METHOD_FUNC(method)


def module_namespace(module: Any) -> dict[str, Any]:
    """A module's namespace through the module type's own ``__dict__`` field (``{}`` for anything else, or a
    namespace with a key that is not a name)."""
    if type(module) is not types.ModuleType:
        return {}
    namespace = _MODULE_DICT(module)
    return namespace if type(namespace) is dict and names_only(namespace) else {}


def module_attribute(module: types.ModuleType, name: str) -> Any:
    """A name in a module's namespace (a module-level ``__getattr__`` is code: a miss there is not read)."""
    namespace = module_namespace(module)
    if not namespace:
        raise NotStructural("this module's namespace is not read here")
    value = namespace.get(name, MISSING)
    if value is not MISSING:
        return value
    if "__getattr__" in namespace:
        raise NotStructural("this module computes missing attributes (__getattr__)")
    raise NoAttribute(name)


def names_only(namespace: dict[Any, Any]) -> bool:
    """``str_keys`` for a module's or class's namespace. A size or an id remembered would be fooled by a key
    swapped for one of the same count; the dict's version tag is not (any key added, removed or swapped moves
    it: ``version_tag``), so a large namespace's check is remembered by (id, tag) — numpy's ~600 names were
    walked on every read of ``df.shape``, 35× the read itself."""
    if type(namespace) is not dict or dict.__len__(namespace) < _REMEMBERED_FROM:
        return str_keys(namespace, 1_000_000)
    from . import version_tag  # its ctypes with the first large namespace read, never at start-up

    tag = version_tag.peek(namespace)
    if tag is not None and _names_checked.get(id(namespace)) == tag:
        return True
    named = str_keys(namespace, 1_000_000)
    if named and tag is not None:
        if len(_names_checked) >= 4096:
            _names_checked.clear()
        _names_checked[id(namespace)] = tag
    return named


_REMEMBERED_FROM = 64  # keys: below that the C loop costs less than reading the tag
_names_checked: dict[int, int] = {}  # id of a namespace -> its version tag when every key was a name


# The C fields of ``type`` that are metadata of a class (its name, module, documentation).
_CLASS_METADATA = frozenset({"__name__", "__qualname__", "__module__"})


def class_attribute(cls: Any, name: str) -> Any:
    """``cls.name`` for a class: its name, qualified name and module through ``type``'s own descriptors, its
    ``__doc__`` from its own namespace, else an entry found along its MRO that is no computed descriptor
    (a function, a static or class method, a property object itself, a constant). A metaclass other than
    ``type`` (or the standard ``ABCMeta``) may compute any attribute of its classes: not read."""
    meta = type(cls)
    if meta is not type and not _plain_metaclass(meta):
        raise NotStructural(f"the class's metaclass {qualname_of(meta)} may compute its attributes")
    if name in _CLASS_METADATA:
        return {"__name__": name_of, "__qualname__": qualname_of, "__module__": _type_module}[name](cls)
    if name == "__doc__":
        doc = own_dict(cls).get("__doc__")
        if doc is None or type(doc) is str:
            return doc
        raise NotStructural("the class's __doc__ is computed")
    if not names_only(_namespace(cls)):
        raise NotStructural("the class's namespace has a key that is not a name")
    found = lookup(cls, name)
    if found is MISSING:
        found = lookup(meta, name)
        if found is MISSING:
            raise NoAttribute(name)
        return _bound(found, cls, meta, name)
    kind = type(found)
    if kind is staticmethod:
        return _plain_callable(found.__func__, cls, name)
    if kind is classmethod:
        return types.MethodType(_plain_callable(found.__func__, cls, name), cls)
    if id(kind) in _AS_IS:
        return found  # what ``__get__(None, cls)`` of each of these returns
    if lookup(kind, "__get__") is MISSING:
        return found
    raise NotStructural(f"{qualname_of(cls)}.{name} is computed when read")


def _namespace(cls: type) -> dict[Any, Any]:
    """The dict behind a class's namespace view (``gc`` finds it without calling anything of the view's)."""
    (namespace,) = gc.get_referents(own_dict(cls))
    return namespace


def _plain_metaclass(meta: type) -> bool:
    """A metaclass of the standard library that adds no computed attributes of its own (``ABCMeta``)."""
    found = mro(meta)
    return (
        module_of(meta) == "abc" and qualname_of(meta) == "ABCMeta" and len(found) == 3 and found[1] is type
    )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block: what a read allocates cannot trigger a collection,
    so no finaliser (``__del__``) or weakref callback of the session's garbage runs during it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- plain values --------------------------------------------------------------------------------------------
def is_plain(value: Any, most: int = PLAIN_ITEMS, *, numpy: bool = True) -> bool:
    """``value`` is plain (module docstring), within ``most`` items and ``PLAIN_DEPTH`` levels; with
    ``numpy`` false, a numpy scalar anywhere in it is not (its arithmetic can raise a warning, and warnings
    go through the ``warnings`` module, which the session may have replaced)."""
    return _plain(value, [most], 0, numpy)


def _plain(value: Any, budget: list[int], depth: int, numpy: bool = True) -> bool:
    t = type(value)
    if id(t) in _SCALAR_IDS:
        return True
    if id(t) in _CONTAINER_IDS:
        budget[0] -= len(value)
        if budget[0] < 0 or depth >= PLAIN_DEPTH:
            return False
        items = value
        if t is dict:
            if not all_scalars(value) and not all(map(_plain_key, value)):
                return False
            items = value.values()
        elif t is set or t is frozenset:
            return all_scalars(value) or all(map(_plain_key, value))
        if all_scalars(items):
            return True  # numbers and strings only: the common case, decided in one C loop
        return all(_plain(item, budget, depth + 1, numpy) for item in items)
    return numpy and is_numpy_scalar(value)


def all_scalars(items: Any) -> bool:
    """Every item is an exact ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str`` or ``bytes``,
    decided in C: types are compared by id, never hashed (a metaclass could define ``__hash__``)."""
    return all(map(_SCALAR_IDS.__contains__, map(id, map(type, items))))


def shown_plain(value: Any, items: int = 20, depth: int = 4) -> bool:
    """What a bounded display of ``value`` shows is plain: a scalar, or a builtin container (a subclass too:
    it is read through its base type) whose first ``items`` entries — keys and values — are, ``depth``
    levels down. Its ``len`` and those entries' ``repr`` are CPython's own."""
    t = type(value)
    if id(t) in _SCALAR_IDS or is_numpy_scalar(value):
        return True
    base = _builtin_base(t)
    if base is None or depth <= 0:
        return False
    if base is dict:
        keys = list(itertools.islice(dict.__iter__(value), items))
        entries = [*keys, *itertools.islice(dict.values(value), items)]
    else:
        entries = list(itertools.islice(base.__iter__(value), items))
    return all(shown_plain(entry, items, depth - 1) for entry in entries)


def _builtin_base(t: type) -> type[Collection[Any]] | None:
    for base in (dict, list, tuple, set, frozenset):
        if issubclass(t, base):  # a builtin base: CPython's own subclass check, no __subclasscheck__ runs
            return base
    return None


def _plain_key(value: Any) -> bool:
    t = type(value)
    if id(t) in _SCALAR_IDS:
        return True
    if t is tuple or t is frozenset:
        return len(value) <= 64 and all(_plain_key(part) for part in value)
    return False


def is_plain_key(value: Any) -> bool:
    """A value whose hash and equality are CPython's own: exact scalars, and tuples and frozensets of them
    (a dict or set of such keys is looked up without running anything)."""
    return _plain_key(value)


_NUMPY_PLAIN_KINDS = frozenset("biufcUSMm")


def library_field(obj: Any, name: str, owner: type | None) -> Any:
    """``obj.name`` where it is a C field that ``owner`` (a class of a compiled library, which the session
    cannot patch) declares: the field's own getter, found through the type (``NotStructural`` otherwise)."""
    found = lookup(type(obj), name)
    if owner is None or not one_of(type(found), _C_FIELDS) or found.__objclass__ is not owner:
        whose = "a compiled library" if owner is None else qualname_of(owner)
        raise NotStructural(f"{qualname_of(type(obj))}.{name} is not {whose}'s own field")
    return found.__get__(obj, type(obj))


def is_numpy_scalar(value: Any) -> bool:
    """A numpy scalar of a number, boolean, string or date kind: numpy's own compiled class (not a subclass
    the session made), so its comparisons, hash and repr are numpy's C."""
    t = type(value)
    if not compiled(t) or module_of(t) != "numpy":
        return False
    namespace = module_namespace(sys.modules.get("numpy"))
    generic, dtype_class = namespace.get("generic"), namespace.get("dtype")
    if not (type(generic) is type and compiled(generic) and is_subclass(t, generic)):
        return False
    dtype = library_field(value, "dtype", generic)
    return library_field(dtype, "kind", dtype_class) in _NUMPY_PLAIN_KINDS
