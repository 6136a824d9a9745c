"""The two input modes. Their own module so that the controller and the slash commands (which switch modes)
both depend on it instead of on each other."""

from __future__ import annotations

import enum


class Mode(str, enum.Enum):
    PYTHON = "python"
    ASSISTANT = "assistant"

    @property
    def label(self) -> str:
        return "Python" if self is Mode.PYTHON else "Assistant"
