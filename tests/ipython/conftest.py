"""A real IPython ``InteractiveShell`` per test (the singleton is cleared afterwards, as IPython's tests do)
and the scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ipy_helpers import make_shell
from IPython.core.interactiveshell import InteractiveShell

from fakes.openai_server import ScriptedServer


@pytest.fixture
def ipydir(tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path / "ipython"


@pytest.fixture
def new_shell(ipydir) -> Iterator[Any]:
    """A factory: ``new_shell(cls, PyAIChat={...})``; what it made is unloaded and cleared afterwards."""
    made: list[InteractiveShell] = []

    def factory(cls: type[InteractiveShell] = InteractiveShell, **config: Any) -> InteractiveShell:
        InteractiveShell.clear_instance()
        shell = make_shell(cls, **config)
        made.append(shell)
        return shell

    yield factory
    import pyaichat

    for shell in made:
        pyaichat.unload_ipython_extension(shell)
        type(shell).clear_instance()
    InteractiveShell.clear_instance()


@pytest.fixture
def ip(new_shell) -> InteractiveShell:
    return new_shell()


@pytest.fixture(scope="session")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def scripted(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    """The scripted server, emptied, with the environment pointing pyaichat at it."""
    server.reset()
    monkeypatch.setenv("PYAICHAT_MODEL", "openai/test")
    monkeypatch.setenv("PYAICHAT_API_BASE", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("PYAICHAT_AUDIT", "false")
    return server
