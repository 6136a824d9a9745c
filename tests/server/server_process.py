"""A real Jupyter Server (``jupyter_server`` from PyPI) started on 127.0.0.1 for the ``--server`` tests and
``benchmarks/server.py``, with a token, its own Jupyter and XDG directories, and kernels started through its
REST API. A module of its own (not the conftest) so tests and benchmarks import it by a name no other test
folder uses.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT = 60.0
TOKEN = "test-token-5f0c2a9e"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class JupyterServer:
    """A ``jupyter server`` process and how to reach it."""

    proc: subprocess.Popen
    port: int
    token: str
    root: Path
    scheme: str = "http"
    base_url: str = "/"
    started: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{self.base_url}"

    def rest(self, method: str, path: str, body: object = None, token: str | None = None) -> object:
        """One REST call with the token, as a test makes it (not through pyaichat)."""
        import ssl

        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"token {token or self.token}")
        context = ssl._create_unverified_context() if self.scheme == "https" else None
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def start_kernel(self, name: str = "python3") -> str:
        """A kernel started through the REST API (as a notebook would have)."""
        kernel_id = self.rest("POST", "api/kernels", {"name": name})["id"]
        self.started.append(kernel_id)
        return kernel_id

    def open_notebook(self, path: str, name: str = "python3") -> str:
        """A notebook session (as JupyterLab makes one when a notebook is opened); returns its kernel id."""
        model = self.rest(
            "POST", "api/sessions", {"path": path, "type": "notebook", "kernel": {"name": name}}
        )
        kernel_id = model["kernel"]["id"]
        self.started.append(kernel_id)
        return kernel_id

    def kernels(self) -> list[dict]:
        return list(self.rest("GET", "api/kernels"))

    def kernel_ids(self) -> set[str]:
        return {k["id"] for k in self.kernels()}

    def wait_state(self, kernel_id: str, state: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.rest("GET", f"api/kernels/{kernel_id}")["execution_state"] == state:
                    return
            except urllib.error.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"kernel {kernel_id} never became {state}")

    def stop(self) -> None:
        for kernel_id in list(self.started):
            try:
                self.rest("DELETE", f"api/kernels/{kernel_id}")
            except Exception:
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def start_server(
    directory: Path,
    *,
    token: str = TOKEN,
    base_url: str = "/",
    certfile: Path | None = None,
    keyfile: Path | None = None,
    extra: tuple[str, ...] = (),
) -> JupyterServer:
    """Start ``jupyter server`` on 127.0.0.1 with ``token``; returns once its API answers."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(directory / "jupyter-config"),
        JUPYTER_DATA_DIR=str(directory / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(directory / "jupyter-runtime"),
        XDG_CONFIG_HOME=str(directory / "kernel-config"),
        XDG_STATE_HOME=str(directory / "kernel-state"),
    )
    env.pop("JUPYTER_TOKEN", None)
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={directory}",
        f"--ServerApp.base_url={base_url}",
        "--ServerApp.log_level=WARN",
        "--ServerApp.allow_root=True",  # CI runs as root
        *extra,
    ]
    scheme = "http"
    if certfile is not None:
        command += [f"--ServerApp.certfile={certfile}", f"--ServerApp.keyfile={keyfile}"]
        scheme = "https"
    log = open(directory / "server.log", "wb")  # noqa: SIM115 - the server writes it for its whole life
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True
    )
    server = JupyterServer(proc, port, token, directory, scheme, base_url)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter server exited: {(directory / 'server.log').read_text()[-2000:]}")
        try:
            server.rest("GET", "api/status")
            return server
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    server.stop()
    raise RuntimeError("jupyter server did not answer")
