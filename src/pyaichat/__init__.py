"""pyaichat: a Python REPL with a read-only AI assistant inside it.

Importing the package is light on purpose: heavy libraries (litellm, rich, prompt_toolkit) load only when the
part that needs them runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Session", "__version__"]

if TYPE_CHECKING:
    from .session import Session


def __getattr__(name: str) -> Any:
    if name == "Session":
        from .session import Session

        return Session
    raise AttributeError(f"module 'pyaichat' has no attribute {name!r}")
