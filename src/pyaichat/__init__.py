"""pyaichat: a Python REPL with a read-only AI assistant inside it.

Importing the package is light on purpose: heavy libraries (litellm, rich, prompt_toolkit) load only when the
part that needs them runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

__all__ = ["Session", "__version__", "load_ipython_extension", "unload_ipython_extension"]

if TYPE_CHECKING:
    from .session import Session


def __getattr__(name: str) -> Any:
    if name == "Session":
        from .session import Session  # on first use: `import pyaichat` in IPython stays light

        return Session
    raise AttributeError(f"module 'pyaichat' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext pyaichat``: add ``%ai`` / ``%%ai`` to IPython (the extension is imported only now)."""
    from .ipython import load_ipython_extension as load  # only when IPython loads the extension

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext pyaichat``: remove everything the extension added."""
    from .ipython import unload_ipython_extension as unload  # only when IPython unloads it

    unload(ipython)
