"""The two input modes, and the kinds of input they decide between. Their own module so that the controller
and the slash commands (which switch modes) both depend on it instead of on each other."""

from __future__ import annotations

import enum
from typing import Literal

# What one input is (``Controller.kind``): a slash command in either mode, else Python or a question by mode.
Kind = Literal["empty", "command", "python", "question"]


class Mode(str, enum.Enum):
    PYTHON = "python"
    ASSISTANT = "assistant"

    @property
    def label(self) -> str:
        return "Python" if self is Mode.PYTHON else "Assistant"
