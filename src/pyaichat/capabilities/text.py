"""The small text helpers every description of a value uses — its type's name, a cut to a width, a counted
noun — in a module of their own, below the generic bounded repr (``bounded_repr``) and the adapters, which
both use them."""

from __future__ import annotations

from typing import Any

__all__ = ["count", "cut", "type_name"]


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
