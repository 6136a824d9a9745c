"""Helpers for driving the real prompt with prompt_toolkit's pipe input (no terminal needed)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pyaichat.repl.frontend import Repl, make_repl
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


@dataclass
class Harness:
    repl: Repl
    pipe: Any
    screen: io.StringIO

    def send(self, text: str) -> None:
        self.pipe.send_text(text)

    def read(self, keys: str) -> str:
        """Type ``keys`` and return the input the prompt accepted."""
        self.send(keys)
        return self.repl.read()

    @property
    def ctrl(self):
        return self.repl.ctrl

    @property
    def namespace(self) -> dict[str, Any]:
        return self.repl.ctrl.runtime.session.namespace

    def output(self) -> str:
        return self.screen.getvalue()


@pytest.fixture
def harness() -> Iterator[Harness]:
    with create_pipe_input() as pipe:
        screen = io.StringIO()
        console = Console(file=screen, width=100, no_color=True, highlight=False)
        runtime = LocalRuntime(Session())
        repl = make_repl(
            runtime,
            input=pipe,
            output=DummyOutput(),
            console=console,
            history=InMemoryHistory(),
        )
        yield Harness(repl, pipe, screen)
