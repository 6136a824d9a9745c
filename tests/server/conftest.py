"""Fixtures over a real Jupyter Server (``server_process``) for the ``--server`` tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyter_server")
pytest.importorskip("websocket")
pytest.importorskip("ipykernel")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_process import JupyterServer, start_server

from pyaichat.configuration.config import Config
from pyaichat.runtime.jupyter_server.kernels import attach, running
from pyaichat.runtime.jupyter_server.rest import ServerAPI, parse_address
from pyaichat.runtime.kernel import KernelRuntime


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """One Jupyter Server for a test module (each test starts the kernels it needs)."""
    server = start_server(tmp_path_factory.mktemp("jupyter"))
    yield server
    server.stop()


def api_for(server: JupyterServer, token: str | None = None) -> ServerAPI:
    address, _ = parse_address(server.url)
    return ServerAPI(address, token if token is not None else server.token)


def attach_to(server: JupyterServer, kernel_id: str, **config: object) -> KernelRuntime:
    """pyaichat attached to ``kernel_id`` on ``server``, as ``--server URL --kernel-id ID`` attaches."""
    api = api_for(server)
    entry = next(e for e in running(api) if e.id == kernel_id)
    return attach(api, entry, Config(**{"audit": False, "color": False, **config}))
