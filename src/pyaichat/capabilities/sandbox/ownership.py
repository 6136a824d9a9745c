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
every byte it can within a budget and says what it could not check.
"""

from __future__ import annotations

import hashlib
import sys
import types
from collections import deque
from collections.abc import Iterable
from typing import Any

WALK_BUDGET = 200_000  # objects visited when deciding ownership
_HASH_BYTES = 4_000_000  # arrays up to this size are hashed whole; larger ones are sampled
_SCALARS = (int, float, complex, str, bytes, bool, type(None))
# Shared code and modules are not "the user's data": never walked, never fingerprinted.
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
MAX_DEPTH = 6
MAX_COLUMNS = 500
MAX_ARRAYS = 2_000
_EA_BUFFERS = ("_ndarray", "_data", "_mask", "_codes")
_PLAIN_CONTAINERS = frozenset({list, dict, set, tuple, bytearray, deque})


def _children(obj: Any) -> Iterable[Any]:
    t = type(obj)
    if t in (list, tuple, set, frozenset, deque):
        return obj
    if isinstance(obj, dict):  # a subclass is read through dict's own methods: its overrides are user code
        return [*dict.__iter__(obj), *dict.values(obj)]
    for base in (list, tuple, set, frozenset, deque):
        if isinstance(obj, base):
            return list(base.__iter__(obj))  # type: ignore[attr-defined]
    mod = getattr(t, "__module__", "") or ""
    if mod.startswith("pandas"):
        return pandas_parts(obj)
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict) and not isinstance(obj, type):
        return list(d.values())
    return ()


def pandas_parts(obj: Any) -> list[Any]:
    """What holds a pandas object's data, read from its internals (no per-column Series is built): a frame's
    or series' block arrays and its index and columns; an index's values; the ndarrays behind an extension
    array (numpy-backed, masked, categorical)."""
    out: list[Any] = []
    mgr = getattr(obj, "_mgr", None)
    arrays = getattr(mgr, "arrays", None) if mgr is not None else None
    if isinstance(arrays, (list, tuple)):
        out.extend(arrays[:MAX_COLUMNS])
    for attr in ("index", "columns"):
        part = getattr(obj, attr, None) if mgr is not None else None
        if part is not None:
            out.append(part)
    for attr in ("_data", *_EA_BUFFERS):
        part = _stored(obj, attr) if mgr is None else None
        if part is not None and not isinstance(part, (*_SCALARS, *_OPAQUE)):
            out.append(part)
    return out


def _stored(obj: Any, attr: str) -> Any:
    """``obj.attr`` if reading it computes nothing: a ``RangeIndex`` builds its ``_data`` array (80 MB for ten
    million rows) on first read and caches it on the user's object."""
    descriptor = getattr(type(obj), attr, None)
    if type(descriptor).__name__ == "CachedProperty" and attr not in (getattr(obj, "_cache", None) or {}):
        return None
    return getattr(obj, attr, None)


def ndarray_type() -> type | None:
    """``numpy.ndarray`` if numpy is loaded (never imported here: no numpy, no arrays)."""
    np = sys.modules.get("numpy")
    return getattr(np, "ndarray", None)


class UserObjects:
    """The identity set of objects reachable from the user's values, built lazily and bounded."""

    def __init__(self, roots: Iterable[Any]) -> None:
        self._roots = list(roots)
        self._ids: set[int] | None = None
        self._pinned: list[Any] = []
        self._arrays: list[Any] = []  # user ndarrays: a write to any array sharing their memory is refused

    def _build(self) -> set[int]:
        ids: set[int] = set()
        queue = deque(self._roots)
        ndarray = ndarray_type() or ()
        visits = 4 * WALK_BUDGET  # scalars are skipped, not free: a list of ten million ints ends here
        while queue and len(ids) < WALK_BUDGET and visits:
            visits -= 1
            obj = queue.popleft()
            if isinstance(obj, (*_SCALARS, *_OPAQUE)) or id(obj) in ids:
                continue
            ids.add(id(obj))
            self._pinned.append(obj)
            if isinstance(obj, ndarray) and len(self._arrays) < MAX_ARRAYS:  # memmap and other subclasses too
                self._arrays.append(obj)
            try:
                queue.extend(_children(obj))
            except Exception:
                continue
        return ids

    def __contains__(self, obj: Any) -> bool:
        ids = self._ids
        if ids is None:
            if not self._roots:
                return False
            ids = self._ids = self._build()
        if id(obj) in ids:
            return True
        if type(obj) in _PLAIN_CONTAINERS or isinstance(obj, _SCALARS):
            return False
        # A numpy view (``arr[:5]``, ``arr.flat``, ``np.frombuffer(arr)``) writes through to the user's
        # memory; a pandas indexer (``df.loc``) writes into ``.obj``; a fresh wrapper of a column's array
        # (``s.array``) writes into the ndarray behind it.
        mod = type(obj).__module__
        if mod.startswith("numpy"):
            base = getattr(obj, "base", None)
            while base is not None:
                if id(base) in ids:
                    return True
                base = getattr(base, "base", None)
            return self._shares_memory(obj)
        if mod.startswith("pandas"):
            if hasattr(type(obj), "obj"):
                target = getattr(obj, "obj", None)
                return target is not None and id(target) in ids
            return any(self._shares_memory(getattr(obj, a, None)) for a in _EA_BUFFERS)
        return False

    def _shares_memory(self, arr: Any) -> bool:
        ndarray = ndarray_type()
        if ndarray is None or not self._arrays:
            return False
        flat = type(arr).__name__ == "flatiter"
        if not (flat or isinstance(arr, ndarray)):
            return False
        import numpy as np  # the session holds arrays (ndarray_type found numpy loaded): no cost

        target = arr.base if flat else arr
        return any(np.may_share_memory(target, user) for user in self._arrays)

    def freeze(self) -> list[tuple[int, Any]]:
        """Make every user array, and every array it is a view of, read-only until ``thaw``; returns what was
        changed (arrays already read-only stay as they are)."""
        ndarray = ndarray_type()
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
    if budget[0] < 0 or depth > MAX_DEPTH or isinstance(obj, (*_SCALARS, *_OPAQUE)):
        return None
    t = type(obj)
    mod = getattr(t, "__module__", "") or ""
    try:
        if mod.startswith("numpy") and hasattr(obj, "tobytes") and hasattr(obj, "nbytes"):
            return ("nd", obj.shape, str(obj.dtype), _array_digest(obj))
        if mod.startswith("pandas") and hasattr(obj, "shape"):
            parts: list[Any] = [tuple(obj.shape)]
            if hasattr(obj, "columns"):
                parts.append(tuple(map(str, obj.columns))[:1000])
                parts.append(tuple(str(d) for d in obj.dtypes)[:1000])
                for name in list(obj.columns)[:200]:
                    parts.append(_pandas_digest(obj[name]))
            elif hasattr(obj, "to_numpy"):
                parts.append(_pandas_digest(obj))
            if hasattr(obj, "index"):
                parts.append(_pandas_digest(obj.index))
            return ("pd", *parts)
        if t in (list, tuple, deque) or isinstance(obj, (list, tuple)):
            return ("seq", len(obj), tuple(id(x) for x in list(obj)[:10_000]),
                    tuple(fingerprint(x, budget, depth + 1) for x in list(obj)[:200]))  # fmt: skip
        if isinstance(obj, dict):
            items = list(obj.items())[:10_000]
            return ("map", len(obj), tuple((repr(k)[:50], id(v)) for k, v in items),
                    tuple(fingerprint(v, budget, depth + 1) for _, v in items[:200]))  # fmt: skip
        if isinstance(obj, (set, frozenset)):
            return ("set", len(obj), hash(frozenset(id(x) for x in obj)) if len(obj) <= 100_000 else None)
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            return (
                "obj",
                tuple((k, id(v), fingerprint(v, budget, depth + 1)) for k, v in list(d.items())[:200]),
            )
    except Exception:
        return ("unreadable", t.__name__)
    return None


_PLAIN_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _pandas_digest(values: Any) -> str:
    """An extension array (Arrow-backed strings, categoricals) gives fresh objects on every ``to_numpy()``:
    plain values are compared by value, anything else (a category that is a user object) by identity, so no
    user ``__repr__`` runs."""
    arr = values.to_numpy()
    if arr.dtype == object and values.dtype != object:
        flat = [x if type(x) in _PLAIN_SCALARS else ("id", id(x)) for x in arr.ravel()[:10_000].tolist()]
        return hashlib.blake2b(repr(flat).encode(), digest_size=16).hexdigest()
    return _array_digest(arr)


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
