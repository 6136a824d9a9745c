"""The session's private endpoint: where its MCP faces (the HTTP server, ``pyaichat mcp``) reach it.

A Unix socket in a directory only this user can enter (0700; the socket itself 0600), and on Linux the peer's
user id is checked as well; where there are no Unix sockets, a loopback TCP port. Either way a connection
must first say ``hello`` with the serving token, within a few seconds, or it is closed. Then it sends
requests (``wire``), one at a time per connection, each answered on the connection's own thread by the
``LocalBackend``; a face makes calls at once over connections at once (``link``), and a proposal, which
waits for the person, holds its connection meanwhile (a bounded few at once).

Standard library only, so serving adds next to nothing to the person's process.
"""

from __future__ import annotations

import hmac
import itertools
import os
import socket
import struct
import threading
from typing import TYPE_CHECKING, Any

from .wire import MAX_REQUEST, PROTOCOL, Channel, LinkClosed

if TYPE_CHECKING:
    from .backend import LocalBackend

HELLO_TIMEOUT = 5.0
MAX_CONNECTIONS = 32
MAX_WAITING_PROPOSALS = 4
TOO_MANY_PROPOSALS = "Too many proposals are waiting for the person already; wait for their answers."


class Endpoint:
    """Accepts the faces' connections and answers their requests until ``stop``."""

    def __init__(self, backend: LocalBackend, token: str) -> None:
        self.backend = backend
        self._token = token
        self._listener: socket.socket | None = None
        self._channels: set[Channel] = set()
        self._faces: dict[str, int] = {}  # each face's open connections
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._proposals = threading.BoundedSemaphore(MAX_WAITING_PROPOSALS)
        self.address: dict[str, Any] = {}
        self._unlink: str | None = None
        self._stopped = False

    # -- life ------------------------------------------------------------------------------------------------
    def start(self, unix_path: str | None) -> dict[str, Any]:
        """Listen at ``unix_path`` (or a loopback port where Unix sockets do not exist); return the address
        for the discovery record."""
        if unix_path is not None and hasattr(socket, "AF_UNIX"):
            try:
                os.unlink(unix_path)  # our own pid's leftover from a crash
            except FileNotFoundError:
                pass
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)
            try:
                listener.bind(unix_path)
            finally:
                os.umask(old)
            os.chmod(unix_path, 0o600)
            self._unlink = unix_path
            self.address = {"unix": unix_path}
        else:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            self.address = {"tcp": ["127.0.0.1", listener.getsockname()[1]]}
        listener.listen(16)
        self._listener = listener
        threading.Thread(
            target=self._accept, args=(listener,), name="pyaichat-mcp-endpoint", daemon=True
        ).start()
        return self.address

    def stop(self) -> None:
        """Close the listener and every connection at once; the token dies with them."""
        self._stopped = True
        self._token = os.urandom(16).hex()  # nothing said from here on matches
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.close()
            except OSError:
                pass
        if self._unlink:
            try:
                os.unlink(self._unlink)
            except OSError:
                pass
        with self._lock:
            channels, self._channels = list(self._channels), set()
        for channel in channels:
            channel.close()

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._channels)

    # -- connections -----------------------------------------------------------------------------------------
    def _accept(self, listener: socket.socket) -> None:
        while not self._stopped:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            if self._stopped or not _same_user(sock) or self.connections >= MAX_CONNECTIONS:
                sock.close()
                continue
            threading.Thread(target=self._serve, args=(sock,), name="pyaichat-mcp-link", daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        channel = Channel(sock, MAX_REQUEST)
        key = f"c{next(self._ids)}"  # until the hello names the face (one face opens several connections)
        try:
            sock.settimeout(HELLO_TIMEOUT)
            hello = channel.receive()
            token = hello.get("token")
            if (
                hello.get("op") != "hello"
                or not isinstance(token, str)
                or not hmac.compare_digest(token.encode(), self._token.encode())
            ):
                channel.close()
                return
            sock.settimeout(None)
            face = hello.get("face_id")
            if isinstance(face, str) and face.isalnum() and len(face) <= 64:
                key = face
            with self._lock:
                if self._stopped:
                    channel.close()
                    return
                self._channels.add(channel)
                self._faces[key] = self._faces.get(key, 0) + 1
            backend = self.backend
            channel.send(
                {"op": "welcome", "protocol": PROTOCOL, "info": backend.info(), "tools": backend.tools()}
            )
            while True:
                request = channel.receive()
                self._answer(channel, key, request)
        except (LinkClosed, OSError):
            pass
        finally:
            with self._lock:
                if channel in self._channels:
                    self._channels.discard(channel)
                    self._faces[key] -= 1
                    last = not self._faces[key]
                    if last:
                        del self._faces[key]
                else:
                    last = False
            channel.close()
            if last:  # the face's last connection: its clients are gone
                self.backend.clients.gone(key)

    def _answer(self, channel: Channel, key: str, request: dict[str, Any]) -> None:
        op, rid = request.get("op"), request.get("id")
        backend = self.backend
        if op == "call":
            client = backend.clients.seen(
                f"{key}/{request.get('key')}", request.get("client") or "client", request.get("transport")
            )
            if request.get("name") == "propose_code":  # it waits for the person: a bounded few at once
                if not self._proposals.acquire(blocking=False):
                    from .backend import failure

                    channel.send({"id": rid, "result": failure(TOO_MANY_PROPOSALS)})
                    return
                try:
                    result = backend.call(request.get("name"), request.get("args"), client)
                finally:
                    self._proposals.release()
            else:
                result = backend.call(request.get("name"), request.get("args"), client)
            channel.send({"id": rid, "result": result})
        elif op == "ping":
            channel.send({"id": rid, "ok": True})
        else:
            channel.send({"id": rid, "error": f"unknown op {op!r}"})


def _same_user(sock: socket.socket) -> bool:
    """On Linux, the peer of a Unix socket must be this user (the directory's 0700 is the first wall)."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None or sock.family != getattr(socket, "AF_UNIX", None):
        return True
    try:
        _pid, uid, _gid = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
        )
    except OSError:
        return False
    return uid == os.getuid()
