"""The value-free description of one object (``Form``: type, shape, dtypes, size) and a cheap fingerprint of
its structure, with the data buffers it holds — what a preview compares before and after the proposed code.

Looking runs nothing: what holds an object's data, and how to read a plain object's own state without its
code, is ``layout``'s knowledge (pandas' blocks and extension arrays, numpy and Arrow buffers, builtin
containers through their base type's methods, an instance's ``__dict__`` and slots); anything else is
compared by identity. A buffer is an address range; the bytes of it that share a page with other memory (its
edges, or all of it when smaller than a page) are hashed, the whole pages are left to ``pages``. The session's
namespace, reached from an object that holds it (the shell's ``exit``), is compared by identity: its names are
compared one by one (``layout.namespace_ids``).

Why not ``persist.fingerprint`` or ``ownership.fingerprint``: in the forked child the kernel records which
pages the code wrote (``pages``), so hashing data here would only repeat that at memory speed; what the
preview needs besides is the value-free before → after line (``Form``), which neither of the others makes.
"""

from __future__ import annotations

import hashlib
import types
from dataclasses import dataclass
from itertools import islice
from typing import Any, NamedTuple

from .. import layout, structural
from .pages import PAGE

MAX_ITEMS = 1_000  # element identities compared per container
MAX_NESTED = 50  # elements (values, attributes) looked into per container
MAX_DEPTH = 3
MAX_BUFFERS = 20_000
MAX_COLUMNS_SHOWN = 6
IMMUTABLE = (*layout.ATOMS, frozenset, *layout.CODE)


class Form(NamedTuple):
    """A value-free description of one object and a fingerprint of its structure (a tuple: thousands are made
    per preview)."""

    type_name: str
    shape: tuple[int, ...] | None = None
    noun: str = ""  # what ``shape`` counts for a container: "items", "keys", "chars", "bytes"
    dtypes: str = ""
    nbytes: int | None = None
    inner: tuple[Any, ...] = ()

    def line(self) -> str:
        """``DataFrame 1,000 × 5 (a int64, b float64, …) · 38.1 KB``, ``list of 3 items``, ``int``."""
        text = self.type_name
        if self.shape is not None:
            if self.noun:
                count = self.shape[0]
                text += f" of {count:,} {self.noun if count != 1 else self.noun[:-1]}"
            else:
                text += " " + (" × ".join(f"{n:,}" for n in self.shape) if self.shape else "scalar")
        if self.dtypes:
            text += f" ({self.dtypes})" if "," in self.dtypes or " " in self.dtypes else f" {self.dtypes}"
        if self.nbytes is not None:
            text += f" · {size_text(self.nbytes)}"
        return text


def size_text(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{int(n):,} bytes" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""  # pragma: no cover


@dataclass
class Buffer:
    start: int
    end: int
    edges: tuple[tuple[int, int, bytes], ...]  # (start, end, digest) of the bytes outside whole pages


class _Context:
    """One pass of form-taking: the budget, the pinned objects, the buffers found (if they are wanted)."""

    def __init__(self, pinned: list[Any], buffers: bool) -> None:
        self.pinned = pinned
        self.buffers: list[Buffer] = []
        self.budget = MAX_BUFFERS if buffers else 0


def digest(start: int, end: int) -> bytes:
    return hashlib.blake2b(layout.raw(start, end), digest_size=16).digest()


def _buffer(ctx: _Context, start: int, end: int) -> None:
    if end <= start or ctx.budget <= 0:
        return
    ctx.budget -= 1
    first_whole, last_whole = -(-start // PAGE) * PAGE, end // PAGE * PAGE
    if last_whole <= first_whole:  # no whole page: hash it all
        edges: tuple[tuple[int, int, bytes], ...] = ((start, end, digest(start, end)),)
    else:
        parts = [(start, first_whole), (last_whole, end)]
        edges = tuple((lo, hi, digest(lo, hi)) for lo, hi in parts if hi > lo)
    ctx.buffers.append(Buffer(start, end, edges))


class _Items:
    """A length and an iterator, read through a builtin type's own methods."""

    __slots__ = ("iterator", "size")

    def __init__(self, size: int, iterator: Any) -> None:
        self.size, self.iterator = size, iterator

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Any:
        return self.iterator


class Former:
    """Takes the ``Form`` of objects, recording their buffers and pinning what the fingerprint names.
    ``namespaces``: dicts compared by identity only (``layout.namespace_ids``)."""

    def __init__(self, namespaces: frozenset[int] = frozenset()) -> None:
        self.ndarray = layout.ndarray_type()
        self.namespaces = namespaces

    def look(self, obj: Any, pinned: list[Any], buffers: bool = True) -> tuple[Form, list[Buffer]]:
        """``obj``'s form, and the buffers it holds (with ``buffers``: their edges are read and hashed)."""
        ctx = _Context(pinned, buffers)
        try:
            form = self._form(obj, ctx, 0)
        except Exception as exc:  # an object that cannot be described is compared by identity
            form = Form(type(obj).__name__, inner=("unreadable", type(exc).__name__))
        return form, ctx.buffers

    def _form(self, obj: Any, ctx: _Context, depth: int) -> Form:
        t = type(obj)
        if t is list or t is tuple:  # the common cases first: a namespace may hold thousands
            return Form(t.__name__, (len(obj),), "items", "", None, self._items(obj, ctx, depth))
        if t is dict and id(obj) not in self.namespaces:
            return self._dict(obj, ctx, depth)
        name = t.__name__
        if issubclass(t, (str, bytes)):
            return Form(name, (len(obj),), "chars" if issubclass(t, str) else "bytes")
        if issubclass(t, IMMUTABLE):
            return Form(_kind(obj))
        if id(obj) in self.namespaces:  # where names live: compared name by name, not as this object's state
            return Form(name, inner=("namespace", id(obj)))
        if self.ndarray is not None and issubclass(t, self.ndarray):
            return self._array(obj, ctx)
        if layout.library(t) == "pandas":
            parts = _pandas_closure(obj)
            if parts is not None:
                return self._pandas(obj, parts, ctx)
        spans = layout.memory_of(obj)  # a bytearray, an array.array, Arrow data, a CPU tensor
        if spans is not None:
            return self._memory(obj, spans, ctx)
        # Subclasses are read through their builtin base: their own ``__len__`` or ``__iter__`` is the
        # session's code, and looking runs none of it.
        base = layout.builtin_base(t)
        if base is dict:
            return self._dict(obj, ctx, depth)
        if base is set or base is frozenset:
            size = layout.builtin_len(obj, base)
            members = tuple(layout.builtin_items(obj, base)) if size <= MAX_ITEMS else ()
            ctx.pinned.append(members)
            return Form(name, (size,), "items", inner=(size, frozenset(map(id, members))))
        if base is not None:
            items = _Items(layout.builtin_len(obj, base), iter(layout.builtin_items(obj, base, MAX_ITEMS)))
            return Form(name, (len(items),), "items", inner=self._items(items, ctx, depth))
        attrs = structural.instance_state(obj)
        if attrs is not None:
            keys = tuple(islice(attrs, MAX_ITEMS))
            values = tuple(islice(attrs.values(), MAX_ITEMS))
            ctx.pinned.append(values)
            inner = (keys, tuple(map(id, values)), self._nested(values, ctx, depth))
            return Form(f"{name} object", inner=inner)
        return Form(name)

    def _dict(self, obj: dict[Any, Any], ctx: _Context, depth: int) -> Form:
        size = layout.builtin_len(obj, dict)
        keys = tuple(layout.builtin_keys(obj, MAX_ITEMS))
        ctx.pinned.append(keys)
        values = _Items(size, iter(layout.builtin_items(obj, dict, MAX_ITEMS)))
        inner = (size, tuple(map(id, keys)), self._items(values, ctx, depth))
        return Form(type(obj).__name__, (size,), "keys", "", None, inner)

    def _items(self, items: Any, ctx: _Context, depth: int) -> tuple[Any, ...]:
        """Identities of the first elements (kept alive with ``pinned``, so no other object can take their
        ``id``), and the fingerprints of the first few of them that can change."""
        head = tuple(islice(items, MAX_ITEMS))
        ctx.pinned.append(head)
        return (len(items), tuple(map(id, head)), self._nested(head, ctx, depth))

    def _nested(self, values: tuple[Any, ...], ctx: _Context, depth: int) -> tuple[Any, ...]:
        if depth >= MAX_DEPTH:
            return ()
        return tuple(
            self._form(value, ctx, depth + 1).inner
            for value in values[:MAX_NESTED]
            if not issubclass(type(value), IMMUTABLE)
        )

    def _array(self, arr: Any, ctx: _Context) -> Form:
        start, end = layout.array_span(arr)
        _buffer(ctx, start, end)
        inner = (arr.shape, arr.dtype.str, arr.strides, start)
        return Form(
            type(arr).__name__, tuple(arr.shape), dtypes=str(arr.dtype), nbytes=int(arr.nbytes), inner=inner
        )

    def _pandas(self, obj: Any, parts: list[Any], ctx: _Context) -> Form:
        """A pandas object: the identities of everything that holds its data (``parts``: its blocks, the
        arrays behind them — an Arrow column's data is replaced, not written, when a cell is set —, its index
        and columns), the buffers among them, its shape, columns and dtypes."""
        name = type(obj).__name__
        ctx.pinned.extend(parts)
        inner: list[Any] = [tuple(map(id, parts))]
        for part in parts:
            for start, end in layout.memory_of(part) or ():
                _buffer(ctx, start, end)
        blocks = layout.pandas_blocks(obj)  # the size is the data's, as ``memory_usage(index=False)`` says
        nbytes = sum(int(getattr(a, "nbytes", 0) or 0) for a in (blocks if blocks is not None else [obj]))
        shape = tuple(getattr(obj, "shape", ()) or ())
        inner.append(shape)
        dtypes = ""
        if hasattr(obj, "columns") and hasattr(obj, "dtypes"):  # a frame
            columns = [str(c) for c in list(obj.columns)[:MAX_ITEMS]]
            kinds = [str(d) for d in list(obj.dtypes)[:MAX_ITEMS]]
            inner += [tuple(columns), tuple(kinds)]
            shown = [f"{c} {k}" for c, k in zip(columns[:MAX_COLUMNS_SHOWN], kinds, strict=False)]
            more = len(columns) - MAX_COLUMNS_SHOWN
            dtypes = ", ".join(shown) + (f", … {more} more" if more > 0 else "")
        elif hasattr(obj, "dtype"):
            dtypes = str(obj.dtype)
            inner += [dtypes, str(getattr(obj, "name", ""))]
        return Form(name, shape, dtypes=dtypes, nbytes=nbytes or None, inner=tuple(inner))

    def _memory(self, obj: Any, spans: list[tuple[int, int]], ctx: _Context) -> Form:
        """A buffer holder numpy does not describe: a ``bytearray``, an ``array.array``, Arrow data, a CPU
        tensor. Its spans are part of its fingerprint: memory that moved is compared no further."""
        for start, end in spans:
            _buffer(ctx, start, end)
        nbytes = sum(end - start for start, end in spans)
        name = type(obj).__name__
        shape = getattr(obj, "shape", None) if layout.library(type(obj)) in ("torch", "pyarrow") else None
        if shape is None:  # a run of bytes
            return Form(name, (nbytes,), "bytes", inner=(nbytes, tuple(spans)))
        shape = tuple(int(n) for n in shape)
        dtype = str(getattr(obj, "dtype", ""))
        return Form(name, shape, dtypes=dtype, nbytes=nbytes, inner=(shape, dtype, tuple(spans)))


def _pandas_closure(obj: Any) -> list[Any] | None:
    """The pandas parts of ``obj`` and, inside them, the parts of pandas parts (an extension array's backing
    arrays, an index's values), breadth first and bounded; ``None`` when ``obj`` holds no data in a layout
    ``layout`` knows."""
    parts = layout.pandas_parts(obj)
    if parts is None:
        return None
    found: list[Any] = []
    seen: set[int] = set()
    for level in range(3):
        inner: list[Any] = []
        for part in parts:
            if id(part) in seen or len(found) >= layout.MAX_PARTS:
                continue
            seen.add(id(part))
            found.append(part)
            if level < 2 and layout.is_pandas(part):
                inner.extend(layout.pandas_parts(part) or ())
        parts = inner
    return found


def _kind(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    if isinstance(obj, type):
        return f"class {obj.__qualname__}"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return f"function {getattr(obj, '__qualname__', getattr(obj, '__name__', ''))}"
    return type(obj).__name__
