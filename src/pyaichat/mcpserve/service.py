"""``/mcp on|off|status``: serving one session to outside agents, and stopping it.

Serving starts three things, none of which loads the MCP SDK into the person's process (the rule for where
heavy libraries run: ``ipc``):

1. the private endpoint (``endpoint``) with a fresh random token;
2. the Streamable HTTP listener, bound here on 127.0.0.1 (a free port; another host only when the person
   names one) with ``TCP_NODELAY``, and handed to a face process (``http_main``) that runs the SDK behind the
   guard — the port is known at once, and connections made while the face starts wait in the backlog (the
   listener and the face's process: ``listening``);
3. the discovery record (``discovery``), through which ``pyaichat mcp`` finds the session.

``stop`` undoes all three at once, and for good: no outside call runs after it (one that was waiting for the
person's input to end is answered that the person stopped serving); the endpoint closes every other link
(a stdio bridge's next call says the session stopped serving); the face process is killed at once (every
HTTP connection drops) — or, when calls were waiting, once they are answered (it stopped listening when its
link closed); the record is removed and the token is forgotten. The face also exits by itself when the
session's process ends (its stdin closes).
"""

from __future__ import annotations

import atexit
import os
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..ipc import Child
from . import discovery
from .backend import LocalBackend
from .endpoint import Endpoint, fits
from .gate import SessionGate
from .listening import LOOPBACK, addresses, allowed_hosts, bracketed, end_after, listen, spawn_face

if TYPE_CHECKING:
    from ..configuration.config import Config
    from ..runtime import Runtime
    from .proposing import Proposer


class McpService:
    """Serving one session (one per controller); every method returns or raises one sentence."""

    def __init__(
        self,
        runtime: Runtime,
        gate: SessionGate,
        *,
        where: str,
        show: Callable[[str], None] | None = None,
        proposer: Proposer | None = None,
        runtime_for_calls: Callable[[Runtime], Runtime] | None = None,
        settings: Callable[[], Config] | None = None,
    ) -> None:
        self.runtime = runtime
        # the one way serving reads the person's settings (``mcp_serve_*``), at each use
        self.settings = settings or (lambda: runtime.config)
        self._runtime_for_calls = runtime_for_calls or (lambda runtime: runtime)
        self._calls_runtime: Runtime | None = None  # the one outside calls use, when not ``runtime``
        self.gate = gate
        self.where = where
        self.show = show
        self.proposer = proposer
        self.backend: LocalBackend | None = None
        self.endpoint: Endpoint | None = None
        self.face: Child | None = None
        self.url: str | None = None
        self.host: str | None = None
        self.record_path: str | None = None
        self.started: float | None = None
        self._token: str | None = None
        self._tempdir: str | None = None
        self._log: str | None = None
        self._registered = False
        from .lines import QuietLines  # with the first /mcp on

        self._lines = QuietLines(self._show, self._show_refusal)

    @property
    def serving(self) -> bool:
        return self.endpoint is not None

    # -- on --------------------------------------------------------------------------------------------------
    def start(self, host: str | None = None, *, token: str | None = None, port: int = 0) -> str:
        """Serve; one sentence saying where. Raises ``RuntimeError`` or ``OSError`` (one sentence) and leaves
        nothing behind when a part cannot start. ``token`` and ``port``: serve on as another process of this
        session did (a checkpoint resumed: ``handover``), so its clients keep their address and token."""
        if self.serving:
            return f"Already serving this session at {self.url}."
        import importlib.util  # only to find the SDK without importing it

        try:
            sdk = importlib.util.find_spec("mcp")
        except (ImportError, ValueError):  # hidden or broken
            sdk = None
        if sdk is None:
            from ..extras import install_command  # only to say how

            raise RuntimeError(f"Serving over MCP needs the MCP SDK: {install_command('mcp')}.")
        if not hasattr(socket, "AF_UNIX") or os.name == "nt":
            raise RuntimeError("Serving over MCP needs a POSIX system (Unix sockets).")
        host = (host or self.settings().mcp_serve_host or "127.0.0.1").strip()
        directory = discovery.ensure_private_dir(discovery.records_dir())
        undo: list[Callable[[], object]] = []  # what to take back if a later part fails
        try:
            calls_runtime = self._runtime_for_calls(self.runtime)
            if calls_runtime is not self.runtime:
                self._calls_runtime = calls_runtime
                undo.append(self._close_calls_runtime)
            self.gate.attach()
            token = token or secrets.token_urlsafe(32)
            backend = LocalBackend(
                calls_runtime,
                self.gate,
                show=self._lines,
                proposer=self.proposer,
                where=self.where,
                busy_wait=lambda: self.settings().mcp_serve_busy_wait,
            )
            endpoint = Endpoint(backend, token)
            unix_path = discovery.endpoint_path(directory)
            if not fits(unix_path):  # only the HTTP face, told by this process, can use it there
                self._tempdir = tempfile.mkdtemp(prefix="pyaichat-mcp-")
                unix_path = os.path.join(self._tempdir, "endpoint.sock")
                undo.append(self._remove_tempdir)
            address = endpoint.start(unix_path)
            undo.append(endpoint.stop)
            try:
                listener = listen(host, port)
            except OSError as exc:
                raise RuntimeError(f"Cannot listen on {host}: {exc.strerror or exc}.") from None
            port = listener.getsockname()[1]
            url = f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"
            self._log = os.path.join(directory, f"{os.getpid()}-http.log")
            settings = {"token": token, "endpoint": address, "hosts": allowed_hosts(host, port)}
            try:
                face = spawn_face(listener, settings, self._log)
            except OSError as exc:
                raise RuntimeError(f"The MCP server process could not start: {exc}.") from None
            finally:
                listener.close()  # the face holds its own copy
            undo.append(lambda: face.kill())
            started = time.time()
            record = {
                "protocol": 1,
                "pid": os.getpid(),
                "cwd": os.getcwd(),
                "started": datetime.fromtimestamp(started).astimezone().isoformat(timespec="seconds"),
                "started_ts": started,
                "url": url,
                "port": port,
                "host": host,
                "token": token,
                "endpoint": address,
                "where": self.where,
            }
            self.record_path = discovery.write_record(record, directory)
        except BaseException:
            for action in reversed(undo):
                try:
                    action()
                except Exception:
                    pass
            raise
        self.backend, self.endpoint, self.face, self.host, self._token = backend, endpoint, face, host, token
        self.url, self.started = url, started
        self.gate.serving = "⇄ MCP"
        if not self._registered:
            atexit.register(self.stop)
            self._registered = True
        threading.Thread(target=face.wait, name="pyaichat-mcp-face", daemon=True).start()  # reaps it
        beyond = host not in LOOPBACK
        text = f"Serving this session over MCP at {self.url} (Streamable HTTP, bearer token)"
        text += "; agents that start a command use `pyaichat mcp`, which finds it."
        if beyond:
            reach = ", ".join(f"http://{bracketed(a)}:{port}/mcp" for a in addresses(host))
            text += (
                f" Other machines use {reach or 'this machine address'}. Warning: {host} is reachable "
                "beyond this machine, anyone "
                "with the token can read this session, and the token travels in clear HTTP — readable on "
                f"the network unless you tunnel it (ssh -L {port}:127.0.0.1:{port} HOST, then serve on "
                "127.0.0.1)."
            )
        return text

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Until the HTTP face has connected to the endpoint (it imports the SDK first): for tests and
        benchmarks; the person never waits for it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            endpoint, face = self.endpoint, self.face
            if endpoint is None or face is None or face.poll() is not None:
                return False
            if endpoint.connections:
                return True
            time.sleep(0.05)
        return False

    # -- off -------------------------------------------------------------------------------------------------
    def stop(self) -> str:
        if not self.serving:
            return "Not serving over MCP."
        withdrawn = 0
        if self.proposer is not None:  # their agents are told now, not when the wait runs out
            withdrawn = self.proposer.withdraw_all()
        endpoint, self.endpoint = self.endpoint, None
        face, self.face = self.face, None
        self._lines.flush()  # a burst still being counted is summed up now
        calls = self.backend.clients.total_calls() if self.backend else 0
        answering = endpoint.stop() if endpoint is not None else 0  # no call runs from now on
        if face is not None and answering:  # calls that waited are told the person stopped; then it goes
            threading.Thread(target=end_after, args=(face, endpoint), daemon=True).start()
        elif face is not None:  # killed at once: every connection drops with it
            face.kill()
        if self.record_path:
            discovery.remove_record(self.record_path)
            self.record_path = None
        if self._log and os.path.exists(self._log) and os.path.getsize(self._log) == 0:
            discovery.remove_record(self._log)
        self._remove_tempdir()
        self._close_calls_runtime()
        self._token = None
        self.gate.serving = None
        if self._registered:
            atexit.unregister(self.stop)
            self._registered = False
        url, self.url = self.url, None
        served = f"{calls} call{'' if calls == 1 else 's'} served"
        if withdrawn:
            served += f"; {withdrawn} waiting proposal{'' if withdrawn == 1 else 's'} withdrawn"
        return f"Stopped serving {url}: every connection is closed and its token is void ({served})."

    # -- another process of the session serves on (checkpoints) ---------------------------------------------
    def handover(self) -> dict[str, Any] | None:
        """What another process of this session needs to serve on where this one does (``None``: not
        serving): the host, the port and the token."""
        if not self.serving or self.url is None or self._token is None:
            return None
        port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])
        return {"host": self.host, "port": port, "token": self._token}

    def forget(self) -> None:
        """In a session forked from a checkpoint: what this service held (the endpoint and its threads, the
        face process, the discovery record) belongs to the process that was forked. Let go of it here without
        touching it; a record whose process has ended is removed."""
        record = self.record_path
        pid = _record_pid(record) if record else None
        if record and self.started is not None and (pid is None or not discovery.pid_alive(pid)):
            discovery.remove_record(record)
        self.backend = self.endpoint = self.face = None
        self.url = self.host = self.record_path = None
        self.started = self._token = self._tempdir = self._log = None
        self._calls_runtime = None
        if self._registered:
            atexit.unregister(self.stop)
            self._registered = False

    # -- status ----------------------------------------------------------------------------------------------
    def status(self) -> str:
        if not self.serving:
            return (
                "Not serving over MCP. /mcp on serves this session to outside agents (pyaichat mcp finds it)."
            )
        assert self.backend is not None and self.started is not None
        since = datetime.fromtimestamp(self.started).strftime("%H:%M:%S")
        face = self.face
        lines = [f"Serving at {self.url} since {since} (pid {os.getpid()}, {self.where})."]
        if face is not None and face.poll() is not None:
            lines.append(f"  The HTTP server process has exited (code {face.returncode}); see {self._log}.")
        lines.append(f"  Token and address for clients: {self.record_path} (only you can read it).")
        records = self.backend.clients.records()
        if not records:
            lines.append("  No client has connected yet.")
        for record in records:
            # A stdio client is connected while its `pyaichat mcp` runs; over Streamable HTTP each call is a
            # request of its own, so there is no connection to speak of: the last call says how recent.
            if record.transport == "stdio":
                state = "connected, " if record.connected else "gone, "
            else:  # no connection to speak of: quiet past the idle bound, it is gone
                state = "gone (idle), " if record.gone() else ""
            last = f", last {_ago(record.last_call)}" if record.last_call else ""
            failed = f" ({record.failed} refused or failed)" if record.failed else ""
            calls = f"{record.calls} call{'' if record.calls == 1 else 's'}"
            lines.append(f"  {record.label}: {state}{calls}{failed}{last}")
        return "\n".join(lines)

    def token(self) -> str | None:
        return self._token

    # -- internals -------------------------------------------------------------------------------------------
    def _show(self, line: str) -> None:
        settings = self.settings()
        if self.show is not None and settings.mcp_serve_show_calls and not settings.mcp_serve_quiet:
            self.show(line)

    def _show_refusal(self, line: str) -> None:
        if self.show is not None and self.settings().mcp_serve_show_calls:
            self.show(line)

    def _remove_tempdir(self) -> None:
        if self._tempdir:
            try:
                os.rmdir(self._tempdir)
            except OSError:
                pass
            self._tempdir = None

    def _close_calls_runtime(self) -> None:
        """The kernel connection of the outside calls' own (the kernel itself stays)."""
        if self._calls_runtime is not None:
            try:
                self._calls_runtime.close()
            except Exception:
                pass
            self._calls_runtime = None


def _record_pid(path: str) -> int | None:
    """The pid a discovery record is named after (``<pid>.json``)."""
    name = os.path.basename(path).split(".", 1)[0]
    return int(name) if name.isdigit() else None


def _ago(stamp: float) -> str:
    seconds = max(time.time() - stamp, 0)
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"
