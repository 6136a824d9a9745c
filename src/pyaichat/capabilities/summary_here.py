"""What the session's process says about a value by itself, without running any code of the value's: the
gate between the summaries (``summary``) and the walled child.

``here(value, what)`` says whether ``what`` (``repr``, ``type``, ``dir``, ``doc``) of ``value`` is made from
structure alone — then ``summary`` makes it in this process, and runs no code of the value's. It is for:

* **plain values** and builtin containers whose shown entries are plain (``structural.shown_plain``; a
  subclass too, read through its base type), views of such dicts: CPython's own ``repr``, ``len`` and
  iteration;
* **numpy's and pandas' own arrays, frames, series and indexes**: their type, shape, columns and dtypes
  from where the libraries store them (``library_metadata``) — not their cells (``repr`` is made in the
  child, except an index whose labels are plain strings or numbers);
* **modules, functions and classes of installed libraries and of Python** (not the session's own): their
  names, signatures and documentation, which the library wrote;
* **dtypes** of numpy and pandas, by their stored fields;
* a ``types.SimpleNamespace`` (exactly) whose names hold plain values: CPython's own ``repr`` of them;
* **database connections** of sqlite3 and psycopg (``database_here``): their adapters read them here, since
  a forked child sharing the connection's socket must never use it.

Anything else — an object of a class the session defined, a library object this does not read by
structure, a function typed at the prompt — is described in the walled child (``expression._child``), or in
the session picture asked there all at once (``picture``), or described from its type alone
(``metadata_line``).
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

from . import library_metadata, structural
from .database_here import known_connection
from .deadline import is_user_code
from .layout import builtin_base, builtin_len, is_environ
from .text import count, type_name

__all__ = ["here", "metadata_line"]

_VIEWS = structural.ids(type({}.keys()), type({}.values()), type({}.items()))
_ATOMS = structural.ids(type(Ellipsis), type(NotImplemented), range, slice)
_C_CALLABLES = structural.ids(
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
)
_WHATS = frozenset({"repr", "type", "dir", "doc"})


def here(value: Any, what: str, privacy_level: int = 2) -> bool:
    """``what`` of ``value`` is made in this process from structure alone (module docstring). At privacy
    level ``names`` (0) a description and a type say the type only, which is structure; members are read by
    structure wherever the object has no ``__dir__`` of its own."""
    assert what in _WHATS
    try:
        return _here(value, what, privacy_level)
    except (structural.NotStructural, structural.NoAttribute):
        return False


def _here(value: Any, what: str, privacy_level: int) -> bool:
    t = type(value)
    if what == "dir" and not own_dir(value):
        return True
    if privacy_level <= 0 and what in ("repr", "type"):
        return True
    if structural.one_of(t, _VIEWS):
        return structural.shown_plain(list(itertools.islice(value, 20)))
    if structural.shown_plain(value) or structural.one_of(t, _ATOMS) or is_environ(value):
        return what != "doc" or library_class(t) or plain_class(t)  # a subclass's docs are its class's
    if t is types.SimpleNamespace:  # exactly Python's: its repr is C's, over the names and values it holds
        state = object.__getattribute__(value, "__dict__")  # the exact type's C slot: no session code
        plain = structural.str_keys(state, 20) and all(  # whole values, exact types: the repr prints them all
            structural.is_plain(v, numpy=False) for v in dict.values(state)
        )
        return plain and what in ("repr", "type")
    if _never_consumed(t):
        return what in ("repr", "type")  # described by its kind and state, never advanced
    if known_connection(value):
        return what in ("repr", "type")  # its adapter reads it here: a forked child must never use it
    if t is types.ModuleType:
        return library_module(value)
    if structural.is_subclass(t, type):
        return library_class(value) or plain_class(value)
    if callable_of_library(value) or plain_function(value):
        return True
    if dtype_of_library(value):
        return True
    return _library_object_here(value, what)


def _library_object_here(value: Any, what: str) -> bool:
    """numpy's and pandas' own objects: their type and documentation from metadata; of their data, only an
    index's plain labels (rows and cells are shown by the child)."""
    kind = library_metadata.kind(value)
    if kind is None or what == "dir":
        return False
    try:
        library_metadata.metadata(value, "shape")
        if kind == "DataFrame":
            library_metadata.frame_dtypes(value)
        elif kind != "ndarray":
            library_metadata.metadata(value, "dtype")
        if what == "repr":
            if kind != "Index":
                return False
            library_metadata.index_labels(value, 10)
    except structural.NotStructural:
        return False
    return True


_PLAIN_DIRS = structural.ids(object, type, types.ModuleType)


def own_dir(value: Any) -> bool:
    """``value`` lists its members with a ``__dir__`` of its own (a class's, a library's, or a module's
    ``__dir__`` function): only asking it gives them."""
    t = type(value)
    for klass in structural.mro(t):
        found = structural.own_dict(klass).get("__dir__", structural.MISSING)
        if found is not structural.MISSING:
            if not structural.one_of(klass, _PLAIN_DIRS):
                return True
            break
    return t is types.ModuleType and "__dir__" in structural.module_namespace(value)


def declared_members(value: Any) -> set[Any]:
    """The names a class and its bases (and an instance's ``__dict__``) declare — what ``object.__dir__``
    lists — read by structure."""
    t = type(value)
    if t is types.ModuleType:
        return set(structural.module_namespace(value))
    owner = value if structural.is_subclass(t, type) else t
    names: set[Any] = set()
    for klass in structural.mro(owner):
        names.update(structural.own_dict(klass).keys())
    if owner is t:
        names.update(structural.instance_dict(value) or ())
    return names


_GENERATORS = structural.ids(types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _never_consumed(t: type) -> bool:
    """A generator, a coroutine, or an iterator of Python's own (the summaries name it, never advance it)."""
    if structural.one_of(t, _GENERATORS):
        return True
    return structural.compiled(t) and all(
        structural.lookup(t, name) is not structural.MISSING for name in ("__next__", "__iter__")
    )


def library_module(module: Any) -> bool:
    """A module of Python or of an installed library (its file is not the session's own)."""
    namespace = structural.module_namespace(module)
    if not namespace:
        return False
    file = namespace.get("__file__")
    return file is None or (type(file) is str and not is_user_code(file))


def plain_metaclass(meta: type) -> bool:
    """``type``, ``ABCMeta`` or a compiled metaclass: it computes none of its classes' attributes."""
    return meta is type or structural.compiled(meta) or _abc_meta(meta)


def plain_function(value: Any, depth: int = 0) -> bool:
    """A function of the session's whose signature is structure: its defaults are plain values and its
    annotations strings, ``None`` or classes (printing the signature then runs no ``__repr__`` of the
    session's), and nothing in its ``__dict__`` stands in for it (``__wrapped__``, ``__signature__``)."""
    t = type(value)
    if t is types.MethodType:
        return depth < 4 and plain_function(structural.method_function(value), depth + 1)
    if t is not types.FunctionType:
        return False
    state = structural.instance_dict(value) or {}
    if "__wrapped__" in state or "__signature__" in state:
        return False
    defaults = structural.attribute(value, "__defaults__")
    keywords = structural.attribute(value, "__kwdefaults__")
    annotations = structural.attribute(value, "__annotations__")
    if not (structural.is_plain(defaults) and structural.is_plain(keywords)):
        return False
    return type(annotations) is dict and all(map(_plain_annotation, dict.values(annotations)))


def _plain_annotation(value: Any) -> bool:
    return (
        value is None
        or type(value) is str
        or (structural.is_subclass(type(value), type) and plain_metaclass(type(value)))
    )


def plain_class(cls: Any) -> bool:
    """A class of the session's whose metaclass computes nothing and whose signature and documentation
    are structure: its ``__init__``/``__new__`` are Python's, a library's or ``plain_function``, and every
    class along its MRO keeps a plain string (or nothing) as its ``__doc__``."""
    if not plain_metaclass(type(cls)):
        return False
    for klass in structural.mro(cls):
        namespace = structural.own_dict(klass)
        doc = namespace.get("__doc__")
        if not (doc is None or type(doc) is str) or "__signature__" in namespace:
            return False
    return _plain_signature(cls)


def _plain_signature(cls: Any) -> bool:
    """Printing ``cls``'s signature runs nothing of the session's: its ``__init__``, ``__new__`` and
    ``__call__`` are Python's, a library's or ``plain_function`` (plain defaults), and so is its metaclass's
    ``__call__``."""
    for name in ("__init__", "__new__", "__call__"):
        found = structural.lookup(cls, name)
        if found is structural.MISSING or structural.one_of(type(found), _C_CALLABLES):
            continue
        if type(found) is staticmethod:
            found = found.__func__
        if not (callable_of_library(found) or plain_function(found)):
            return False
    meta_call = structural.lookup(type(cls), "__call__")
    return meta_call is structural.MISSING or structural.one_of(type(meta_call), _C_CALLABLES)


def library_class(cls: Any) -> bool:
    """A class of Python or of an installed library, whose metaclass computes nothing: its name, namespace
    and documentation are the library's. A class of Python code counts only where its module holds it
    (``structural.defined_at``: ``__module__`` is the class's own to set), and its signature is checked as
    ``plain_class`` checks it (a class can be put into a library's module too)."""
    if not plain_metaclass(type(cls)):
        return False
    if structural.compiled(cls):
        return True
    if not structural.defined_at(cls):
        return False
    return library_module(structural.loaded_module(structural.module_of(cls))) and _plain_signature(cls)


def _abc_meta(meta: type) -> bool:
    return meta is structural.module_namespace(sys.modules.get("abc")).get("ABCMeta")


def callable_of_library(value: Any, depth: int = 0) -> bool:
    """A function, method or builtin of Python or of an installed library: its signature and documentation
    are read without running anything of the session's (a function it wraps is checked too)."""
    t = type(value)
    if structural.one_of(t, _C_CALLABLES):
        return True
    if t is types.MethodType:
        return depth < 4 and callable_of_library(structural.method_function(value), depth + 1)
    if t is types.FunctionType:
        code = structural.attribute(value, "__code__")
        if is_user_code(code.co_filename):
            return False
        state = structural.instance_dict(value) or {}
        if "__signature__" in state:
            return False
        wrapped = state.get("__wrapped__", structural.MISSING)
        return wrapped is structural.MISSING or (depth < 4 and callable_of_library(wrapped, depth + 1))
    return (
        structural.compiled(t)
        and structural.root_of(t) == "numpy"
        and structural.name_of(t)
        in (
            "ufunc",
            "_ArrayFunctionDispatcher",
        )
    )


def dtype_of_library(value: Any) -> bool:
    """A numpy dtype, or one of pandas' own (named by ``library_metadata.dtype_text``)."""
    t = type(value)
    if structural.compiled(t) and structural.root_of(t) == "numpy":
        dtype = structural.module_namespace(sys.modules.get("numpy")).get("dtype")
        return structural.is_subclass(type(dtype), type) and structural.is_subclass(t, dtype)
    return structural.library_root(t) == "pandas" and structural.name_of(t).endswith("Dtype")


def metadata_line(value: Any, privacy_level: int) -> str:
    """A line from the value's type alone (and its size, where a builtin base type counts it): what the
    picture says of an object whose own code was not asked."""
    kind = type_name(value)
    base = builtin_base(type(value))
    if base is not None:
        noun = "key" if base is dict else "item"
        return f"{kind}, {count(builtin_len(value, base), noun)}"
    return kind if privacy_level <= 0 else f"{kind} object"
