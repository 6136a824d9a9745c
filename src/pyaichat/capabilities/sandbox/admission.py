"""Admission: every value that enters sandboxed code — a user variable, an attribute, a module member — is
checked here once, and replaced by a placeholder, a guarded wrapper or a module proxy when it must be."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...errors import SandboxViolation
from ..bounded_repr import is_environ
from .guard_state import GuardState
from .hiding import hide_secret_parts, is_pandas_frame
from .modules import ModuleProxy
from .origin import is_user_function, type_verdict
from .placeholders import Hidden, Refused
from .rules import DANGEROUS_ROOTS, INTERNALS, UNSAFE_BUILTIN_IDS

FUNCS = (types.FunctionType, types.MethodType)
FRAMEISH = (
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)
BUILTIN_FUNCS = (types.BuiltinFunctionType, types.BuiltinMethodType)
ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None)})
MAX_DEPTH = 64  # nesting followed for secret names (the item budget bounds the work)


class AdmissionGuards(GuardState):
    """Values entering the sandbox, and the read-only view of the user's variables."""

    # ---- values entering the sandbox ---
    def admit(self, value: Any, where: str) -> Any:
        """Check one value the code is about to receive (an attribute, a module member, a user variable)."""
        t = type(value)
        if t is types.ModuleType:
            return self.proxy(value)
        if t in FUNCS:
            if is_user_function(value):
                if self.walled:
                    return self.user_call(value, where)
                return Refused(
                    f"calling the session's own function {where} is not allowed in the sandbox "
                    "(it could have side effects); propose the call to the user instead"
                )
            root = (getattr(value, "__module__", None) or "").split(".")[0]
            if root in DANGEROUS_ROOTS:
                raise SandboxViolation(f"{where} is not available in the sandbox")
            return self.policy.library_call(value, where, self.is_user)
        if t in BUILTIN_FUNCS:
            if id(value) in UNSAFE_BUILTIN_IDS:
                raise SandboxViolation(f"{where} is not available in the sandbox")
            owner = getattr(value, "__self__", None)
            if type(owner) is types.ModuleType:
                if owner.__name__.split(".")[0] in DANGEROUS_ROOTS:
                    raise SandboxViolation(f"{where} is not available in the sandbox")
            else:
                root = (getattr(value, "__module__", None) or "").split(".")[0]
                if root in DANGEROUS_ROOTS:
                    raise SandboxViolation(f"{where} is not available in the sandbox")
            return self.policy.library_call(value, where, self.is_user)
        if t is ModuleProxy or t is Hidden or t is Refused:
            return value
        if t is memoryview:
            return self.policy.memory_view(value)
        verdict = type_verdict(t)
        if verdict:
            raise SandboxViolation(verdict)
        if t.__name__ in ("ufunc", "_ArrayFunctionDispatcher"):
            return self.policy.library_call(value, where, self.is_user)
        return value

    # ---- the session's own code (only behind the kernel wall) ---
    def user_call(self, func: Callable[..., Any], where: str) -> Callable[..., Any]:
        """The session's own function or method, callable because the kernel wall stops whatever it might do
        to files, the network or other processes; what it returns is admitted like a user variable (a
        credential it hands back is hidden, a module proxied, ``os.environ`` refused)."""
        name = where.lstrip(".") or getattr(func, "__name__", "function")

        def call(*args: Any, **kwargs: Any) -> Any:
            for arg in (*args, *kwargs.values()):
                _check_user_arg(arg, name)
            return self.from_user_code(func(*args, **kwargs), f"the value returned by {name}()")

        call.__name__ = getattr(func, "__name__", "function")
        call.__qualname__ = getattr(func, "__qualname__", call.__name__)
        call.__doc__ = getattr(func, "__doc__", None)
        return call

    def from_user_code(self, value: Any, what: str) -> Any:
        """A value computed by the session's own code (a function, a method, a property)."""
        if isinstance(value, FRAMEISH):
            raise SandboxViolation(f"{what} leads out of the sandbox and is not available")
        if isinstance(value, str) and len(value) < 10_000 and self.looks_secret(value):
            return Hidden(f"{what} holds a credential and is not available in the sandbox")
        try:
            return self.admit(self._sanitize(value, 0, [10_000], values=True), what)
        except SandboxViolation as exc:
            raise SandboxViolation(f"{what} is not available in the sandbox ({exc})") from None

    def _sanitize(self, value: Any, depth: int, budget: list[int], values: bool = False) -> Any:
        """A copy of a dict (or list or tuple) with secret-named entries hidden at any depth, copies of the
        environment hidden, pandas objects with their secret columns and labels redacted (``hiding``) and
        the session's functions admitted; the value itself when nothing changed.
        ``values``: strings that look like credentials are hidden too, wherever they sit (for what the
        session's own code returns). Bounded: ``budget`` items in all are looked at, lists and tuples of up to
        1,000 items; what lies beyond is read as it is (and masked on the way out by value)."""
        t = type(value)
        if values and t is str and len(value) < 10_000 and self.looks_secret(value):
            return Hidden("a value that holds a credential is not available in the sandbox")
        if depth and t in FUNCS and is_user_function(value):
            # The session's function inside a container (``handlers = {"run": shell}``) gets the same
            # admission as one named directly: refused, or (behind the kernel wall) a checked call.
            return self.admit(value, getattr(value, "__name__", "function"))
        if depth > MAX_DEPTH or budget[0] <= 0 or t in ATOMS:
            return value
        if isinstance(value, dict) and (t is dict or t.__module__ == "collections"):
            if is_environ(value):
                return Hidden("a copy of the environment is not available in the sandbox")
            return self._sanitize_dict(value, depth, budget, values)
        if t in (list, tuple) and len(value) <= 1000:
            items = [self._sanitize(v, depth + 1, budget, values) for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                return t(items)
            return value
        if is_pandas_frame(value):
            budget[0] -= 1
            return hide_secret_parts(value, self._secret_key)
        names = getattr(getattr(value, "dtype", None), "names", None) if t.__module__ == "numpy" else None
        if names and any(type(n) is str and self._secret_key(n) for n in names):
            return Hidden(
                "the array has a field that looks like a secret and is not available in the sandbox"
            )
        return value

    def _sanitize_dict(self, value: dict[Any, Any], depth: int, budget: list[int], values: bool) -> Any:
        changed: dict[Any, Any] | None = None
        for k, v in list(dict.items(value))[: budget[0]]:
            budget[0] -= 1
            if (
                isinstance(k, str)
                and v is not None
                and not (type(v) is str and not v)
                and self._secret_key(k)
            ):
                new: Any = Hidden(f"the entry {k!r} looks like a secret and is not available in the sandbox")
            else:
                new = self._sanitize(v, depth + 1, budget, values)
            if new is not v:
                changed = (
                    (dict(value) if type(value) is dict else value.copy()) if changed is None else changed
                )
                changed[k] = new
        return value if changed is None else changed

    # ---- the user's variables ---
    def view(self, namespace: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
        """The user's variables the code names, each checked (``admit``) or replaced by a placeholder."""
        out: dict[str, Any] = {}
        for name in names:
            if name not in namespace or name.startswith("_"):
                continue
            value = namespace[name]
            if self.is_secret_name(name):
                out[name] = Hidden(
                    f"the variable {name} looks like a secret and is not available in the sandbox"
                )
                continue
            if isinstance(value, str) and len(value) < 10_000 and self.looks_secret(value):
                out[name] = Hidden(
                    f"the variable {name} holds a credential and is not available in the sandbox"
                )
                continue
            try:
                out[name] = self.admit(self._sanitize(value, 0, [10_000]), name)
            except SandboxViolation as exc:
                out[name] = Hidden(f"the variable {name} is not available in the sandbox ({exc})")
        return out


def _check_user_arg(arg: Any, func: str) -> None:
    """A private or internal name passed to the session's function: refused, so that a reflection helper the
    user wrote (``def get(o, n): return getattr(o, n)``) cannot walk ``__class__`` / ``__globals__`` for the
    sandbox."""
    items = arg if type(arg) in (tuple, list) and len(arg) <= 100 else (arg,)
    for item in items:
        if type(item) is str and (item.startswith("__") or item in INTERNALS or "._" in item):
            raise SandboxViolation(
                f"passing the name {item[:40]!r} to the session's function {func} is not allowed "
                "in the sandbox (private attributes stay out of reach)"
            )
