"""The guard set of one run, assembled from one module per concern, and the dict the compiled code runs in.

Where to look: ``admission`` (values entering the sandbox, the view of the user's variables), ``attributes``
(``obj.name``, ``getattr``, ``obj[key]``), ``writes`` (``_write_``), ``module_guards`` (imports and module
proxies), ``calls`` (wrappers for library functions), ``formatting`` (format strings), ``origin`` (user code
versus library code), ``placeholders`` (``Hidden``, ``Refused``); the allow- and deny-lists are data in
``rules``; the state they share is declared once in ``guard_state``. This module adds the builtins, ``print``
and the assembly.

Every rule holds in both places the code can run; what differs between a forked child (the user's objects
are a private copy-on-write copy and may be changed there) and this process (anything reachable from a user
variable is also write-protected) is asked of the run's ``policy`` (``policy.SandboxPolicy``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import SandboxViolation
from . import limits
from .admission import AdmissionGuards
from .attributes import AttributeGuards
from .module_guards import ModuleGuards
from .modules import ModuleProxy
from .placeholders import MODULE_TYPE, Hidden, Refused
from .rules import FORBIDDEN_BUILTINS, PRIVATE_MESSAGE, SANDBOX_FILENAME, SANDBOX_MODULE
from .wrapped_calls import apply_call, iter_unpack, unpack
from .writes import WriteGuards

__all__ = ["SANDBOX_FILENAME", "SANDBOX_MODULE", "Guards", "Hidden", "Refused"]


@dataclass
class Guards(AdmissionGuards, AttributeGuards, WriteGuards, ModuleGuards):
    """Everything one run needs (its fields: ``guard_state.GuardState``); ``globals()`` turns it into the dict
    the compiled code runs in."""

    def safe_type(self, *args: Any) -> Any:
        if len(args) != 1:
            raise SandboxViolation(
                "type() with three arguments (making classes dynamically) is not available"
            )
        t = type(args[0])
        if t is ModuleProxy:
            return MODULE_TYPE
        if issubclass(t, type):
            return self.safe_type  # ``type(int)`` must not hand out the real metaclass
        return t

    def safe_dir(self, *args: Any) -> list[str]:
        if not args:
            raise SandboxViolation("dir() without an argument is not available in the sandbox")
        obj = args[0]
        return sorted(n for n in dir(obj) if not n.startswith("_"))

    # ---- printing ---
    def make_print(self) -> Callable[..., Any]:
        guards = self

        class Printer:
            """RestrictedPython's ``_print_``: collects ``print`` output, capped; ``file=`` is refused."""

            def __init__(self, _getattr: Any = None) -> None:
                pass

            def write(self, text: str) -> None:
                if guards.printed_size >= guards.print_limit:
                    guards.print_truncated = True
                    return
                text = str(text)[: guards.print_limit - guards.printed_size]
                guards.printed.append(text)
                guards.printed_size += len(text)

            def __call__(self) -> str:
                return "".join(guards.printed)

            def _call_print(self, *objects: Any, **kwargs: Any) -> None:
                if kwargs.get("file") is not None:
                    raise SandboxViolation("print(file=...) is not available in the sandbox")
                kwargs["file"] = self
                kwargs.pop("flush", None)
                print(*objects, **kwargs)

        return Printer

    # ---- assembly ---
    def builtins(self) -> dict[str, Any]:
        b = builtins
        allowed = [
            "abs", "all", "any", "ascii", "bin", "bool", "callable", "chr", "complex", "dict", "divmod",
            "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "id", "int", "isinstance",
            "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct", "ord",
            "property", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "classmethod",
            "str", "sum", "super", "tuple", "zip", "None", "True", "False", "Ellipsis", "NotImplemented",
        ]  # fmt: skip
        out: dict[str, Any] = {name: getattr(b, name) for name in allowed}
        for name in dir(b):
            value = getattr(b, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                out[name] = value
        for name in limits.MATERIALISING_BUILTINS:
            out[name] = limits.materialising(getattr(b, name), name)
        out["range"] = limits.safe_range
        out["bytes"] = limits.sized_buffer(bytes)
        out["bytearray"] = limits.sized_buffer(bytearray)
        out["pow"] = limits.pow_
        out["type"] = self.safe_type
        out["getattr"] = self.getattr_builtin
        out["hasattr"] = self.hasattr_builtin
        out["dir"] = self.safe_dir
        for name, why in FORBIDDEN_BUILTINS.items():
            out[name] = Refused(f"{name}() is not available in the sandbox ({why})")
        out["__build_class__"] = b.__build_class__
        out["__import__"] = self.guarded_import
        return out

    def globals(self, view: dict[str, Any]) -> dict[str, Any]:
        self._getattr = self.make_getattr()
        tick = limits.make_tick(self.deadline)
        return {
            **view,
            "__builtins__": self.builtins(),
            "__name__": SANDBOX_MODULE,
            "__metaclass__": type,
            "_getattr_": self._getattr,
            "_getitem_": self.make_getitem(),
            "_getiter_": iter,
            "_iter_unpack_sequence_": iter_unpack,
            "_unpack_sequence_": unpack,
            "_write_": self.make_write(),
            "_inplacevar_": limits.make_inplace(self.is_user),
            "_apply_": apply_call,
            "_print_": self.make_print(),
            "_mul_": limits.mul,
            "_pow_": limits.pow_,
            "_lshift_": limits.lshift,
            "_add_": limits.add,
            "_tick_": tick,
        }


# Documentation helpers used by tests.
PRIVATE = PRIVATE_MESSAGE
