"""What sits under a secret name inside a pandas object, hidden before sandboxed code sees the object.

A DataFrame column, a Series or an index label with a secret name (``password``, ``api_key``) would otherwise
come out through any road that reads cells — ``df.iloc[0, 1]``, ``df.values``, ``df.T``, ``df.to_csv()``,
``s["password"]``. The sandbox is handed a copy whose secret columns, rows and series read ``<redacted>``
instead: a shallow copy with the column replaced (about 20 ms for a million rows, and only for a frame the
snippet names), never a change to the session's own object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REDACTED = "<redacted>"
MAX_LABELS = 10_000  # row labels looked at for secret names (a bigger string index is not searched)


def is_pandas_frame(value: Any) -> bool:
    t = type(value)
    return t.__qualname__ in ("DataFrame", "Series") and (t.__module__ or "").startswith("pandas")


def hide_secret_parts(value: Any, is_secret: Callable[[str], bool]) -> Any:
    """``value`` (a DataFrame or Series) with what sits under a secret column, label or name replaced by
    ``<redacted>``; ``value`` itself when there is nothing to hide."""
    if type(value).__qualname__ == "Series":
        if _secret_label(value.name, is_secret):
            return type(value)(REDACTED, index=value.index, name=value.name, dtype=object)
        return _hide_rows(value, is_secret)
    secret_columns = [c for c in value.columns if _secret_label(c, is_secret)]
    out = value
    if secret_columns:
        out = value.copy(deep=False)
        for column in secret_columns:
            out[column] = REDACTED
    return _hide_rows(out, is_secret)


def _secret_label(label: Any, is_secret: Callable[[str], bool]) -> bool:
    """A label that is a secret name; a tuple (a MultiIndex label) when any part is."""
    if type(label) is tuple:
        return any(_secret_label(part, is_secret) for part in label[:8])
    return type(label) is str and len(label) < 200 and is_secret(label)


def _hide_rows(value: Any, is_secret: Callable[[str], bool]) -> Any:
    index = value.index
    if index.dtype.kind not in "OUS" or len(index) > MAX_LABELS:
        return value
    rows = [_secret_label(label, is_secret) for label in index]
    if not any(rows):
        return value
    out = value.astype(object)
    out.loc[rows] = REDACTED
    return out
