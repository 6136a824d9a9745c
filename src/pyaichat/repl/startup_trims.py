"""prompt_toolkit work that the first prompt does not need, moved past it (issue 14).

prompt_toolkit is the floor of the interactive start-up: importing it, building a ``PromptSession`` and
drawing one prompt took 0.44-0.49x of IPython's whole start-up on the benchmark machine, and pyaichat added
~4% to it. Getting well under half of IPython's time therefore means not doing, before the first prompt, the
parts of prompt_toolkit that it does not use (medians of fresh processes, 2-core machine):

* the package ``__init__`` files of ``prompt_toolkit`` and ``prompt_toolkit.shortcuts`` import every shortcut
  (dialogs, progress bars, ``choice``): 6 ms. They are deferred (``deferred_init``) and run right after the
  first prompt is drawn, before any user code;
* the 331 Vi key bindings: 7 ms. They are built when the first key is looked up, not with the session: in the
  default Emacs mode none of them is ever chosen, yet prompt_toolkit builds them for every Application.

Each trim changes when work happens, never what the user gets; ``benchmarks/startup_interactive.py`` measures
them and ``tests/repl/test_startup_trims.py`` checks that everything is whole after the first prompt.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .deferred_init import defer_package_init, run_deferred_init

if TYPE_CHECKING:
    from prompt_toolkit.key_binding.key_bindings import KeyBindingsBase

DEFERRED_PACKAGES = ("prompt_toolkit", "prompt_toolkit.shortcuts")


def defer_package_inits() -> None:
    """Call before the first ``import prompt_toolkit...``: submodules then skip the package ``__init__``s."""
    defer_package_init(*DEFERRED_PACKAGES)
    # What prompt_toolkit's __init__ imports first; the circular imports among its submodules rely on that
    # order (importing ``prompt_toolkit.renderer`` first would fail).
    import prompt_toolkit.application  # noqa: F401


def finish_package_inits() -> None:
    """The first prompt is on screen: run the deferred ``__init__``s, so that any later
    ``import prompt_toolkit`` (user code, IPython, rich's pager) gets the whole package."""
    for name in reversed(DEFERRED_PACKAGES):  # the children first: a parent's __init__ imports from them
        try:
            run_deferred_init(name)
        except Exception:  # a broken install: the prompt keeps working; whoever imports it gets the error
            pass


@contextmanager
def vi_bindings_built_on_first_use() -> Iterator[None]:
    """Within the block, prompt_toolkit's default key bindings get the Vi part as a proxy built on first use.

    Only the session built inside the block is affected: its key processor asks for the bindings at the
    first key press (~7 ms then, instead of before the first prompt)."""
    from prompt_toolkit.key_binding import defaults

    originals = defaults.load_vi_bindings, defaults.load_vi_search_bindings
    defaults.load_vi_bindings, defaults.load_vi_search_bindings = (_on_first_use(load) for load in originals)
    try:
        yield
    finally:
        defaults.load_vi_bindings, defaults.load_vi_search_bindings = originals


def _on_first_use(load: Callable[[], KeyBindingsBase]) -> Callable[[], KeyBindingsBase]:
    from prompt_toolkit.key_binding import DynamicKeyBindings

    def proxy() -> KeyBindingsBase:
        built: list[KeyBindingsBase] = []

        def get() -> KeyBindingsBase:
            if not built:
                built.append(load())
            return built[0]

        return DynamicKeyBindings(get)

    return proxy


def deferred_modules() -> list[str]:
    """The packages still waiting for their ``__init__`` (what the tests check before and after)."""
    from .deferred_init import is_deferred

    return [name for name in DEFERRED_PACKAGES if name in sys.modules and is_deferred(name)]
