"""Helpers shared by the IPython extension tests (a plain module: ``tests/ipython`` is not a package)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config as TraitletsConfig

HAS_ASSISTANT = importlib.util.find_spec("pyaichat.agent.assistant") is not None
needs_assistant = pytest.mark.skipif(not HAS_ASSISTANT, reason="pyaichat.agent.assistant is not there yet")


def make_shell(cls: type[InteractiveShell] = InteractiveShell, **config: Any) -> InteractiveShell:
    c = TraitletsConfig()
    c.HistoryManager.hist_file = ":memory:"
    for section, values in config.items():
        for key, value in values.items():
            setattr(c[section], key, value)
    return cls.instance(config=c)


def run(shell: InteractiveShell, source: str) -> Any:
    """Run a cell the way the terminal does (numbered, stored in history)."""
    return shell.run_cell(source, store_history=True)
