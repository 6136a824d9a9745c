"""Writes: RestrictedPython's ``_write_`` guards the target of ``obj.x = …``, ``obj[k] = …`` and ``del``.
Modules, functions, classes from outside the sandbox and (in-process) the user's objects are never written."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from ...errors import SandboxViolation
from .admission import BUILTIN_FUNCS, FUNCS
from .guard_state import GuardState
from .modules import ModuleProxy
from .placeholders import Hidden, Refused
from .rules import SANDBOX_MODULE


class WriteGuards(GuardState):
    """The write guard and its fast path."""

    def make_write(self) -> Callable[[Any], Any]:
        """RestrictedPython's ``_write_``: the target of ``obj.x = …``, ``obj[k] = …`` and ``del``."""
        plain = {dict, list, set, bytearray}
        sandbox_types = self._sandbox_types
        user = self.user
        watched = bool(user)  # the run's policy protects some of the session's objects here
        slow = self.write

        def guarded_write(obj: Any) -> Any:
            t = type(obj)
            if t in sandbox_types or (t in plain and not (watched and obj in user)):
                return obj
            if self._is_sandbox_type(t):  # instances of the snippet's own classes are always its own
                return obj
            return slow(obj)

        return guarded_write

    def write(self, obj: Any) -> Any:
        """The full check behind ``make_write``'s fast path."""
        t = type(obj)
        if t is ModuleProxy or t is types.ModuleType:
            raise SandboxViolation("modules cannot be changed in the sandbox")
        if t is Hidden or t is Refused or t in FUNCS or t in BUILTIN_FUNCS:
            raise SandboxViolation("this object cannot be changed in the sandbox")
        if isinstance(obj, type) and obj.__module__ != SANDBOX_MODULE:
            raise SandboxViolation("classes defined outside the sandbox cannot be changed")
        if self.is_user(obj):
            raise SandboxViolation(
                "this would change the session's object; work on a copy (list(x), dict(x), df.copy())"
            )
        return obj
