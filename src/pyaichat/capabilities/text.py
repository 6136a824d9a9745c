"""The small text helpers every description of a value uses — its type's name, a cut to a width, a counted
noun — in a module of their own, below the generic bounded repr (``bounded_repr``) and the adapters, which
both use them."""

from __future__ import annotations

from typing import Any

from .structural import module_of, qualname_of

__all__ = ["count", "cut", "type_name"]


def type_name(value: Any) -> str:
    """``pandas.DataFrame``, ``list``, ``Point``: read through ``type``'s own descriptors (a metaclass of the
    session's runs no code here)."""
    cls = type(value)
    module = module_of(cls)
    name = qualname_of(cls)
    if module in ("builtins", "__main__", ""):
        return name
    return f"{module.split('.')[0].lstrip('_')}.{name}"


def cut(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
