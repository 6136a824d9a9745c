"""What the adapters share: finding a library's classes without importing it, and bounded text for columns,
small tables and numbers."""

from __future__ import annotations

import datetime
import decimal
import itertools
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ..privacy import FULL, SAMPLE, SCHEMA
from ..redact import REDACTED, is_secret_name
from ..structural import is_subclass, loaded_module, module_namespace
from ..text import count, cut, type_name
from .protocol import LAZY

__all__ = [
    "FULL",
    "LAZY",
    "SAMPLE",
    "SCHEMA",
    "cell",
    "columns_block",
    "columns_inline",
    "count",
    "cut",
    "isinstance_of",
    "module",
    "nbytes_text",
    "number",
    "sample_rows",
    "secret",
    "shape_text",
    "table",
    "type_name",
]

_PLAIN = (bool, int, float, decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)


def module(name: str) -> Any:
    """``sys.modules[name]`` or ``None``: a value of a library's type exists only once it was imported."""
    return sys.modules.get(name)


def isinstance_of(value: Any, module_name: str, *names: str) -> bool:
    """``isinstance(value, module_name.<name>)`` for any of ``names``, without importing anything —
    decided by ``type(value)``'s MRO (``isinstance`` would ask the value's ``__class__``, which a property
    answers)."""
    namespace = module_namespace(loaded_module(module_name))
    classes = [c for c in (namespace.get(n) for n in names) if is_subclass(type(c), type)]
    return any(is_subclass(type(value), c) for c in classes)


def columns_inline(pairs: Iterable[tuple[Any, Any]], total: int, limit: int = 8) -> str:
    """``a int64, b str, … 3 more`` for the one-line summaries."""
    shown = [f"{name} {kind}" for name, kind in itertools.islice(pairs, limit)]
    more = f", … {total - len(shown):,} more" if total > len(shown) else ""
    return ", ".join(shown) + more


def columns_block(pairs: Iterable[tuple[Any, Any]], total: int, limit: int = 30) -> list[str]:
    """``  a: int64`` lines, at most ``limit``, then how many more."""
    lines = [f"  {name!s}: {kind}" for name, kind in itertools.islice(pairs, limit)]
    if total > len(lines):
        lines.append(f"  … {total - len(lines):,} more columns")
    return lines


def cell(value: Any, width: int) -> str:
    """One table cell: plain values as text, anything else by its type (no user ``__repr__`` runs here)."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, _PLAIN):
        return cut(str(value), width)
    if isinstance(value, str):
        return cut(value.replace("\n", "\\n"), width)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return cut(repr(bytes(value[:width])), width)
    if isinstance(value, (list, tuple)) and len(value) <= 20:
        more = ", …" if len(value) > 8 else ""
        return cut("[" + ", ".join(cell(v, 20) for v in value[:8]) + more + "]", width)
    if isinstance(value, dict) and len(value) <= 20:
        inner = ", ".join(f"{k}: {cell(v, 20)}" for k, v in itertools.islice(value.items(), 6))
        return cut("{" + inner + "}", width)
    return f"<{type_name(value)}>"


def table(
    columns: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    lvl: int,
    max_cols: int = 12,
    masked: Iterable[int] = (),
) -> list[str]:
    """A small aligned text table; the values of secret-named columns (and of the columns at the positions
    ``masked``: derived from one, see ``sqllineage``) are replaced."""
    width = 40 if lvl >= FULL else 24
    names = [str(c) for c in columns[:max_cols]]
    hidden = set(masked)
    secret = [is_secret_name(n) or i in hidden for i, n in enumerate(names)]
    body = [
        [REDACTED if secret[i] else cell(v, width) for i, v in enumerate(list(r)[:max_cols])] for r in rows
    ]
    widths = [max([len(n)] + [len(r[i]) for r in body if i < len(r)]) for i, n in enumerate(names)]
    extra = f"  … {len(columns) - max_cols} more columns" if len(columns) > max_cols else ""
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=False)).rstrip() + extra]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in body]
    return lines


def sample_rows(lvl: int) -> int:
    return 10 if lvl >= FULL else 5


def number(n: Any) -> str:
    """``1,234`` for an int, ``?`` for an unknown size (``None``, NaN)."""
    if isinstance(n, int) and not isinstance(n, bool):
        return f"{n:,}"
    return "?"


def shape_text(shape: Sequence[Any]) -> str:
    return "×".join(number(int(d)) if _known(d) else "?" for d in shape) or "scalar"


def _known(d: Any) -> bool:
    try:
        return d == d and d is not None and int(d) == d  # NaN for an unknown Dask dimension
    except Exception:
        return False


def nbytes_text(n: Any) -> str:
    if not isinstance(n, int):
        return "?"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return "?"


def secret(name: Any) -> bool:
    return isinstance(name, str) and is_secret_name(name)
