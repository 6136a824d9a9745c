"""Modules inside the sandbox: ``import`` of allow-listed modules, each seen through a read-only proxy whose
members pass admission, with per-run overrides (a private ``random.Random``, capped ``math.factorial``,
ticking infinite iterators in-process, ``operator.attrgetter`` under the attribute rules)."""

from __future__ import annotations

import random as _random
import sys
import types
from collections.abc import Callable
from typing import Any

from ...errors import SandboxViolation
from . import limits
from .guard_state import GuardState
from .modules import ModuleProxy, denied_module, import_allowed, make_proxy, module_allowed
from .wrapped_calls import capped


class ModuleGuards(GuardState):
    """Module proxies and guarded ``import``."""

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
        return self.policy.module_overrides(name, mod, found, self.is_user, self.deadline)

    def _base_overrides(self, name: str, mod: types.ModuleType) -> dict[str, Any]:
        """What every policy replaces: ``operator``'s getters under the attribute rules, a private
        ``random.Random``, ``math``'s big-number functions capped."""
        if name == "operator":
            return {"attrgetter": self._attrgetter, "methodcaller": self._methodcaller}
        if name == "random":
            rng = _random.Random()
            return {
                n: getattr(rng, n) for n in dir(rng) if not n.startswith("_") and callable(getattr(rng, n))
            }
        if name == "math":
            return {
                "factorial": capped(mod.factorial, "math.factorial", 100_000),
                "comb": capped(mod.comb, "math.comb", 1_000_000),
                "perm": capped(mod.perm, "math.perm", 1_000_000),
                "prod": limits.materialising(mod.prod, "math.prod"),
                "fsum": limits.materialising(mod.fsum, "math.fsum"),
            }
        return {}

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
