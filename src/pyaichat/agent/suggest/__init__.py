"""Ghost-text suggestions in Python mode: the engine (``engine``), where its requests go (``route``), what
they say (``prompt``) and how an answer is cut to the cursor (``fit``). Below the front ends: nothing here
knows prompt_toolkit. Importing this package imports only the engine (standard library)."""

from .engine import PAUSE, Suggester
from .state import SuggestStats

__all__ = ["PAUSE", "SuggestStats", "Suggester"]
