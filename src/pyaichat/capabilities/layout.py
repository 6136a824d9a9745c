"""Where an object's data is, found without running any of its code: the one module that knows the private
layouts of the data libraries and the rules for reading a plain object's own state.

The three fingerprints (the preview's ``sandbox.forms``, the in-process safety net's ``sandbox.ownership``
and undo's ``persist.fingerprint``) compare objects before and after code ran; each is shaped by where it runs
(see their docstrings), but what holds an object's data is the same question for all three and is answered
here:

* **pandas** (``pandas_parts``): a frame's or series' block arrays, its index and columns; an index's values;
  the arrays behind an extension array — numpy-backed (``_ndarray``), masked (``_data`` + ``_mask``),
  Arrow-backed (``_pa_array``: pandas' default strings), categorical (codes and categories), interval,
  sparse; an indexer's frame (``df.loc`` writes into ``df``). No per-column ``Series`` is built, and no
  attribute that computes on first read is read (a ``RangeIndex`` builds an 80 MB ``_data`` for ten million
  rows and caches it on the user's object).
* **memory** (``memory_of``): the address ranges a buffer holder's data occupies — a numpy array
  (``array_span``: the bytes its elements span), a ``bytearray``, an ``array.array``, an Arrow array's
  buffers, a CPU tensor; ``raw`` reads such a range for hashing.
* **plain objects**: a builtin container, subclass or not, through its base type's own methods
  (``builtin_base``, ``builtin_items``: a subclass's ``__len__``/``__iter__`` is the session's code); an
  instance's own attributes are ``structural.instance_state``'s; whether a dict is the environment or a copy
  of it (``is_environ``: read with ``dict.items``), which only its size may leave by.
* **namespaces** (``namespace_ids``): the session's namespace and the interpreter's module table are where
  names live, not an object's state — the shell's own objects (IPython's ``exit``, ipykernel's
  ``ZMQExitAutocall``) and ``g = globals()`` reach the namespace, and a proposal that creates ``total`` must
  not read as an in-place change of each of them. Fingerprints compare these dicts by identity; the names in
  them are compared one by one.

No user code runs here — no ``__len__``, ``__iter__``, ``__eq__``, ``__hash__``, ``__repr__``, property or
``__getattr__`` of a user class, not even the ``__class__`` that ``isinstance`` would ask (types are checked
with ``issubclass(type(obj), …)``): library attributes are read only on the library's own types. No library is
imported: an object of numpy, pandas, pyarrow or torch exists only if the user loaded it (``sys.modules``).
"""

from __future__ import annotations

import array
import ctypes
import os
import sys
import types
from collections import deque
from collections.abc import Mapping
from itertools import islice
from typing import Any

from .structural import is_subclass, library_root, module_of, name_of

MAX_PARTS = 2_000  # parts of one pandas object (a frame of many unconsolidated columns has a block each)
# Immutable values that hold nothing else: nothing to look into, nothing a run could change.
ATOMS = (
    int,
    float,
    complex,
    bool,
    str,
    bytes,
    type(None),
    range,
    slice,
    type(Ellipsis),
    type(NotImplemented),
)
# Shared code and modules: not the user's data.
CODE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
# Builtin containers, read through these base types' own methods whatever the subclass overrides.
BUILTIN_BASES = (list, tuple, dict, set, frozenset, deque)
# Where an extension array or an index keeps its data, per layout (numpy-backed, masked, Arrow, interval,
# sparse) and MultiIndex's codes and levels.
_BACKING = (
    "_ndarray",
    "_data",
    "_mask",
    "_pa_array",
    "_left",
    "_right",
    "_sparse_values",
    "_codes",
    "_levels",
)


# -- libraries (never imported: an object of theirs exists only if they are loaded) --------------------------
def library(cls: type) -> str:
    """The top-level package a library's own type comes from (``pandas`` for ``pandas.core.frame.DataFrame``);
    ``""`` for a class that only names a library in its ``__module__`` (``structural.library_root``): its
    attributes would be the session's code."""
    return library_root(cls)


def ndarray_type() -> type | None:
    """``numpy.ndarray`` if numpy is loaded (no numpy, no arrays)."""
    return getattr(sys.modules.get("numpy"), "ndarray", None)


def is_ndarray(obj: Any) -> bool:
    ndarray = ndarray_type()
    return ndarray is not None and issubclass(type(obj), ndarray)  # memmap and other subclasses too


# -- memory --------------------------------------------------------------------------------------------------
def array_span(arr: Any) -> tuple[int, int]:
    """The bytes an ndarray's elements span, ``(start, end)`` (numpy's ``byte_bounds``, without importing
    ``numpy.lib``): a view's span lies inside its base's."""
    start = end = int(arr.__array_interface__["data"][0])
    for n, stride in zip(arr.shape, arr.strides, strict=False):
        if n == 0:
            return start, start
        if stride < 0:
            start += (n - 1) * stride
        else:
            end += (n - 1) * stride
    return start, end + arr.itemsize


def memory_of(obj: Any) -> list[tuple[int, int]] | None:
    """The address ranges holding ``obj``'s data when it is a buffer holder — an ndarray, a ``bytearray``, an
    ``array.array``, an Arrow array, chunked array, table or buffer, a CPU tensor — else ``None``. Empty
    ranges are left out."""
    cls = type(obj)
    if is_ndarray(obj):
        start, end = array_span(obj)
        return [(start, end)] if end > start else []
    if cls is bytearray or (issubclass(cls, bytearray)):
        size = bytearray.__len__(obj)
        if not size:
            return []
        holder = (ctypes.c_char * size).from_buffer(obj)
        start = ctypes.addressof(holder)
        del holder  # the export ends here: the code may still resize it
        return [(start, start + size)]
    if issubclass(cls, array.array):
        address, count = obj.buffer_info()
        return [(address, address + count * obj.itemsize)] if count else []
    root = library(cls)
    if root == "pyarrow":
        return _arrow_memory(obj)
    if root == "torch" and hasattr(obj, "data_ptr"):
        if str(getattr(obj, "device", "cpu")) != "cpu":
            return []
        nbytes = int(obj.nelement() * obj.element_size())
        start = int(obj.data_ptr())
        return [(start, start + nbytes)] if nbytes else []
    return None


def _arrow_memory(obj: Any) -> list[tuple[int, int]] | None:
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return None
    cls = type(obj)
    if issubclass(cls, pa.Buffer):
        return [(obj.address, obj.address + obj.size)] if obj.size else []
    if issubclass(cls, pa.Array):
        return [(b.address, b.address + b.size) for b in obj.buffers() if b is not None and b.size]
    if issubclass(cls, pa.ChunkedArray):
        return [span for chunk in obj.chunks for span in _arrow_memory(chunk) or ()]
    if issubclass(cls, (pa.Table, pa.RecordBatch)):
        return [span for column in obj.columns for span in _arrow_memory(column) or ()]
    return None


def raw(start: int, end: int) -> memoryview:
    """The bytes at ``[start, end)`` of this process's memory, for hashing; the caller keeps their owner
    alive."""
    if end <= start:
        return memoryview(b"")
    return memoryview((ctypes.c_char * (end - start)).from_address(start)).cast("B")


# -- pandas --------------------------------------------------------------------------------------------------
def is_pandas(obj: Any) -> bool:
    return library(type(obj)) == "pandas"


def pandas_parts(obj: Any) -> list[Any] | None:
    """What holds a pandas object's data, read from its internals: a frame's or series' block arrays (ndarrays
    or extension arrays), its index and (a frame's) columns; an index's values (a ``RangeIndex`` has none it
    has not computed: its start, stop and step are its data); the arrays behind an extension array; a
    ``MultiIndex``'s codes and levels; an indexer's (``df.loc``) frame. Scalars and code are left out.
    ``None`` for a pandas object that holds no data of its own in a known layout (a ``GroupBy``, a dtype)."""
    out: list[Any] = []
    blocks = pandas_blocks(obj)
    if blocks is not None:
        out.extend(blocks)
        for attr in ("index", "columns"):
            part = getattr(obj, attr, None)
            if part is not None and not issubclass(type(part), CODE):
                out.append(part)
        return out
    if hasattr(type(obj), "obj") and name_of(type(obj)).endswith("Indexer"):  # df.loc, df.iloc, df.at …
        target = getattr(obj, "obj", None)
        return [target] if target is not None else []
    if not _is_index_or_array(obj):
        return None
    for attr in _BACKING:
        part = _stored(obj, attr)
        if part is None or issubclass(type(part), (*ATOMS, *CODE)):
            continue
        base = builtin_base(type(part))
        if attr in ("_codes", "_levels") and (base is list or base is tuple):  # MultiIndex: FrozenLists
            out.extend(builtin_items(part, base))
        else:
            out.append(part)
    if hasattr(type(obj), "categories"):  # a Categorical's categories (an Index)
        categories = getattr(obj, "categories", None)
        if categories is not None:
            out.append(categories)
    unique = {id(part): part for part in out}  # a Categorical's ``_codes`` is its ``_ndarray``
    return list(unique.values())[:MAX_PARTS]


def pandas_blocks(obj: Any) -> list[Any] | None:
    """The arrays a frame's or series' data is stored in (one per block: an ndarray of several columns, or
    an extension array); ``None`` for other pandas objects."""
    mgr = _stored(obj, "_mgr")
    if mgr is not None and library(type(mgr)) != "pandas":  # put there by the session: its code, not read
        return None
    arrays = getattr(mgr, "arrays", None) if mgr is not None else None
    return list(arrays[:MAX_PARTS]) if isinstance(arrays, (list, tuple)) else None


def _is_index_or_array(obj: Any) -> bool:
    pd = sys.modules.get("pandas")
    api = getattr(pd, "api", None)
    array = getattr(getattr(api, "extensions", None), "ExtensionArray", None)
    kinds = tuple(k for k in (getattr(pd, "Index", None), array) if isinstance(k, type))
    return bool(kinds) and issubclass(type(obj), kinds)


def range_of(obj: Any) -> tuple[int, int, int] | None:
    """A ``RangeIndex``'s start, stop and step (its whole data), else ``None``."""
    if not is_pandas(obj) or name_of(type(obj)) != "RangeIndex":
        return None
    return int(obj.start), int(obj.stop), int(obj.step)


def _stored(obj: Any, attr: str) -> Any:
    """``obj.attr`` if it is stored, not derived: a library's cached property is neither computed (a
    ``RangeIndex``'s ``_data``) nor read once computed (a cache filled by a read is not a change)."""
    descriptor = getattr(type(obj), attr, None)
    if name_of(type(descriptor)) in ("CachedProperty", "cached_property"):
        return None
    try:
        return getattr(obj, attr, None)
    except Exception:
        return None


# -- plain objects -------------------------------------------------------------------------------------------
def builtin_base(cls: type) -> type | None:
    """The builtin container ``cls`` is or derives from (``list`` for a ``list`` subclass), else ``None``:
    found by identity along ``cls``'s MRO (``cls in BUILTIN_BASES`` would ask a metaclass's ``__eq__``)."""
    for base in BUILTIN_BASES:
        if is_subclass(cls, base):
            return base
    return None


def builtin_len(obj: Any, base: type) -> int:
    """The number of items ``obj`` holds, through ``base``'s own ``__len__``."""
    return base.__len__(obj)  # type: ignore[attr-defined]  # the base's own slot, read without the object's code


def builtin_items(obj: Any, base: type, limit: int | None = None) -> list[Any]:
    """``obj``'s elements (a dict's values), the first ``limit`` of them, through ``base``'s own iterator,
    whatever the subclass overrides."""
    items = dict.values(obj) if base is dict else base.__iter__(obj)  # type: ignore[attr-defined]  # the base's own slot, read without the object's code
    return list(items if limit is None else islice(items, limit))


def builtin_keys(obj: Any, limit: int | None = None) -> list[Any]:
    """A dict's (or dict subclass's) keys, the first ``limit`` of them, through ``dict``'s own iterator."""
    keys = dict.__iter__(obj)
    return list(keys if limit is None else islice(keys, limit))


def is_environ(value: Any) -> bool:
    """``os.environ``, ``os.environb`` or a dict copy of the environment (``dict(os.environ)``,
    ``os.environ.copy()``, ``{**os.environ, "X": "1"}``, ``{"X": "1", **os.environ}``): only their size is
    ever shown. A copy is told by a sample of its first and last entries, most of which are the
    environment's own (a few added or changed entries do not hide it)."""
    t = type(value)
    if is_subclass(t, os._Environ):
        return True
    if not is_subclass(t, dict) or module_of(t) not in ("builtins", "collections"):
        return False
    size = dict.__len__(value)  # a subclass's own ``__len__`` is the session's code
    if size < 3:
        return False
    items = dict.items(value)
    sample = [*islice(items, 6), *islice(reversed(items), 6)] if size > 12 else items
    same = sum(1 for k, v in sample if type(k) is str and type(v) is str and _in_environment(k, v))
    return same >= 3 and same * 2 >= len(sample)


_environment: frozenset[int] | None = None  # hashes of the environment's pairs, once this process dropped it


def forget_environment() -> None:
    """Called by a forked child right before it clears its environment: what was there is still recognised
    in a copy (``is_environ``), by the hashes of its pairs — not their values, which the child must not
    keep."""
    global _environment
    _environment = frozenset(hash(pair) for pair in os.environ.items())


def _in_environment(key: str, value: str) -> bool:
    known = _environment
    return os.environ.get(key) == value if known is None else hash((key, value)) in known


def namespace_ids(namespace: Mapping[str, Any] | None) -> frozenset[int]:
    """The dicts whose entries are names, not an object's state: the session's ``namespace`` and the
    interpreter's module table (see the module docstring)."""
    ids = {id(sys.modules)}
    if namespace is not None:
        ids.add(id(namespace))
    return frozenset(ids)
