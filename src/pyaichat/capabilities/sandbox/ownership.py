"""Which objects belong to the user (in-process mode), and fingerprints that prove a run did not change them.

In a forked child nothing the sandbox does can reach the parent's objects, so none of this runs there. In-process,
``UserObjects`` answers "is this object reachable from the user's variables?" by a bounded walk done on first
need; ``fingerprint`` is the safety net compared before and after each run.
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
        out = []
        for attr in ("index", "columns"):
            part = getattr(obj, attr, None) if attr in dir(t) else None
            if part is not None:
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

    def _build(self) -> set[int]:
        ids: set[int] = set()
        queue = deque(self._roots)
        while queue and len(ids) < WALK_BUDGET:
            obj = queue.popleft()
            if isinstance(obj, _SCALARS) or isinstance(obj, _OPAQUE) or id(obj) in ids:
                continue
            ids.add(id(obj))
            self._pinned.append(obj)
            try:
                queue.extend(_children(obj))
            except Exception:
                continue
        return ids

    def __contains__(self, obj: Any) -> bool:
        if isinstance(obj, _SCALARS):
            return False
        ids = self._ids
        if ids is None:
            ids = self._ids = self._build()
        if id(obj) in ids:
            return True
        # A numpy view (``arr[:5]``, ``arr.flat``) writes through to its base; a pandas indexer (``df.loc``)
        # writes into ``.obj``.
        base = getattr(obj, "base", None) if type(obj).__module__.startswith("numpy") else None
        while base is not None:
            if id(base) in ids:
                return True
            base = getattr(base, "base", None)
        if type(obj).__module__.startswith("pandas") and hasattr(type(obj), "obj"):
            target = getattr(obj, "obj", None)
            return target is not None and id(target) in ids
        return False


def fingerprint(obj: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """A cheap, comparable summary of ``obj``'s state: lengths, element identities and array bytes (hashed,
    sampled when large). Equal before and after a run means the run did not visibly change the object."""
    budget = budget if budget is not None else [50_000]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH or isinstance(obj, _SCALARS) or isinstance(obj, _OPAQUE):
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
                    parts.append(_array_digest(obj[name].to_numpy()))
            elif hasattr(obj, "to_numpy"):
                parts.append(_array_digest(obj.to_numpy()))
            if hasattr(obj, "index"):
                parts.append(_array_digest(obj.index.to_numpy()))
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
            return ("obj", tuple((k, id(v), fingerprint(v, budget, depth + 1)) for k, v in list(d.items())[:200]))
    except Exception:
        return ("unreadable", t.__name__)
    return None


def _array_digest(arr: Any) -> str:
    try:
        if arr.dtype == object:
            return hashlib.blake2b(repr([id(x) for x in arr.ravel()[:10_000]]).encode(), digest_size=16).hexdigest()
        flat = arr.ravel()
        if arr.nbytes > _HASH_BYTES:
            step = max(1, flat.size // 100_000)
            flat = flat[::step]
        return hashlib.blake2b(flat.tobytes(), digest_size=16).hexdigest()
    except Exception:
        return "?"
