"""Bounded reprs of plain values, and the small helpers every summary uses.

Nothing builds a huge string first: strings are sliced before ``repr``, containers are walked item by item up
to a few items, large sized objects are described by type and length alone. Values a data-library adapter
knows are shown by that adapter's one line, never by their own ``repr`` (a lazy frame's repr may compute).

Two modes, chosen by ``Limits.picture``:

* the **session picture** (``list_globals`` and the digest rebuilt for every question) calls nothing whose
  cost is unknown: ``len`` only where it is implemented in C, a user ``__repr__`` only through
  ``guard.bounded`` with a small budget, and never again for an object that overran once;
* an **explicit request** (``get_repr``) may run the user's ``__repr__``/``__len__`` under ``guard.guarded``.
"""

from __future__ import annotations

import inspect
import itertools
import os
import types
from collections import deque
from typing import Any

from . import adapters
from .guard import PICTURE_BUDGET, Overtime, bounded, failure, guarded, overran, remember_overrun
from .privacy import FULL, SCHEMA
from .redact import REDACTED, is_secret_name

LARGE = 10_000
_CONTAINERS = (list, tuple, dict, set, frozenset, deque)


# -- small helpers -------------------------------------------------------------------------------------------
def type_name(value: Any) -> str:
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    if module in ("builtins", "__main__", ""):
        return name
    return f"{module.split('.')[0].lstrip('_')}.{name}"


def cut(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def is_environ(value: Any) -> bool:
    """``os.environ``, ``os.environb`` or a dict copy of the environment: only their size is ever shown."""
    if isinstance(value, os._Environ):
        return True
    if type(value) is not dict or len(value) < 3:
        return False
    sample = list(itertools.islice(value.items(), 5))
    return all(isinstance(k, str) and isinstance(v, str) and os.environ.get(k) == v for k, v in sample)


def has_custom_repr(value: Any) -> bool:
    return type(value).__repr__ is not object.__repr__


def is_iterator(value: Any) -> bool:
    cls = type(value)
    return hasattr(cls, "__next__") and hasattr(cls, "__iter__")


def static(obj: Any, name: str) -> Any:
    """``obj.name`` read without running a property or ``__getattr__`` (``None`` when absent)."""
    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        return None


def known_len(value: Any) -> int | None:
    """``len(value)`` only where ``__len__`` is implemented in C (lists, dicts, their subclasses, …): a
    ``__len__`` written in Python may be a remote call or a whole computation, so it is never called here."""
    method = static(type(value), "__len__")
    if not isinstance(method, (types.WrapperDescriptorType, types.MethodDescriptorType)):
        return None
    try:
        n = len(value)
    except Exception:
        return None
    return n if isinstance(n, int) else None


def safe_len(value: Any) -> int | None:
    """``len(value)`` for sized objects, ``None`` when unsized, failing or too slow (never iterates). Runs a
    ``__len__`` written in Python under ``guarded``: for explicit requests only."""
    if not hasattr(type(value), "__len__"):
        return None
    try:
        n = guarded(lambda: len(value))
    except (Exception, Overtime):
        return None
    return n if isinstance(n, int) else None


def signature_text(obj: Any) -> str | None:
    """``name(params)`` of a callable (``__signature__``/``__wrapped__`` may be user code: guarded)."""
    try:
        return guarded(lambda: _signature_text(obj))
    except (Exception, Overtime):
        return None


def _signature_text(obj: Any) -> str | None:
    """From ``inspect.signature``, else the first line of a builtin's docstring (numpy ufuncs)."""
    name = getattr(obj, "__name__", None) or type(obj).__name__
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        pass
    except Exception:
        return None
    doc = getattr(obj, "__doc__", None)
    if isinstance(doc, str):
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        if (first.startswith(f"{name}(") and first.endswith(")")) or (
            "->" in first and first.startswith(name)
        ):
            return first
    return None


def user_repr(value: Any, picture: bool, width: int) -> str:
    """``repr(value)`` of an object with its own ``__repr__``, bounded: in the picture through ``bounded``
    with a small budget (an object that overran once is not asked again), else under ``guarded``."""
    what = f"repr of {type_name(value)}"
    if not picture:
        try:
            return cut(guarded(lambda: repr(value)), width)
        except (Exception, Overtime) as exc:
            return failure(what)(exc)
    if overran(value):
        return f"<{what} skipped: it was too slow before>"
    try:
        text = bounded(lambda: repr(value), PICTURE_BUDGET)
    except Overtime as exc:
        remember_overrun(value)
        return failure(what)(exc)
    except Exception as exc:
        return failure(what)(exc)
    return cut(text if isinstance(text, str) else str(type(text)), width)


# -- bounded repr --------------------------------------------------------------------------------------------
class Limits:
    """How much of a value ``brepr`` may show, by privacy level, and whether it is for the session picture."""

    def __init__(self, privacy_level: int, picture: bool = False) -> None:
        full = privacy_level >= FULL
        self.level = privacy_level
        self.picture = picture
        self.items = 20 if full else 6  # items per container (top level)
        self.depth = 4 if full else 3
        self.string = 400 if full else 80
        self.other = 400 if full else 120


def brepr(value: Any, lim: Limits, depth: int = 0) -> str:
    """A bounded repr (sample/full levels only): reprlib-like, with secret-named keys and attributes
    masked."""
    if is_environ(value):
        return "<environment variables: contents withheld>"
    if value is None or isinstance(value, (bool, float, complex)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 256:
            return f"<int with about {int(value.bit_length() * 0.30103):,} digits>"
        return repr(value)
    if isinstance(value, (str, bytes, bytearray)):
        limit = lim.string if depth else lim.string * 4
        if len(value) <= limit:
            return repr(value)
        return repr(value[:limit]) + f"…(+{len(value) - limit:,} more)"
    if depth >= lim.depth:
        return short_header(value)
    if isinstance(value, _CONTAINERS):
        return _container(value, lim, depth)
    try:  # a data library's own summary, never its repr
        known = adapters.one_line(value, max(lim.level, SCHEMA), lim.picture)
    except adapters.Degraded:  # a third party's adapter failed: the generic repr below
        known = None
    if known is not None:
        return "<" + cut(" ".join(known.split()), 80) + ">"
    if is_iterator(value) or isinstance(value, (types.GeneratorType, types.CoroutineType)):
        return f"<{type_name(value)} (iterator, not consumed)>"
    n = known_len(value) if lim.picture else safe_len(value)
    if n is not None and n > LARGE:
        return f"<{type_name(value)} with {n:,} items>"
    if not has_custom_repr(value):
        return f"<{type_name(value)} object>"
    return user_repr(value, lim.picture, lim.other)


def _container(value: Any, lim: Limits, depth: int) -> str:
    n_items = max(lim.items // (depth + 1), 2)
    if isinstance(value, dict):
        parts = []
        for k, v in itertools.islice(value.items(), n_items):
            shown = REDACTED if isinstance(k, str) and is_secret_name(k) else brepr(v, lim, depth + 1)
            parts.append(f"{brepr(k, lim, depth + 1)}: {shown}")
        body = "{" + ", ".join(parts) + _more(len(value) - len(parts)) + "}"
        return body if type(value) is dict else f"{type(value).__name__}({body})"
    items = [brepr(v, lim, depth + 1) for v in itertools.islice(value, n_items)]
    rest = _more(len(value) - len(items))
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # namedtuple: keep field names
        pairs = [f"{f}={i}" for f, i in zip(type(value)._fields, items, strict=False)]
        return f"{type(value).__name__}({', '.join(pairs)}{rest})"
    if isinstance(value, (list, deque)):
        body = "[" + ", ".join(items) + rest + "]"
    elif isinstance(value, tuple):
        body = "(" + ", ".join(items) + ("," if len(value) == 1 else "") + rest + ")"
    elif not value:
        return "set()" if isinstance(value, set) else f"{type(value).__name__}()"
    else:
        body = "{" + ", ".join(items) + rest + "}"
    exact = type(value) in (list, tuple, set)
    return body if exact else f"{type(value).__name__}({body})"


def _more(n: int) -> str:
    return f", … {n:,} more" if n > 0 else ""


def short_header(value: Any) -> str:
    n = known_len(value) if isinstance(value, _CONTAINERS) else None
    return f"<{type_name(value)}" + (f", {n:,} items>" if n is not None else ">")


def attributes(value: Any, lvl: int, limit: int = 12) -> str:
    """Instance attributes from ``__dict__`` (read statically): types at ``schema``, short values above."""
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except Exception:
        return ""
    if not isinstance(attrs, dict):
        return ""
    parts = []
    for name, attr in itertools.islice(
        ((k, v) for k, v in attrs.items() if not str(k).startswith("_")), limit
    ):
        if lvl == SCHEMA:
            parts.append(f"{name}: {type_name(attr)}")
        elif is_secret_name(str(name)):
            parts.append(f"{name}={REDACTED}")
        else:
            parts.append(f"{name}={brepr(attr, Limits(lvl), 2)}")
    return ", ".join(parts)
