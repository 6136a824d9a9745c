"""Which objects belong to the user (in-process mode), and fingerprints that prove a run did not change them.

In a forked child nothing the sandbox does can reach the parent's objects, so none of this runs there.
In-process, ``UserObjects`` answers "is this object reachable from the user's variables?" by a bounded walk
done on first need; ``fingerprint`` is the safety net compared before and after each run.
"""

from __future__ import annotations

import hashlib
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
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (list, tuple, set, frozenset, deque)):
        return obj
    mod = getattr(t, "__module__", "") or ""
    if mod.startswith("pandas"):
        out: list[Any] = []
        for attr in ("index", "columns", "array"):
            part = getattr(obj, attr, None) if hasattr(t, attr) else None
            if part is not None:
                out.append(part)
        if hasattr(t, "columns") and hasattr(obj, "iloc"):  # each column's backing array
            out.extend(obj.iloc[:, i].array for i in range(min(obj.shape[1], MAX_COLUMNS)))
        for attr in _EA_BUFFERS:  # the ndarrays behind an extension array (numpy-backed, masked, categorical)
            part = getattr(obj, attr, None)
            if part is not None and type(part).__module__ == "numpy":
                out.append(part)
        return out
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict) and not isinstance(obj, type):
        return list(d.values())
    return ()


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
        while queue and len(ids) < WALK_BUDGET:
            obj = queue.popleft()
            if isinstance(obj, (*_SCALARS, *_OPAQUE)) or id(obj) in ids:
                continue
            ids.add(id(obj))
            self._pinned.append(obj)
            if type(obj).__name__ == "ndarray" and len(self._arrays) < MAX_ARRAYS:
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
        if arr is None or type(arr).__name__ not in ("ndarray", "flatiter") or not self._arrays:
            return False
        import numpy as np

        target = arr.base if type(arr).__name__ == "flatiter" else arr
        return any(np.may_share_memory(target, user) for user in self._arrays)


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


def _pandas_digest(values: Any) -> str:
    """An extension array (Arrow-backed strings, categoricals) gives fresh objects on every ``to_numpy()``:
    its values are compared, not their identities."""
    arr = values.to_numpy()
    if arr.dtype == object and values.dtype != object:
        flat = arr.ravel()[:10_000].tolist()
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
