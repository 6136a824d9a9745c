"""The IPython extension: ``%load_ext pyaichat`` adds ``%ai`` / ``%%ai`` over the shell's own namespace.

Same core as the pyaichat REPL (one ``Controller`` per shell); see ``extension.py`` for what is wired where.
``pyaichat`` itself imports this package only when IPython loads the extension.
"""

from __future__ import annotations

from typing import Any

from .extension import load, unload

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Called by ``%load_ext pyaichat`` and ``c.InteractiveShellApp.extensions``; loading twice is fine."""
    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Called by ``%unload_ext pyaichat``: removes magics, callbacks, input transformer and key bindings."""
    unload(ipython)
