"""What the in-process levels may touch: plain values, receivers of known library types, and the values that
hold a secret (which only the walled child, which hides them, may read).

* A **plain value** is ``None``, a ``bool``, ``int``, ``float``, ``complex``, ``str`` or ``bytes``, a numpy
  scalar of a number, boolean, string or date type, a ``slice`` of those, or a ``tuple``, ``list``, ``dict``,
  ``set`` or ``frozenset`` (exactly these types) of plain values — at most ``PLAIN_ITEMS`` items in all and
  ``PLAIN_DEPTH`` levels deep. A plain value runs no code when it is compared, hashed, iterated or shown, and
  it is never a callable: a bound method, a function, a class, a module are never plain.
* A **known receiver** is an object whose exact type belongs to Python itself or to numpy or pandas (a
  subclass the session defined is not one): reading its attributes and calling the allow-listed methods of
  ``signatures`` runs library code only — and ``deadline.no_user_code`` stops any of the session's code that
  the library would reach through it (an element's ``__eq__``, an extension dtype).
* A **secret-bearing** value holds something under a secret name — a dict key at any depth, a DataFrame or
  Series column, index label or name, a structured array's field — or is a copy of the environment. The
  in-process levels never compute with one (only its metadata and its non-secret parts by name); the walled
  child reads a copy with those entries hidden.

Every check here looks at types (``type(x)``, never ``isinstance``, which asks a failing object for its
``__class__``; a type's ``__module__`` through ``type`` itself) and into builtin containers and pandas' own
structures only, so none runs the session's code: ``reader`` runs them outside the ``no_user_code`` tracer,
where a traced call per item would cost more than the expression.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from ..bounded_repr import is_environ

PLAIN_ITEMS = 10_000
PLAIN_DEPTH = 10
SCAN_ITEMS = 5_000  # items looked at for secret names in one value; a bigger one is read in the child
MAX_LABELS = 10_000  # index labels checked for secret names

_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis)})
_CONTAINERS = frozenset({tuple, list, dict, set, frozenset})
# Types of Python itself whose attributes and allow-listed methods are library code.
_KNOWN_BUILTINS = frozenset(
    {
        *_SCALARS, *_CONTAINERS, range, slice, bytearray, type({}.keys()), type({}.values()),
        type({}.items()), datetime.date, datetime.datetime, datetime.time, datetime.timedelta,
        datetime.timezone, decimal.Decimal, fractions.Fraction,
    }
)  # fmt: skip
_KNOWN_ROOTS = frozenset({"numpy", "pandas", "collections"})
_SCANNED = (dict, list, tuple, set, frozenset)


class SecretsOf:
    """The session's notion of a secret, passed in: a secret name (``redact.Masker.is_secret_name``) and a
    string that holds a credential or a known secret value (the masker would change it)."""

    def __init__(self, is_secret_name: Callable[[str], bool], looks_secret: Callable[[str], bool]) -> None:
        self.is_secret_name = is_secret_name
        self.looks_secret = looks_secret
        self.seen: dict[Any, Any] = {}  # the reader's verdicts on attribute names, under these settings

    def looks(self, value: Any) -> bool:
        """A string of the session's (not a literal of the expression) that holds a credential."""
        return type(value) is str and 8 <= len(value) < 10_000 and self.looks_secret(value)

    def name(self, label: Any) -> bool:
        """A label (a column, key, attribute or field) that is a secret name; a tuple label (a MultiIndex
        column) is one when any part is."""
        if type(label) is str:
            return len(label) < 200 and self.is_secret_name(label)
        if type(label) is tuple:
            return any(self.name(part) for part in label[:8])
        return False


# -- plain values --------------------------------------------------------------------------------------------
def is_plain(value: Any) -> bool:
    """``value`` is plain (module docstring), within the item and depth bounds."""
    return _plain(value, [PLAIN_ITEMS], 0)


def _plain(value: Any, budget: list[int], depth: int) -> bool:
    t = type(value)
    if t in _SCALARS:
        return True
    if t is slice:
        return all(_plain(part, budget, depth) for part in (value.start, value.stop, value.step))
    if t in _CONTAINERS:
        budget[0] -= len(value)
        if budget[0] < 0 or depth >= PLAIN_DEPTH:
            return False
        if t is dict:
            return all(
                _plain(k, budget, depth + 1) and _plain(v, budget, depth + 1) for k, v in value.items()
            )
        return all(_plain(item, budget, depth + 1) for item in value)
    return is_numpy_scalar(value)


def is_numpy_scalar(value: Any) -> bool:
    """A numpy scalar of a plain kind (numbers, booleans, strings, dates), not ``object`` or ``void``."""
    t = type(value)
    if module_of(t) != "numpy":
        return False
    dtype = getattr(value, "dtype", None)
    return getattr(dtype, "kind", "O") in "biufcUSMm"


# -- known receivers -----------------------------------------------------------------------------------------
def module_of(t: type) -> str:
    """``t.__module__`` read through ``type`` itself (a metaclass of the session's may make it a property)."""
    module = type.__getattribute__(t, "__module__")
    return module if type(module) is str else ""


_known_types: dict[type, bool] = {}


def is_known(value: Any) -> bool:
    """The exact type is Python's own (``_KNOWN_BUILTINS``) or numpy's, pandas' or ``collections``' (and the
    value is not a copy of the environment)."""
    t = type(value)
    known = _known_types.get(t)
    if known is None:
        known = t in _KNOWN_BUILTINS or module_of(t).partition(".")[0] in _KNOWN_ROOTS
        if len(_known_types) < 10_000:
            _known_types[t] = known
    return known and not (t is dict and is_environ(value))


def is_module(value: Any, name: str) -> bool:
    return type(value) is types.ModuleType and value.__name__ == name


# -- secrets -------------------------------------------------------------------------------------------------
def is_environment(value: Any) -> bool:
    """``os.environ``, ``os.environb`` or a dict that mirrors the environment (``dict(os.environ)``,
    ``os.environ.copy()``, ``{**os.environ, …}``)."""
    return issubclass(type(value), os._Environ) or is_environ(value)


def bears_secret(value: Any, secrets: SecretsOf) -> bool:
    """``value`` holds something under a secret name (module docstring), or is too big to tell within
    ``SCAN_ITEMS`` (then the child reads it, hiding what it finds)."""
    return _bears(value, secrets, [SCAN_ITEMS], 0)


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _bears(value: Any, secrets: SecretsOf, budget: list[int], depth: int) -> bool:
    t = type(value)
    if t in _SCALARS:
        return False
    if depth > PLAIN_DEPTH * 2:
        return True
    if t in _VIEWS:
        value, t = value.mapping, dict  # a view of a dict reads what the dict holds
    if issubclass(t, _SCANNED) and (t in _SCANNED or module_of(t) == "collections"):
        if is_environment(value):
            return True
        budget[0] -= len(value)
        if budget[0] < 0:
            return True
        if issubclass(t, dict):
            if any(map(secrets.name, dict.keys(value))):
                return True
            items: Any = dict.values(value)
        else:
            items = value
        if set(map(type, items)) <= _SCALARS:
            return False  # numbers and strings only (the common case, decided in one C loop)
        return any(_bears(item, secrets, budget, depth + 1) for item in items)
    if t is types.MappingProxyType:
        return _bears(dict(value), secrets, budget, depth + 1)
    root = module_of(t).partition(".")[0]
    if root == "pandas":
        return pandas_bears(value, secrets)
    if root == "numpy":
        names = getattr(getattr(value, "dtype", None), "names", None)
        return bool(names) and any(secrets.name(n) for n in names)
    return False


def pandas_bears(value: Any, secrets: SecretsOf) -> bool:
    """A pandas object — or an indexer, accessor or GroupBy of one — with a secret column, index label,
    level name or name."""
    value = pandas_owner(value)
    axes = getattr(value, "axes", None) if _is_frame_or_series(value) else None
    if axes is None:
        axes = [value] if _is_index(value) else []
    elif secrets.name(getattr(value, "name", None)) and type(value).__qualname__ == "Series":
        return True
    for axis in axes:
        if any(secrets.name(n) for n in axis.names):
            return True
        if axis.dtype.kind in "OUST" or type(axis).__qualname__ == "MultiIndex" or str(axis.dtype) == "str":
            if len(axis) > MAX_LABELS:
                return True  # too many labels to check here: the child reads it
            if any(secrets.name(label) for label in axis):
                return True
    return False


def pandas_owner(value: Any) -> Any:
    """The frame or series an indexer (``df.loc``), accessor (``s.str``) or GroupBy reads."""
    if _is_frame_or_series(value) or _is_index(value):
        return value
    try:
        state = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return value
    for attr in ("obj", "_parent", "_orig"):
        owner = state.get(attr)
        if owner is not None and (type(owner).__module__ or "").startswith("pandas"):
            return pandas_owner(owner) if owner is not value else value
    return value


def _is_frame_or_series(value: Any) -> bool:
    t = type(value)
    return t.__qualname__ in ("DataFrame", "Series") and (t.__module__ or "").startswith("pandas")


def _is_index(value: Any) -> bool:
    t = type(value)
    return t.__qualname__.endswith("Index") and (t.__module__ or "").startswith("pandas")


# -- values with nothing of the session's inside -------------------------------------------------------------
_NUMPY_KINDS = frozenset("biufcmMUS")  # numpy kinds that hold no Python object
_LIBRARIES = ("pandas", "numpy", "builtins")


def library_only(value: Any) -> bool:
    """Nothing in ``value`` is the session's, so no operation of numpy's or pandas' on it can reach code the
    session wrote (no tracer needed): a plain value, a numpy array or scalar of a kind that holds no Python
    object, or a pandas frame, series or index whose data, labels and ``attrs`` are of such kinds (or of
    pandas' own extension types over them). Anything else — object columns, an extension dtype from
    elsewhere, ``attrs`` that are not empty (copied into every result) — is run under the tracer."""
    t = type(value)
    if t in _SCALARS:
        return True
    if t in _CONTAINERS or t is slice:
        return is_plain(value)
    root = module_of(t).partition(".")[0]
    try:
        if root == "numpy":
            return _numpy_plain(value)
        if root == "pandas":
            return _pandas_plain(value)
    except Exception:
        return False
    return False


def _numpy_plain(value: Any) -> bool:
    np = sys.modules.get("numpy")
    t = type(value)
    if np is None or not (t is np.ndarray or (issubclass(t, np.generic) and module_of(t) == "numpy")):
        return False
    return _dtype_plain(value.dtype)


def _dtype_plain(dtype: Any) -> bool:
    t = type(dtype)
    module = module_of(t)
    if module.startswith("numpy"):
        return getattr(dtype, "kind", "O") in _NUMPY_KINDS
    if not module.startswith("pandas"):
        return False  # an extension dtype from elsewhere: its code may be the session's
    if t.__qualname__ == "CategoricalDtype":
        categories = getattr(dtype, "categories", None)
        return categories is None or _index_plain(categories)
    if t.__qualname__ == "StringDtype":
        return True  # pandas keeps str values (Arrow memory, or Python strings it made)
    return getattr(dtype, "kind", "O") != "O" or t.__qualname__ in ("ArrowDtype",)


def _index_plain(index: Any) -> bool:
    kind = type(index).__qualname__
    if kind == "RangeIndex":
        return True
    if module_of(type(index)).partition(".")[0] != "pandas" or kind == "MultiIndex":
        return False
    dtype = index.dtype
    if _dtype_plain(dtype):
        return True
    # Labels of dtype object: plain when pandas found them all strings or numbers (cached on the index).
    return getattr(dtype, "kind", "") == "O" and len(index) <= 100_000 and index.inferred_type in (
        "string", "integer", "floating", "boolean", "mixed-integer-float", "empty",
    )  # fmt: skip


def _pandas_plain(value: Any) -> bool:
    kind = type(value).__qualname__
    if kind.endswith("Index"):
        return kind != "MultiIndex" and _index_plain(value)
    if kind not in ("DataFrame", "Series"):
        return False
    state = object.__getattribute__(value, "__dict__")
    if state.get("_attrs"):
        return False  # attrs are deep-copied into every result: the session's objects may be in them
    dtypes = state["_mgr"].get_dtypes() if kind == "DataFrame" else [value.dtype]
    if not all(_dtype_plain(d) for d in dtypes):
        return False
    return all(_index_plain(axis) for axis in value.axes)


def pandas_display_plain() -> bool:
    """None of pandas' display options is a function (``display.float_format`` may be the person's, and a
    description of a frame would call it); read from pandas' own table, any doubt answers False."""
    try:
        options = sys.modules["pandas._config.config"]._global_config["display"]
        return not any(callable(value) for value in options.values())
    except Exception:
        return False


_library_attributes: dict[tuple[type, str], bool] = {}


def library_attribute(cls: type, name: str) -> bool:
    """``_library_attribute``, remembered per class and name (a library's class does not change; one the
    session patched later is still run under the tracer's eye everywhere else)."""
    key = (cls, name)
    found = _library_attributes.get(key)
    if found is None:
        found = _library_attribute(cls, name)
        if len(_library_attributes) < 10_000:
            _library_attributes[key] = found
    return found


def _library_attribute(cls: type, name: str) -> bool:
    """``cls.name`` (found without running anything) is the library's own: a property or method written in
    pandas or numpy, one of their descriptors, or nothing at all (pandas then looks for a column). Not an
    accessor (``s.str``, ``df.sparse``: a registered one may be the session's) nor something the session put
    on the class."""
    if name in getattr(cls, "_accessors", ()):
        return False
    try:
        attr = inspect.getattr_static(cls, name)
    except AttributeError:
        return True
    if isinstance(attr, property):
        attr = attr.fget
    module = module_of(type(attr)) if not isinstance(attr, types.FunctionType) else attr.__module__ or ""
    return module.partition(".")[0] in _LIBRARIES
