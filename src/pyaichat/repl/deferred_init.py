"""Load a package's submodules without first running its ``__init__``; that runs when it is asked for a name.

Why: ``prompt_toolkit/__init__.py`` and ``prompt_toolkit/shortcuts/__init__.py`` import every shortcut
(dialogs, progress bars, ``choice``); prompt_toolkit up to 3.0.52 also asks ``importlib.metadata`` for its own
version there, which reads the metadata of every installed distribution. The first prompt needs none of it:
with 3.0.53 that is 6 ms of the ~210 ms to the first prompt (issue 14, ``benchmarks/startup_interactive.py``).

After ``defer_package_init("prompt_toolkit")``, ``import prompt_toolkit.shortcuts.prompt`` loads that module
and what it imports, nothing more. The package's own ``__init__`` runs, once, in the same module object, the
first time anyone asks the package for a name that is not one of its submodules (``from prompt_toolkit
import PromptSession``, ``prompt_toolkit.__version__``, ``import *``), or when ``run_deferred_init`` is
called; from then on the package is exactly what a plain ``import prompt_toolkit`` leaves.

One difference remains until then: a name that the ``__init__`` binds over a submodule of the same name
(``prompt_toolkit.shortcuts.prompt``: the module, later the function) is the submodule. So the ``__init__``s
are run (``run_deferred_init``) before any code but pyaichat's own start-up can look.
"""

from __future__ import annotations

import sys
import threading
from importlib.machinery import PathFinder
from importlib.util import find_spec, module_from_spec
from types import ModuleType
from typing import Any


def defer_package_init(*names: str) -> None:
    """Register each package, parents before children, without running its ``__init__``.

    A package that is already imported, or not installed, is left to the normal import (which then reports
    what is wrong in its usual words)."""
    for name in names:
        if name in sys.modules:
            continue
        spec = find_spec(name)  # a child's parent is the un-initialised module registered just before
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return
        module = module_from_spec(spec)
        module.__getattr__ = _RunInitOnDemand(module)  # type: ignore[method-assign]  # PEP 562
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)  # what the import system does for a loaded child


def run_deferred_init(name: str) -> None:
    """Run the package's ``__init__`` now if it is still deferred (a no-op otherwise)."""
    module = sys.modules.get(name)
    hook = None if module is None else module.__dict__.get("__getattr__")
    if isinstance(hook, _RunInitOnDemand):
        hook.run()


def is_deferred(name: str) -> bool:
    """True while the package ``name`` is registered but its ``__init__`` has not run."""
    module = sys.modules.get(name)
    return module is not None and isinstance(module.__dict__.get("__getattr__"), _RunInitOnDemand)


class _RunInitOnDemand:
    """The deferred package's module ``__getattr__``: runs the ``__init__`` once, then answers from it."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.lock = threading.RLock()
        self.started = False

    def __call__(self, name: str) -> Any:
        module = self.module
        if self._is_submodule(name):
            # ``from package import submodule`` asks hasattr() first; the import system then loads it.
            raise AttributeError(name)
        self.run()
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

    def run(self) -> None:
        module = self.module
        with self.lock:
            # Other threads wait here for the run to end; a re-entrant call from the run itself sees a
            # half-initialised package, as with any import.
            if not self.started:
                self.started = True
                try:
                    module.__spec__.loader.exec_module(module)  # type: ignore[union-attr]
                except BaseException:
                    # As a failed import does: no half-run package stays behind; the next import retries
                    # (and reports the error to whoever makes it).
                    if sys.modules.get(module.__name__) is module:
                        del sys.modules[module.__name__]
                    raise
                finally:
                    if module.__dict__.get("__getattr__") is self:  # unless the __init__ defined its own
                        del module.__getattr__

    def _is_submodule(self, name: str) -> bool:
        if not name.isidentifier():
            return False
        return PathFinder.find_spec(f"{self.module.__name__}.{name}", self.module.__path__) is not None
