"""The run-time guards RestrictedPython calls (``_getattr_``, ``_getitem_``, ``_write_``, …), the allow-listed
builtins and the read-only view of the user's variables, assembled once per run by ``build_globals``.

Two modes share every rule. ``fork``: the code runs in a forked child, so the user's objects are a private
copy-on-write copy and may be changed there. ``inprocess``: the code runs next to the real objects, so
anything reachable from a user variable is also write-protected (``UserObjects``).
"""

from __future__ import annotations

import builtins
import functools
import os
import random as _random
import string
import sys
import sysconfig
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import SandboxViolation
from . import limits
from .modules import ModuleProxy, check_attr_name, denied_module, import_allowed, make_proxy, module_allowed
from .ownership import UserObjects
from .rules import (
    DANGEROUS_ROOTS,
    EXPRESSION_METHODS,
    FORBIDDEN_BUILTINS,
    INTERNALS,
    MUTATING_METHODS,
    NUMPY_OBJECT_BLOCKS,
    PATH_KWARGS,
    PRIVATE_MESSAGE,
    STRING_DISPATCH,
    TEXT_WRITERS,
)

SANDBOX_FILENAME = "<sandbox>"
SANDBOX_MODULE = "pyaichat_sandbox"
_MISSING = object()
_FRAMEISH = (
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)
_GEN_OK = frozenset({"send", "throw", "close", "gi_running", "gi_suspended"})
_FUNCS = (types.FunctionType, types.MethodType)
_BUILTIN_FUNCS = (types.BuiltinFunctionType, types.BuiltinMethodType)
_UNSAFE_BUILTIN_IDS = frozenset(
    id(getattr(builtins, n))
    for n in ("open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "setattr",
              "delattr", "getattr", "input", "breakpoint", "help")
    if hasattr(builtins, n)
)  # fmt: skip


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


class Refused:
    """A callable that explains why it cannot be called (forbidden builtins, the user's own functions)."""

    __slots__ = ("__why",)

    def __init__(self, why: str) -> None:
        self.__why = why

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise SandboxViolation(self.__why)

    def __repr__(self) -> str:
        return f"<not available: {self.__why}>"


_MODULE_TYPE = Refused("module objects cannot be created in the sandbox")


# -- where code comes from -----------------------------------------------------------------------------------
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
    # pyaichat's own code (an editable install lives outside site-packages) is not the user's code.
    dirs.add(str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    return tuple(d for d in dirs if d)


_LIBRARY_DIRS = _library_dirs()


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """True for code the user wrote (typed at the prompt, or their own scripts); False for the sandbox's own
    code and for installed libraries."""
    if filename == SANDBOX_FILENAME:
        return False
    if filename.startswith("<"):
        return True  # typed at a prompt (<input-3>, <ipython-input-…>) or exec'd by the user
    # Relative names are compiled extensions (Cython: "numpy/random/_generator.pyx").
    return os.path.isabs(filename) and not filename.startswith(_LIBRARY_DIRS)


def is_user_function(value: Any) -> bool:
    func = value.__func__ if isinstance(value, types.MethodType) else value
    code = getattr(func, "__code__", None)
    return isinstance(code, types.CodeType) and is_user_file(code.co_filename)


_type_verdicts: dict[type, str | None] = {}


def _type_verdict(t: type) -> str | None:
    """Why instances of ``t`` must not reach sandboxed code (``None``: they may). Cached per type."""
    try:
        return _type_verdicts[t]
    except KeyError:
        pass
    mod = getattr(t, "__module__", None) or ""
    root = mod.split(".")[0]
    verdict = None
    if root in DANGEROUS_ROOTS and t not in (types.SimpleNamespace,):
        verdict = f"objects from the {root} module are not available in the sandbox"
    elif t.__name__ in ("_Environ",):
        verdict = "os.environ is not available in the sandbox"
    if len(_type_verdicts) < 10_000:
        _type_verdicts[t] = verdict
    return verdict


_user_class_cache: dict[type, bool] = {}


def is_user_class(t: type) -> bool:
    try:
        return _user_class_cache[t]
    except KeyError:
        pass
    mod = getattr(t, "__module__", None)
    result = False
    if mod == "__main__":
        result = True
    elif mod and mod != SANDBOX_MODULE:
        module = sys.modules.get(mod)
        file = getattr(module, "__file__", None)
        result = bool(file) and is_user_file(file)
    if len(_user_class_cache) < 10_000:
        _user_class_cache[t] = result
    return result


def _runs_user_code(t: type, obj: Any, name: str) -> bool:
    """Would reading ``obj.name`` run code the user wrote (a property, a descriptor, ``__getattr__``)?"""
    for klass in t.__mro__:
        attr = klass.__dict__.get(name, _MISSING)
        if attr is _MISSING:
            continue
        if isinstance(attr, (types.FunctionType, staticmethod, classmethod)) or not hasattr(
            type(attr), "__get__"
        ):
            return False
        if isinstance(attr, property):
            return attr.fget is not None and is_user_function(attr.fget)
        return is_user_class(type(attr)) or isinstance(attr, functools.cached_property)
    inst = getattr(obj, "__dict__", None)
    if isinstance(inst, dict) and name in inst:
        return False
    getattr_hook = getattr(t, "__getattr__", None)
    return getattr_hook is not None and is_user_function(getattr_hook)


# -- format strings ------------------------------------------------------------------------------------------
_formatter = string.Formatter()


def _check_format(fmt: str) -> None:
    for _literal, field_name, spec, _conv in _formatter.parse(fmt):
        if field_name is not None and any(c in field_name for c in ".["):
            raise SandboxViolation(
                "format fields cannot read attributes or items in the sandbox; use an f-string instead"
            )
        if spec:
            _check_format(spec)


def _safe_format(s: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        _check_format(s)
        return s.format(*args, **kwargs)

    return format


def _safe_format_map(s: str) -> Callable[[Mapping[str, Any]], str]:
    def format_map(mapping: Mapping[str, Any]) -> str:
        _check_format(s)
        return s.format_map(mapping)

    return format_map


def _unbound_format(s: str, *args: Any, **kwargs: Any) -> str:
    if not isinstance(s, str):
        raise TypeError("descriptor 'format' requires a 'str' object")
    return _safe_format(s)(*args, **kwargs)


def _unbound_format_map(s: str, mapping: Mapping[str, Any]) -> str:
    if not isinstance(s, str):
        raise TypeError("descriptor 'format_map' requires a 'str' object")
    return _safe_format_map(s)(mapping)


# -- the per-run guard set -----------------------------------------------------------------------------------
@dataclass
class Guards:
    """Everything one run needs; ``globals()`` turns it into the dict the compiled code runs in."""

    mode: str  # "fork" or "inprocess"
    is_secret_name: Callable[[str], bool]
    looks_secret: Callable[[str], bool]
    deadline: float
    user: UserObjects = field(default_factory=lambda: UserObjects(()))
    printed: list[str] = field(default_factory=list)
    printed_size: int = 0
    print_limit: int = 20_000
    print_truncated: bool = False
    _secret_keys: dict[str, bool] = field(default_factory=dict)
    _sandbox_types: set[type] = field(default_factory=set)
    _proxies: dict[str, ModuleProxy] = field(default_factory=dict)

    # ---- ownership ---
    def is_user(self, obj: Any) -> bool:
        return self.mode == "inprocess" and obj in self.user

    # ---- values entering the sandbox ---
    def admit(self, value: Any, where: str) -> Any:
        """Check one value the code is about to receive (an attribute, a module member, a user variable)."""
        t = type(value)
        if t is types.ModuleType:
            return self.proxy(value)
        if t in _FUNCS:
            if is_user_function(value):
                return Refused(
                    f"calling the session's own function {where} is not allowed in the sandbox "
                    "(it could have side effects); propose the call to the user instead"
                )
            root = (getattr(value, "__module__", None) or "").split(".")[0]
            if root in DANGEROUS_ROOTS:
                raise SandboxViolation(f"{where} is not available in the sandbox")
            return self._call_guard(value, where) if self.mode == "inprocess" else value
        if t in _BUILTIN_FUNCS:
            if id(value) in _UNSAFE_BUILTIN_IDS:
                raise SandboxViolation(f"{where} is not available in the sandbox")
            owner = getattr(value, "__self__", None)
            if type(owner) is types.ModuleType:
                if owner.__name__.split(".")[0] in DANGEROUS_ROOTS:
                    raise SandboxViolation(f"{where} is not available in the sandbox")
            else:
                root = (getattr(value, "__module__", None) or "").split(".")[0]
                if root in DANGEROUS_ROOTS:
                    raise SandboxViolation(f"{where} is not available in the sandbox")
            return self._call_guard(value, where) if self.mode == "inprocess" else value
        if t is ModuleProxy or t is Hidden or t is Refused:
            return value
        verdict = _type_verdict(t)
        if verdict:
            raise SandboxViolation(verdict)
        if self.mode == "inprocess" and (t.__name__ in ("ufunc", "_ArrayFunctionDispatcher")):
            return self._call_guard(value, where)
        return value

    def _call_guard(self, value: Any, where: str) -> Any:
        """In-process only: library functions that write into an argument (``np.copyto(a, …)``,
        ``out=a``, ``random.shuffle(a)``, ``heapq.heappush(a, …)``) are refused when it is the user's."""
        if where and not where.startswith("."):
            root = where.split(".")[0]
        else:
            module = getattr(value, "__module__", None) or getattr(type(value), "__module__", "") or ""
            root = module.split(".")[0]
        if root not in _ARG_WRITERS_ROOTS:
            return value
        if type(value).__name__ == "ufunc":
            return _UfuncGuard(value, self.is_user)
        first = getattr(value, "__name__", "") in IN_PLACE_FIRST_ARG
        return _arg_guard(value, self.is_user, first)

    def proxy(self, mod: types.ModuleType) -> ModuleProxy:
        name = mod.__name__
        found = self._proxies.get(name)
        if found is not None:
            return found
        if not module_allowed(name) or sys.modules.get(name) is not mod:
            raise denied_module(name)
        found = self._proxies[name] = make_proxy(mod, self.admit, self._overrides(name, mod))
        return found

    def _overrides(self, name: str, mod: types.ModuleType) -> dict[str, Any]:
        found = self._base_overrides(name, mod)
        if self.mode == "inprocess":
            for key in IN_PLACE_FIRST_ARG & found.keys():
                found[key] = _arg_guard(found[key], self.is_user, True)
        return found

    def _base_overrides(self, name: str, mod: types.ModuleType) -> dict[str, Any]:
        if name == "operator":
            return {"attrgetter": self._attrgetter, "methodcaller": self._methodcaller}
        if name == "random":
            rng = _random.Random()
            return {
                n: getattr(rng, n) for n in dir(rng) if not n.startswith("_") and callable(getattr(rng, n))
            }
        if name == "numpy.random" and self.mode == "inprocess":
            state, public = mod.RandomState(), set(dir(mod))
            return {n: getattr(state, n) for n in dir(state) if not n.startswith("_") and n in public}
        if name == "math":
            return {
                "factorial": _capped(mod.factorial, "math.factorial", 100_000),
                "comb": _capped(mod.comb, "math.comb", 1_000_000),
                "perm": _capped(mod.perm, "math.perm", 1_000_000),
                "prod": limits.materialising(mod.prod, "math.prod"),
                "fsum": limits.materialising(mod.fsum, "math.fsum"),
            }
        if name == "itertools" and self.mode == "inprocess":
            return {"count": self._ticking(mod.count), "cycle": self._ticking(mod.cycle),
                    "repeat": self._ticking(mod.repeat)}  # fmt: skip
        return {}

    def _ticking(self, make: Callable[..., Iterable[Any]]) -> Callable[..., Iterable[Any]]:
        """Infinite iterators, as generators that check the deadline, so a C consumer (``sum(count())``)
        can be stopped in-process."""
        tick = limits.make_tick(self.deadline)

        def wrapper(*args: Any, **kwargs: Any) -> Iterable[Any]:
            for n, item in enumerate(make(*args, **kwargs), 1):
                if not n & 1023:
                    tick()
                yield item

        wrapper.__name__ = getattr(make, "__name__", "iterator")
        return wrapper

    def _attrgetter(self, *names: str) -> Callable[[Any], Any]:
        for name in names:
            for part in str(name).split("."):
                self.check_name(part)
        getter = self.getattr_builtin

        def get(obj: Any) -> Any:
            out = []
            for name in names:
                value = obj
                for part in name.split("."):
                    value = getter(value, part)
                out.append(value)
            return out[0] if len(out) == 1 else tuple(out)

        return get

    def _methodcaller(self, name: str, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        self.check_name(name)
        getter = self.getattr_builtin
        return lambda obj: getter(obj, name)(*args, **kwargs)

    # ---- attribute access ---
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
        inprocess = self.mode == "inprocess"
        special = {"format", "format_map"} | (MUTATING_METHODS if inprocess else set())
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
                        raise _mutating(name)
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
        if isinstance(obj, _FRAMEISH) or (t is types.GeneratorType and name not in _GEN_OK):
            raise SandboxViolation(f"the attribute {name} leads out of the sandbox and is not available")
        if (name == "format" or name == "format_map") and (isinstance(obj, str) or obj is str):
            if obj is str:
                return _unbound_format if name == "format" else _unbound_format_map
            return _safe_format(obj) if name == "format" else _safe_format_map(obj)
        if t is not type and is_user_class(t) and _runs_user_code(t, obj, name):
            raise SandboxViolation(
                f"reading .{name} would run the session's own code (a property); "
                "it is not allowed in the sandbox"
            )
        if (
            name in MUTATING_METHODS
            and self.mode == "inprocess"
            and (isinstance(obj, type) or self.is_user(obj))
        ):
            raise _mutating(name)
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
        value = self.admit(value, f".{name}")
        mod = getattr(t, "__module__", None) or ""
        if callable(value) and mod.startswith("pandas"):
            if name in TEXT_WRITERS:
                value = _no_path(value, name)
            elif name in EXPRESSION_METHODS:
                value = _checked_expression(value, name)
            elif name in STRING_DISPATCH:
                value = _checked_dispatch(value, name, self.check_name)
            if self.mode == "inprocess" and self.is_user(obj):
                value = _no_inplace(value, name)
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

    def make_write(self) -> Callable[[Any], Any]:
        """RestrictedPython's ``_write_``: the target of ``obj.x = …``, ``obj[k] = …`` and ``del``."""
        plain = {dict, list, set, bytearray}
        sandbox_types = self._sandbox_types
        inprocess = self.mode == "inprocess"
        user = self.user
        slow = self.write

        def guarded_write(obj: Any) -> Any:
            t = type(obj)
            if t in sandbox_types or (t in plain and not (inprocess and obj in user)):
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
        if t is Hidden or t is Refused or t in _FUNCS or t in _BUILTIN_FUNCS:
            raise SandboxViolation("this object cannot be changed in the sandbox")
        if isinstance(obj, type) and obj.__module__ != SANDBOX_MODULE:
            raise SandboxViolation("classes defined outside the sandbox cannot be changed")
        if self.is_user(obj):
            raise SandboxViolation(
                "this would change the session's object; work on a copy (list(x), dict(x), df.copy())"
            )
        return obj

    def safe_type(self, *args: Any) -> Any:
        if len(args) != 1:
            raise SandboxViolation(
                "type() with three arguments (making classes dynamically) is not available"
            )
        t = type(args[0])
        if t is ModuleProxy:
            return _MODULE_TYPE
        if issubclass(t, type):
            return self.safe_type  # ``type(int)`` must not hand out the real metaclass
        return t

    def safe_dir(self, *args: Any) -> list[str]:
        if not args:
            raise SandboxViolation("dir() without an argument is not available in the sandbox")
        obj = args[0]
        return sorted(n for n in dir(obj) if not n.startswith("_"))

    def guarded_import(
        self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if type(fromlist) is list:
            # ``PyImport_Import`` from a library's C code (numpy imports ``numpy._core._methods`` lazily)
            # looks ``__import__`` up in the *calling* frame's builtins, which are ours. It passes a list and
            # ignores the return value (it reads ``sys.modules``); the statement ``import x`` passes a tuple
            # or None, and sandboxed code cannot name ``__import__`` itself.
            __import__(name)
            return None
        if level:
            raise SandboxViolation("relative imports are not available in the sandbox")
        mod = import_allowed(name)
        if fromlist:
            return self.proxy(mod)
        return self.proxy(import_allowed(name.split(".")[0]))

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
            "_iter_unpack_sequence_": _iter_unpack,
            "_unpack_sequence_": _unpack,
            "_write_": self.make_write(),
            "_inplacevar_": limits.make_inplace(self.is_user),
            "_apply_": _apply,
            "_print_": self.make_print(),
            "_mul_": limits.mul,
            "_pow_": limits.pow_,
            "_lshift_": limits.lshift,
            "_add_": limits.add,
            "_tick_": tick,
        }

    def _sanitize(self, value: Any, depth: int, budget: list[int]) -> Any:
        """A copy of a dict (or list of dicts) with secret-named entries hidden; the value itself when none.
        Bounded: large containers are checked only up to ``budget`` items."""
        if depth > 3 or budget[0] <= 0:
            return value
        if type(value) is dict:
            changed: dict[Any, Any] | None = None
            for k, v in list(value.items())[: budget[0]]:
                budget[0] -= 1
                if isinstance(k, str) and v not in (None, "") and self._secret_key(k):
                    new: Any = Hidden(
                        f"the entry {k!r} looks like a secret and is not available in the sandbox"
                    )
                else:
                    new = self._sanitize(v, depth + 1, budget)
                if new is not v:
                    changed = dict(value) if changed is None else changed
                    changed[k] = new
            return value if changed is None else changed
        if type(value) in (list, tuple) and len(value) <= 1000:
            items = [self._sanitize(v, depth + 1, budget) for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                return type(value)(items)
        return value

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


_ARG_WRITERS_ROOTS = frozenset({"numpy", "pandas", "random", "heapq", "bisect"})
IN_PLACE_FIRST_ARG = frozenset(
    {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "shuffle", "heappush", "heappop",
     "heapify", "heapreplace", "heappushpop", "insort", "insort_left", "insort_right"}
)  # fmt: skip


def _mutating(name: str) -> SandboxViolation:
    return SandboxViolation(
        f".{name}() would change the session's object; work on a copy (list(x), dict(x), x.copy())"
    )


def _refuse_write(what: str) -> SandboxViolation:
    return SandboxViolation(f"{what} would change the session's object; work on a copy (x.copy())")


def _arg_guard(func: Callable[..., Any], is_user: Callable[[Any], bool], first: bool) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None and (is_user(out) or (isinstance(out, tuple) and any(map(is_user, out)))):
            raise _refuse_write("out=")
        if first and args and is_user(args[0]):
            raise _refuse_write(f"{getattr(func, '__name__', 'this call')}()")
        return func(*args, **kwargs)

    guarded.__name__ = getattr(func, "__name__", "function")
    guarded.__doc__ = getattr(func, "__doc__", None)
    return guarded


class _UfuncGuard:
    """A numpy ufunc whose ``out=`` and ``.at`` may not target the user's arrays (in-process mode)."""

    __slots__ = ("__is_user", "__ufunc")

    def __init__(self, ufunc: Any, is_user: Callable[[Any], bool]) -> None:
        self.__ufunc = ufunc
        self.__is_user = is_user

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _arg_guard(self.__ufunc, self.__is_user, False)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        check_attr_name(name)
        value = getattr(self.__ufunc, name)
        return _arg_guard(value, self.__is_user, name == "at") if callable(value) else value

    def __repr__(self) -> str:
        return repr(self.__ufunc)


def _is_hidden(value: Any) -> bool:
    return type(value) is Hidden


def _capped(func: Callable[..., Any], what: str, cap: int) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        if args and isinstance(args[0], int) and args[0] > cap:
            raise SandboxViolation(f"{what}({args[0]:,}) is too large for the sandbox")
        return func(*args)

    wrapper.__name__ = getattr(func, "__name__", what)
    return wrapper


def _iter_unpack(it: Any, spec: Any, _getiter: Any) -> Any:
    return iter(it)  # unpacking needs no guard of its own here: iteration hands out nothing new


def _unpack(it: Any, spec: Any, _getiter: Any) -> Any:
    return it


def _apply(func: Any, *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def _no_path(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args or PATH_KWARGS & kwargs.keys():
            raise SandboxViolation(
                f".{name}() may only return text in the sandbox; it cannot write to a file"
            )
        return method(**kwargs)

    return wrapper


def _checked_expression(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(expr: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(expr, str) or "@" in expr or "__" in expr or "._" in expr:
            raise SandboxViolation(
                f".{name}() expressions may not use @names or private attributes in the sandbox"
            )
        if kwargs.get("engine") == "python" or {"local_dict", "global_dict", "resolvers"} & kwargs.keys():
            raise SandboxViolation(f".{name}() with engine='python' or custom scopes is not available")
        return method(expr, *args, **kwargs)

    return wrapper


def _checked_dispatch(
    method: Callable[..., Any], name: str, check: Callable[[str], None]
) -> Callable[..., Any]:
    """pandas resolves string arguments of ``apply``/``agg`` as method names: apply the attribute rules."""

    def scan(value: Any, depth: int = 0) -> None:
        if isinstance(value, str):
            check(value)
        elif depth < 2 and isinstance(value, (list, tuple)):
            for v in value:
                scan(v, depth + 1)
        elif depth < 2 and isinstance(value, dict):
            for v in value.values():
                scan(v, depth + 1)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for a in (*args, *kwargs.values()):
            scan(a)
        return method(*args, **kwargs)

    return wrapper


def _no_inplace(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("inplace"):
            raise SandboxViolation(
                f".{name}(inplace=True) would change the session's object; drop inplace=True"
            )
        return method(*args, **kwargs)

    return wrapper


# Documentation helpers used by tests.
PRIVATE = PRIVATE_MESSAGE
