"""Placeholders handed to sandboxed code instead of what it may not have: ``Hidden`` stands in for a value
(a secret, ``os``), ``Refused`` for a callable (a forbidden builtin). Both explain themselves when used."""

from __future__ import annotations

from typing import Any

from ...errors import SandboxViolation


class Hidden:
    """Stands in for a user variable the sandbox must not see (a secret, ``os``, an open file…)."""

    __slots__ = ("__why",)

    def __init__(self, why: str) -> None:
        self.__why = why

    def __repr__(self) -> str:
        return f"<hidden: {self.__why}>"

    def __getattr__(self, name: str) -> Any:
        raise SandboxViolation(self.__why)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise SandboxViolation(self.__why)

    def _refuse(self, *args: Any) -> Any:
        """Any use of the value — a slice, a loop, ``len``, arithmetic, a conversion — says why it is not
        there, in one sentence (not ``'Hidden' object is not subscriptable``)."""
        raise SandboxViolation(self.__why)

    __getitem__ = __iter__ = __len__ = __contains__ = __reversed__ = _refuse
    __add__ = __radd__ = __mul__ = __rmul__ = __mod__ = __rmod__ = _refuse
    __int__ = __float__ = __index__ = __bytes__ = __format__ = _refuse


class Refused:
    """A callable that explains why it cannot be called (forbidden builtins, the user's own functions)."""

    __slots__ = ("__why",)

    def __init__(self, why: str) -> None:
        self.__why = why

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise SandboxViolation(self.__why)

    def __repr__(self) -> str:
        return f"<not available: {self.__why}>"


MODULE_TYPE = Refused("module objects cannot be created in the sandbox")
