"""Where code comes from: the user's own files (typed at the prompt, their scripts) versus installed
libraries and the sandbox itself. The guards use it to tell the session's functions, classes and properties
from library code."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types
from typing import Any

from .rules import DANGEROUS_ROOTS, SANDBOX_FILENAME, SANDBOX_MODULE

_MISSING = object()


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


def type_verdict(t: type) -> str | None:
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


def runs_user_code(t: type, obj: Any, name: str) -> bool:
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
