"""Attribute and item reads: RestrictedPython's ``_getattr_`` / ``_getitem_`` and the ``getattr``/``hasattr``
builtins. No private name, no frame or code internals, no secret-named attribute or key, no user property (it
would run the session's code), and the pandas methods that take paths, expressions or method names wrapped."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from ...errors import SandboxViolation
from .admission import FRAMEISH
from .formatting import safe_format, safe_format_map, unbound_format, unbound_format_map
from .guard_state import GuardState
from .modules import ModuleProxy, check_attr_name
from .origin import is_user_class, runs_user_code
from .placeholders import Hidden, Refused
from .rules import (
    EXPRESSION_METHODS,
    INTERNALS,
    MUTATING_METHODS,
    NUMPY_OBJECT_BLOCKS,
    SANDBOX_MODULE,
    STRING_DISPATCH,
    TEXT_WRITERS,
)
from .wrapped_calls import checked_dispatch, checked_expression, mutating_error, no_path

_MISSING = object()
_GEN_OK = frozenset({"send", "throw", "close", "gi_running", "gi_suspended"})


class AttributeGuards(GuardState):
    """``obj.name``, ``getattr``, ``hasattr`` and ``obj[key]``."""

    def check_name(self, name: Any) -> None:
        check_attr_name(name)
        if self._secret_key(name):
            raise SandboxViolation(
                f"the attribute {name} looks like a secret and is not available in the sandbox"
            )

    def make_getattr(self) -> Callable[..., Any]:
        """The hot path: one call per attribute read in sandboxed code."""
        check_name = self.check_name
        slow = self._getattr_slow
        simple_types = {int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset, range,
                        slice, type(None)}  # fmt: skip
        special = self.policy.getattr_special  # names that need a look even on plain types
        sandbox_types = self._sandbox_types
        user = self.user

        def guarded_getattr(obj: Any, name: str, default: Any = _MISSING) -> Any:
            if type(name) is not str or not name or name[0] == "_" or name in INTERNALS:
                check_name(name)
            t = type(obj)
            if t is ModuleProxy:
                try:
                    return obj._lookup(name)
                except AttributeError:
                    if default is _MISSING:
                        raise
                    return default
            if t in simple_types:
                if name in special:
                    if name in MUTATING_METHODS and obj in user:
                        raise mutating_error(name)
                    if name == "format" or name == "format_map":
                        return slow(obj, name, default)
            elif t not in sandbox_types and not self._is_sandbox_type(t):
                return slow(obj, name, default)
            try:
                return getattr(obj, name)
            except AttributeError:
                if default is _MISSING:
                    raise
                return default

        return guarded_getattr

    def _is_sandbox_type(self, t: type) -> bool:
        """Classes the snippet defined (with only ``object`` and its own classes as bases) have no user or
        library code behind their attributes: their reads take the fast path."""
        if getattr(t, "__module__", None) != SANDBOX_MODULE:
            return False
        if all(k is object or getattr(k, "__module__", None) == SANDBOX_MODULE for k in t.__mro__):
            self._sandbox_types.add(t)
            return True
        return False

    def _getattr_slow(self, obj: Any, name: str, default: Any) -> Any:
        self.check_name(name)
        t = type(obj)
        if t is types.ModuleType:
            obj, t = self.proxy(obj), ModuleProxy
            return getattr(obj, name) if default is _MISSING else getattr(obj, name, default)
        if t is Hidden or t is Refused:
            raise SandboxViolation(repr(obj)[1:-1])
        if isinstance(obj, FRAMEISH) or (t is types.GeneratorType and name not in _GEN_OK):
            raise SandboxViolation(f"the attribute {name} leads out of the sandbox and is not available")
        if (name == "format" or name == "format_map") and (isinstance(obj, str) or obj is str):
            if obj is str:
                return unbound_format if name == "format" else unbound_format_map
            return safe_format(obj) if name == "format" else safe_format_map(obj)
        user_code = t is not type and is_user_class(t) and runs_user_code(t, obj, name)
        if user_code and not self.walled:
            raise SandboxViolation(
                f"reading .{name} would run the session's own code (a property); "
                "it is not allowed in the sandbox"
            )
        if name in MUTATING_METHODS and self.policy.mutator_refused(obj, self.is_user):
            raise mutating_error(name)
        if name in NUMPY_OBJECT_BLOCKS and (getattr(t, "__module__", None) or "").startswith("numpy"):
            raise SandboxViolation(
                f"the attribute {name} is not available in the sandbox (raw memory or pickling)"
            )
        try:
            value = getattr(obj, name)
        except AttributeError:
            if default is _MISSING:
                raise
            return default
        if user_code:  # only behind the kernel wall
            value = self.from_user_code(value, f"the value of .{name}")
        else:
            value = self.admit(value, f".{name}")
            if type(value) in (dict, list, tuple) and t is not type and is_user_class(t):
                value = self._sanitize(value, 0, [10_000])  # data of the user's object, like a variable
        mod = getattr(t, "__module__", None) or ""
        if callable(value) and mod.startswith("pandas"):
            if name in TEXT_WRITERS:
                value = no_path(value, name)
            elif name in EXPRESSION_METHODS:
                value = checked_expression(value, name)
            elif name in STRING_DISPATCH:
                value = checked_dispatch(value, name, self.check_name)
            value = self.policy.pandas_method(value, name, obj, self.is_user)
        return value

    def getattr_builtin(self, obj: Any, name: Any, *default: Any) -> Any:
        """``getattr(obj, name[, default])`` with the same checks as ``obj.name``."""
        self.check_name(name)
        return self._getattr(obj, name, *default)

    def hasattr_builtin(self, obj: Any, name: Any) -> bool:
        self.check_name(name)
        try:
            self._getattr(obj, name)
        except AttributeError:
            return False
        except SandboxViolation:
            if name in MUTATING_METHODS:  # asking is fine; calling it on the user's object is not
                return hasattr(obj, name)
            raise
        return True

    # ---- items, writes, calls ---
    def make_getitem(self) -> Callable[[Any, Any], Any]:
        secret = self._secret_key

        def guarded_getitem(obj: Any, key: Any) -> Any:
            if type(key) is str and secret(key):
                raise SandboxViolation(
                    f"the key {key!r} looks like a secret and is not available in the sandbox"
                )
            value = obj[key]
            if type(value) is types.ModuleType:
                return self.proxy(value)
            return value

        return guarded_getitem

    def _secret_key(self, key: str) -> bool:
        known = self._secret_keys.get(key)
        if known is None:
            known = bool(self.is_secret_name(key)) if len(key) < 200 else False
            if len(self._secret_keys) < 10_000:
                self._secret_keys[key] = known
        return known
