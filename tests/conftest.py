"""Shared test setup: every test gets private config/state directories and no provider credentials."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

# litellm must never fetch its price list from the internet during tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C must raise ``KeyboardInterrupt`` here and in every process a test starts, as in a terminal.

    A job started in the background by a non-interactive shell inherits SIGINT as *ignored*; Python then
    installs no handler, a test that interrupts ``while True: pass`` with SIGINT spins for ever, and so does a
    REPL child a pty test presses Ctrl-C in (an ignored signal stays ignored across ``exec``). Installing
    Python's default handler here fixes both: a caught signal is reset to the default in children.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    for var in list(os.environ):
        if var.startswith("PYAICHAT_") or var == "NO_COLOR":
            monkeypatch.delenv(var, raising=False)
    # A terminal's size comes from the terminal. pytest-xdist's workers export COLUMNS=80 and LINES=24, which
    # prompt_toolkit and rich prefer to the pty's real size: a pty test resizing its window would see none.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def python_exe() -> str:
    return sys.executable


@pytest.fixture(scope="module")
def server():
    """A scripted OpenAI-compatible server on 127.0.0.1 (``tests/fakes/openai_server.py``), one per module."""
    from fakes.openai_server import ScriptedServer

    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def srv(server, monkeypatch: pytest.MonkeyPatch):
    """The module's scripted server, emptied, with a dummy key for litellm's OpenAI client."""
    server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return server
