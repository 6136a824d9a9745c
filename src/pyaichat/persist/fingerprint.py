"""Cheap fingerprints of live objects, to tell whether code changed them in place.

Equal fingerprints before and after mean "not changed" (up to a 64-bit checksum collision); the cost is
one pass over the data at memory speed, nothing more:

- numeric buffers (numpy arrays, the columns of pandas frames, Arrow buffers) get a position-sensitive
  checksum: the buffer seen as 64-bit words, each 4,096-word block multiplied by fixed odd weights and
  summed (``einsum``, in slices that stay in cache), the block sums then CRC-ed. ~10 GB/s here, so a
  10-million-row frame of five numeric columns (400 MB) costs ~40 ms; a swap of two values changes it;
- containers hold the identities of their items (kept alive, so an id cannot be reused) and the
  fingerprints of the mutable ones, to a bounded depth;
- plain objects are fingerprinted through their ``__dict__``/``__slots__``; functions and classes by the
  identity of what they hold; modules not at all (a library's state is not the user's variable).

No user code runs: no ``__eq__``, ``__hash__``, ``__len__``, ``__repr__`` or property of a user object; what
holds an object's data (pandas' blocks and extension arrays, Arrow and other buffers, an instance's own
attributes, a builtin container's items through its base type) is ``capabilities.layout``'s knowledge, shared
with the sandbox's two fingerprints; the data libraries are looked up in ``sys.modules`` (an object of theirs
exists, so they are loaded), never imported. The session's namespace, reached from an object that holds it,
is compared by identity: undo compares its names one by one. What is too big for the budget, or opaque (a C
object with no visible state), is reported as unchecked rather than guessed.

Why not the sandbox's fingerprints: undo runs in the user's own process, with no forked child whose page
records say what was written (the preview's ``forms``), and it must not miss an in-place change that sampling
(the in-process safety net's ``ownership.fingerprint``) could: so this one checksums every byte within its
budget, once per approved proposal.
"""

from __future__ import annotations

import array
import datetime
import decimal
import re
import sys
import types
import zlib
from dataclasses import dataclass, field
from typing import Any

from ..capabilities import layout, structural

BYTE_BUDGET = 2_000_000_000  # bytes checksummed per fingerprint pass (~0.2 s at memory speed)
ITEM_BUDGET = 2_000_000  # container items visited per pass
MAX_DEPTH = 6
_BLOCK = 4096
_SLICE_BLOCKS = 256  # blocks per einsum call: 8 MB of data, a 1 MB temporary

_ATOMS = frozenset(layout.ATOMS)
# immutable values, and things whose state is not the user's data (modules, builtins)
_SKIP = (
    types.ModuleType,
    types.BuiltinFunctionType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.tzinfo,
    decimal.Decimal,
    re.Pattern,
)


@dataclass
class Context:
    """One fingerprinting pass: what is left of the budget, and the objects kept alive for their ids."""

    bytes_left: int = BYTE_BUDGET
    items_left: int = ITEM_BUDGET
    unchecked: bool = False  # something was too big or opaque: "not changed" cannot be promised
    keep: list[Any] = field(default_factory=list)
    namespaces: frozenset[int] = frozenset()  # compared by identity (``layout.namespace_ids``)
    _seen: set[int] = field(default_factory=set)


def fingerprint(obj: Any, ctx: Context | None = None) -> Any:
    """A comparable value that changes when ``obj`` is changed in place; ``None`` for immutable atoms."""
    return _fp(obj, ctx or Context(), 0)


def _fp(obj: Any, ctx: Context, depth: int) -> Any:
    cls = type(obj)  # types are checked with issubclass: isinstance may ask the object (a __class__ property)
    if cls in _ATOMS or issubclass(cls, _SKIP):
        return None
    oid = id(obj)
    if oid in ctx.namespaces:
        return ("namespace", oid)
    if oid in ctx._seen:
        return ("seen", oid)
    ctx._seen.add(oid)
    if depth > MAX_DEPTH:
        ctx.unchecked = True
        return ("deep", oid)
    library = layout.library(cls)
    if library == "numpy":
        np = sys.modules.get("numpy")
        if np is not None and issubclass(cls, np.ndarray):
            return _array_fp(obj, ctx)
        if np is not None and issubclass(cls, (np.generic, np.dtype)):
            return None  # numpy scalars and dtypes are immutable
    if library == "pandas":
        parts = layout.pandas_parts(obj)
        if parts is not None:
            return _pandas_fp(obj, parts, ctx, depth)
    base = layout.builtin_base(cls)
    if base is dict or issubclass(cls, types.MappingProxyType):
        return (cls.__name__, _mapping_fp(obj, ctx, depth))
    if base is not None:  # the base type's own iterator: a subclass's __iter__ is not run
        items = layout.builtin_items(obj, base)
        return (cls.__name__, _items_fp(items, ctx, depth, ordered=base not in (set, frozenset)))
    if issubclass(cls, memoryview):
        view = obj.cast("B") if obj.c_contiguous else memoryview(obj.tobytes())
        return (cls.__name__, obj.nbytes, _digest_bytes(view, ctx))
    spans = layout.memory_of(obj)  # a bytearray, an array.array, Arrow data, a CPU tensor
    if spans is not None:
        ctx.keep.append(obj)
        digests = tuple((start, _digest_bytes(layout.raw(start, end), ctx)) for start, end in spans)
        return (cls.__name__, digests)
    if issubclass(cls, types.FunctionType):
        return (
            "function",
            id(obj.__code__),
            id(obj.__defaults__),
            id(obj.__kwdefaults__),
            _dict_ids(obj, ctx),
        )
    if issubclass(cls, type):
        return ("class", _mapping_fp(dict(vars(obj)), ctx, depth + 1, shallow=True))
    state = structural.instance_state(obj)
    if state is None:
        ctx.unchecked = True  # a C object with no visible state: we cannot tell
        return ("opaque", oid)
    return ("object", id(cls), _mapping_fp(state, ctx, depth + 1))  # ids: no user __eq__ in comparisons


# -- containers and objects ---------------------------------------------------------------------------------
def _items_fp(items: list[Any], ctx: Context, depth: int, ordered: bool = True) -> Any:
    ctx.items_left -= len(items)
    if ctx.items_left < 0:
        ctx.unchecked = True
        return ("too many items", len(items))
    ctx.keep.append(items)  # keeps every item alive: its id stays its own
    ids = array.array("Q", map(id, items))
    if not ordered:
        ids = array.array("Q", sorted(ids))
    inner = tuple(
        fp for fp in (_fp(item, ctx, depth + 1) for item in items if type(item) not in _ATOMS) if fp
    )
    return (len(items), zlib.crc32(ids.tobytes()), inner)


def _mapping_fp(mapping: Any, ctx: Context, depth: int, shallow: bool = False) -> Any:
    pairs = list(dict.items(mapping) if issubclass(type(mapping), dict) else mapping.items())
    keys = [k for k, _ in pairs]
    values = [v for _, v in pairs]
    if shallow:
        ctx.keep.append(values)
        return (len(pairs), zlib.crc32(array.array("Q", map(id, keys + values)).tobytes()))
    ctx.items_left -= len(pairs)
    if ctx.items_left < 0:
        ctx.unchecked = True
        return ("too many items", len(pairs))
    ctx.keep.append(pairs)
    ids = array.array("Q", [id(x) for pair in pairs for x in pair])
    inner = tuple(fp for fp in (_fp(v, ctx, depth + 1) for v in values if type(v) not in _ATOMS) if fp)
    return (len(pairs), zlib.crc32(ids.tobytes()), inner)


def _dict_ids(obj: Any, ctx: Context) -> Any:
    attrs = structural.instance_state(obj, slots=False)
    return _mapping_fp(attrs, ctx, 0, shallow=True) if attrs is not None else None


# -- numpy --------------------------------------------------------------------------------------------------
def _array_fp(arr: Any, ctx: Context) -> Any:
    head = ("ndarray", arr.shape, arr.dtype.str, arr.strides, layout.array_span(arr)[0])
    return (*head, _array_digest(arr, ctx))


def _array_digest(arr: Any, ctx: Context) -> Any:
    np = sys.modules["numpy"]
    if arr.dtype.hasobject:
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        ctx.keep.append(arr.copy())  # the items stay alive, so the pointers below stay theirs
        return _digest_bytes(layout.raw(*layout.array_span(arr)), ctx)  # the pointers themselves
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        ctx.bytes_left -= arr.nbytes  # the copy costs a pass too
        arr = np.ascontiguousarray(arr)
    try:
        view = memoryview(arr).cast("B") if arr.nbytes else memoryview(b"")
    except (TypeError, ValueError):  # a dtype the buffer protocol does not export (e.g. datetime64)
        view = memoryview(arr.view(np.uint8).reshape(-1)) if arr.nbytes else memoryview(b"")
    return _digest_bytes(view, ctx)


_WEIGHTS: Any = None


def _digest_bytes(view: memoryview, ctx: Context) -> Any:
    """The position-sensitive checksum of a byte buffer (see the module docstring)."""
    n = view.nbytes
    ctx.bytes_left -= n
    if ctx.bytes_left < 0:
        ctx.unchecked = True
        return ("too big", n)
    np = sys.modules.get("numpy")
    words = n // 8
    if np is None or words < _BLOCK:
        return (n, zlib.crc32(view))
    global _WEIGHTS
    if _WEIGHTS is None:
        rng = np.random.default_rng(0x9E3779B97F4A7C15)
        _WEIGHTS = rng.integers(0, 2**63, _BLOCK, dtype=np.uint64) | np.uint64(1)
    data = np.frombuffer(view, dtype=np.uint64, count=words)
    blocks = words // _BLOCK
    sums = []
    step = _SLICE_BLOCKS * _BLOCK
    body = data[: blocks * _BLOCK]
    for start in range(0, body.size, step):
        chunk = body[start : start + step].reshape(-1, _BLOCK)
        sums.append(np.einsum("ij,j->i", chunk, _WEIGHTS))
    rest = data[blocks * _BLOCK :]
    tail = int(np.einsum("i,i->", rest, _WEIGHTS[: rest.size])) if rest.size else 0
    crc = zlib.crc32(np.concatenate(sums).tobytes()) if sums else 0
    return (n, crc, tail, zlib.crc32(view[words * 8 :]))


# -- pandas (what holds its data: ``layout.pandas_parts``) -------------------------------------------------
def _pandas_fp(obj: Any, parts: list[Any], ctx: Context, depth: int) -> Any:
    """A frame, series, index or extension array: its shape and label, and each part that holds its data —
    ndarrays checksummed, the others (extension arrays, indexes) by their own parts, Arrow data by its
    buffers — with the part's identity (setting a cell of an Arrow-backed column replaces its array)."""
    ctx.keep.append(parts)
    name = getattr(obj, "name", None) if hasattr(type(obj), "name") else None
    label = name if type(name) in _ATOMS else ("id", id(name))
    shape = tuple(getattr(obj, "shape", ()) or ()) if hasattr(type(obj), "shape") else ()
    inner = tuple((id(part), _fp(part, ctx, depth)) for part in parts)
    return (type(obj).__name__, shape, label, layout.range_of(obj), inner)
