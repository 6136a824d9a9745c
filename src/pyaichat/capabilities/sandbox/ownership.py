"""Which objects belong to the user (in-process mode), and fingerprints that prove a run did not change them.

In a forked child nothing the sandbox does can reach the parent's objects, so none of this runs there.
In-process, ``UserObjects`` answers "is this object reachable from the user's variables?" by a bounded walk
done on first need, and ``freeze`` makes the user's numpy arrays read-only for the length of a run (numpy then
refuses every write itself, whatever path a call takes: ``out`` in any position, ``copyto(dst=…)``, a view
made during the run, a memmap's file); ``fingerprint`` is the safety net compared before and after each run.

Why its own fingerprint (there are three, each shaped by where it runs): this one runs around *every*
in-process sandbox call, behind guards that already refuse writes, so it must be cheap on any session —
large arrays are sampled. The preview's (``forms``) runs in a forked child and leaves the data to the
kernel's copy-on-write page records, so it fingerprints structure only; undo's (``persist.fingerprint``) runs
once per approved proposal in the real process, with no fork to tell it which pages changed, so it checksums
every byte it can within a budget and says what it could not check. What an object holds — pandas' blocks and
the arrays behind them, numpy spans, a container's items through its base type, an instance's attributes — is
``layout``'s knowledge, shared by the three; none of it runs the user's code.
"""

from __future__ import annotations

import functools
import hashlib
from collections import deque
from collections.abc import Iterable
from typing import Any

from .. import layout, structural

WALK_BUDGET = 200_000  # objects visited when deciding ownership
_HASH_BYTES = 4_000_000  # arrays up to this size are hashed whole; larger ones are sampled
# Immutable values, shared code and modules are not "the user's data": never walked, never fingerprinted.
_LEAVES = (*layout.ATOMS, *layout.CODE)
MAX_DEPTH = 6
MAX_ARRAYS = 2_000
_PLAIN_CONTAINERS = frozenset({list, dict, set, tuple, bytearray, deque})


def _children(obj: Any) -> Iterable[Any]:
    """What ``obj`` holds (see ``layout``): a container's items (a dict's keys and values), a pandas object's
    parts, an instance's attributes."""
    t = type(obj)
    if t is list or t is tuple or t is set or t is frozenset or t is deque:
        return obj
    base = layout.builtin_base(t)
    if base is dict:
        return [*layout.builtin_keys(obj), *layout.builtin_items(obj, dict)]
    if base is not None:
        return layout.builtin_items(obj, base)
    if layout.library(t) == "pandas":
        return layout.pandas_parts(obj) or ()
    state = structural.instance_state(obj)
    return list(state.values()) if state else ()


class UserObjects:
    """The identity set of objects reachable from the user's values, built lazily and bounded."""

    def __init__(self, roots: Iterable[Any]) -> None:
        self._roots = list(roots)
        self._ids: set[int] | None = None
        self._pinned: list[Any] = []
        self._arrays: list[Any] = []  # user ndarrays: a write to any array sharing their memory is refused
        self._spans: list[tuple[int, int]] | None = None  # the bytes each of them spans

    def _build(self) -> set[int]:
        ids: set[int] = set()
        queue = deque(self._roots)
        ndarray = layout.ndarray_type() or ()
        visits = 4 * WALK_BUDGET  # scalars are skipped, not free: a list of ten million ints ends here
        while queue and len(ids) < WALK_BUDGET and visits:
            visits -= 1
            obj = queue.popleft()
            if issubclass(type(obj), _LEAVES) or id(obj) in ids:
                continue
            ids.add(id(obj))
            self._pinned.append(obj)
            if issubclass(type(obj), ndarray) and len(self._arrays) < MAX_ARRAYS:  # memmap, other subclasses
                self._arrays.append(obj)
            try:
                queue.extend(_children(obj))
            except Exception:
                continue
        return ids

    def __bool__(self) -> bool:
        """Whether there is anything to protect (in a forked child, or for a snippet that names no user
        variable, there is not)."""
        return bool(self._roots)

    def __contains__(self, obj: Any) -> bool:
        ids = self._ids
        if ids is None:
            if not self._roots:
                return False
            ids = self._ids = self._build()
        if id(obj) in ids:
            return True
        if type(obj) in _PLAIN_CONTAINERS or issubclass(type(obj), layout.ATOMS):
            return False
        # A numpy view (``arr[:5]``, ``arr.flat``, ``np.frombuffer(arr)``) writes through to the user's
        # memory; a pandas indexer (``df.loc``) writes into its frame; a fresh wrapper of a column's array
        # (``s.array``) writes into the array behind it.
        library = layout.library(type(obj))
        if library == "numpy":
            base = getattr(obj, "base", None)
            while base is not None:
                if id(base) in ids:
                    return True
                base = getattr(base, "base", None)
            return self._shares_memory(obj)
        if library == "pandas" and layout.pandas_blocks(obj) is None:  # not a frame or series of its own
            parts = layout.pandas_parts(obj) or ()
            return any(id(part) in ids or self._shares_memory(part) for part in parts)
        return False

    def _shares_memory(self, arr: Any) -> bool:
        """Whether ``arr`` (an ndarray or a ``flatiter``) spans memory of one of the user's arrays."""
        if not self._arrays:
            return False
        if type(arr).__name__ == "flatiter":
            arr = arr.base
        if not layout.is_ndarray(arr):
            return False
        if self._spans is None:
            self._spans = [layout.array_span(user) for user in self._arrays]
        start, end = layout.array_span(arr)
        return any(start < hi and lo < end for lo, hi in self._spans)

    def freeze(self) -> list[tuple[int, Any]]:
        """Make every user array, and every array it is a view of, read-only until ``thaw``; returns what was
        changed (arrays already read-only stay as they are)."""
        ndarray = layout.ndarray_type()
        if ndarray is None:
            return []
        if self._ids is None:
            if not self._roots:
                return []
            self._ids = self._build()
        frozen: list[tuple[int, Any]] = []
        seen: set[int] = set()
        for arr in self._arrays:
            chain = []
            while isinstance(arr, ndarray) and len(chain) < 64:
                chain.append(arr)
                arr = arr.base
            for height, a in enumerate(reversed(chain)):  # height: how many arrays lie under it
                if id(a) in seen:
                    continue
                seen.add(id(a))
                if a.flags.writeable:
                    try:
                        a.flags.writeable = False
                    except ValueError:
                        continue
                    frozen.append((height, a))
        return frozen


def thaw(frozen: list[tuple[int, Any]]) -> None:
    """Undo ``freeze``: bases first, since numpy lets a view be writable only over a writable base."""
    for _, arr in sorted(frozen, key=lambda item: item[0]):
        try:
            arr.flags.writeable = True
        except ValueError:
            pass


def fingerprint(obj: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """A cheap, comparable summary of ``obj``'s state: lengths, element identities and array bytes (hashed,
    sampled when large). Equal before and after a run means the run did not visibly change the object."""
    budget = budget if budget is not None else [50_000]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH or issubclass(type(obj), _LEAVES) or _library_cache(type(obj)):
        return None
    t = type(obj)
    try:
        if layout.is_ndarray(obj):
            return ("nd", obj.shape, str(obj.dtype), _array_digest(obj))
        if layout.library(t) == "pandas":
            parts = layout.pandas_parts(obj)
            if parts is not None:
                shape = tuple(getattr(obj, "shape", ()) or ())
                inner = tuple((id(p), fingerprint(p, budget, depth + 1)) for p in parts)
                return ("pd", shape, layout.range_of(obj), inner)
        base = layout.builtin_base(t)
        if base is dict:
            keys = layout.builtin_keys(obj, 10_000)
            values = layout.builtin_items(obj, dict, 10_000)
            return ("map", layout.builtin_len(obj, dict), tuple(map(_key, keys)), tuple(map(id, values)),
                    tuple(fingerprint(v, budget, depth + 1) for v in values[:200]))  # fmt: skip
        if base is set or base is frozenset:
            size = layout.builtin_len(obj, base)
            ids = hash(frozenset(map(id, layout.builtin_items(obj, base)))) if size <= 100_000 else None
            return ("set", size, ids)
        if base is not None:
            items = layout.builtin_items(obj, base, 10_000)
            return ("seq", layout.builtin_len(obj, base), tuple(map(id, items)),
                    tuple(fingerprint(x, budget, depth + 1) for x in items[:200]))  # fmt: skip
        state = structural.instance_state(obj)
        if state is not None:
            pairs = [(k, v) for k, v in list(state.items())[:200] if not _cache_slot(t, k)]
            return ("obj", tuple((k, id(v), fingerprint(v, budget, depth + 1)) for k, v in pairs))
    except Exception:
        return ("unreadable", t.__name__)
    return None


# Libraries' own caches, filled by reads (a Dask frame's partition bounds, asked by ``npartitions``): their
# contents are not the object's state. By module and qualified name, and only where the library itself holds
# that class (``structural.defined_at``): a session's class that claims the name is read as any other.
_LIBRARY_CACHES = frozenset({("dask.dataframe.dask_expr._util", "LRU")})


def _library_cache(cls: type) -> bool:
    return (
        structural.module_of(cls),
        structural.qualname_of(cls),
    ) in _LIBRARY_CACHES and structural.defined_at(cls)


def _cache_slot(cls: type, name: str) -> bool:
    """``name`` is a ``functools.cached_property`` of ``cls`` (found on the type, no code run): the instance's
    entry is the class's cache of a value computed from the rest, filled by the first read — a Dask frame's
    ``npartitions`` — not a change the read made."""
    return type(structural.lookup(cls, name)) is functools.cached_property


def _key(key: Any) -> Any:
    """A dict key as compared: its value when plain, else its identity (no user ``__repr__``/``__eq__``)."""
    return key if type(key) in _PLAIN_KEYS else ("id", id(key))


_PLAIN_KEYS = frozenset({str, int, float, bool, bytes, type(None)})


def _array_digest(arr: Any) -> str:
    try:
        if arr.dtype == object:
            return hashlib.blake2b(
                repr([id(x) for x in arr.ravel()[:10_000]]).encode(), digest_size=16
            ).hexdigest()
        flat = arr.ravel()
        if arr.nbytes > _HASH_BYTES:
            step = max(1, flat.size // 100_000)
            flat = flat[::step]
        return hashlib.blake2b(flat.tobytes(), digest_size=16).hexdigest()
    except Exception:
        return "?"
