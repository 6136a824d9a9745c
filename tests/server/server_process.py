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


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 in front of a server; ``cut()`` drops every connection through it at once
    (as a flaky Wi-Fi or a VPN that reconnects does), ``delay`` adds latency each way."""

    def __init__(self, target_port: int, delay: float = 0.0) -> None:
        import threading

        self.target_port = target_port
        self.delay = delay
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._closed = False
        self.cuts = 0
        self._held_until = 0.0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if time.monotonic() < self._held_until:  # the link is still down: refused at once
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if self.delay:
                    time.sleep(self.delay)
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self, hold: float = 0.0) -> None:
        """Drop every connection now (both ends see the connection end); for ``hold`` seconds new ones are
        dropped as they come."""
        self._held_until = time.monotonic() + hold
        with self._lock:
            pairs, self._pairs = self._pairs, []
            self.cuts += 1
        for pair in pairs:
            for sock in pair:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def close(self) -> None:
        """Stop listening (a blocked accept wakes up) and drop every connection."""
        self._closed = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        self.cut()
