"""The session's private endpoint: where its MCP faces (the HTTP server, ``pyaichat mcp``) reach it.

A Unix socket ``<pid>.sock`` in the private records directory (0700; the socket itself 0600), so that
``pyaichat mcp`` can prove it is this session's: it connects only there, and checks that the process
listening is the record's pid and this user (``ipc.peer``); here, a peer of another user is closed at once.
Where the path would be too long for a socket, it is bound through the directory's file descriptor
(``/proc/self/fd``, Linux); elsewhere in a private temporary directory, which only the HTTP face (told by
this process) uses — ``pyaichat mcp`` then refuses it and says so. Where there are no Unix sockets at all,
serving does not start.

A connection must first say ``hello`` with the serving token, within a few seconds, or it is closed. Then
it sends requests (``ipc``), one at a time per connection, each answered on the connection's own thread by
the ``LocalBackend``; a face makes calls at once over connections at once (``link``), and a proposal, which
waits for the person, holds its connection meanwhile (a bounded few at once).

``stop`` ends it for good: no call runs after it (``LocalBackend.stop``); a call waiting for the person's
input to end is answered that the person stopped serving, and its connection closes with that answer.

Standard library only, so serving adds next to nothing to the person's process.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..ipc import PROTOCOL, Channel, ChannelClosed, peer, token_matches
from .departure import Departure

if TYPE_CHECKING:
    from .backend import LocalBackend

HELLO_TIMEOUT = 5.0
MAX_CONNECTIONS = 32  # served at once; more wait in the listener's backlog until one ends
LISTEN_BACKLOG = 128
ACCEPT_JOIN = 1.0  # seconds ``stop`` waits for the accept thread to leave ``accept()`` (it does at once)
MAX_WAITING_PROPOSALS = 4
MAX_REQUEST = 1 << 20  # a request line (a tool call's arguments): 1 MiB
MAX_REPLY = 8 << 20  # an answer line: text is bounded by max_output_chars, but figures travel as PNGs
_UNIX_PATH_MAX = 100  # sun_path is 104 (macOS) to 108 (Linux) bytes; keep a margin
TOO_MANY_PROPOSALS = "Too many proposals are waiting for the person already; wait for their answers."


@contextlib.contextmanager
def socket_path(path: str) -> Iterator[str]:
    """``path`` as a socket address: itself, or through its directory's descriptor when it is too long
    (Linux); ``OSError`` where neither fits."""
    if len(os.fsencode(path)) <= _UNIX_PATH_MAX:
        yield path
        return
    if not os.path.isdir("/proc/self/fd"):
        raise OSError(f"{path} is too long for a Unix socket")
    fd = os.open(os.path.dirname(path), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield f"/proc/self/fd/{fd}/{os.path.basename(path)}"
    finally:
        os.close(fd)


def fits(path: str) -> bool:
    """Whether a socket can be bound at ``path`` here."""
    return len(os.fsencode(path)) <= _UNIX_PATH_MAX or os.path.isdir("/proc/self/fd")


class Endpoint:
    """Accepts the faces' connections and answers their requests until ``stop``."""

    def __init__(self, backend: LocalBackend, token: str) -> None:
        self.backend = backend
        self._token = token
        self._listener: socket.socket | None = None
        self._channels: set[Channel] = set()
        self._busy: set[Channel] = set()  # connections whose call is being answered
        self._faces: dict[str, int] = {}  # each face's open connections
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._proposals = threading.BoundedSemaphore(MAX_WAITING_PROPOSALS)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)  # connections being served
        self.address: dict[str, Any] = {}
        self._unlink: str | None = None
        self._stopped = False
        self._acceptor: threading.Thread | None = None

    # -- life ------------------------------------------------------------------------------------------------
    def start(self, unix_path: str) -> dict[str, Any]:
        """Listen at ``unix_path``; return the address for the discovery record."""
        try:
            os.unlink(unix_path)  # our own pid's leftover from a crash
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            with socket_path(unix_path) as where:
                listener.bind(where)
        except BaseException:
            listener.close()
            raise
        finally:
            os.umask(old)
        os.chmod(unix_path, 0o600)
        self._unlink = unix_path
        self.address = {"unix": unix_path}
        listener.listen(LISTEN_BACKLOG)
        self._listener = listener
        self._acceptor = threading.Thread(
            target=self._accept, args=(listener,), name="pyaichat-mcp-endpoint", daemon=True
        )
        self._acceptor.start()
        return self.address

    def stop(self) -> int:
        """Close the listener and every idle connection at once; the token dies with them. A connection whose
        call waits (for the person's input to end) is answered by that call's thread — that the person
        stopped serving — and closes then. Returns how many such calls there are."""
        self._token = os.urandom(16).hex()  # nothing said from here on matches
        self.backend.stop()
        with self._lock:
            self._stopped = True
            idle = [channel for channel in self._channels if channel not in self._busy]
        listener, self._listener = self._listener, None
        if listener is not None:
            self._end_accepting(listener)
        if self._unlink:
            try:
                os.unlink(self._unlink)
            except OSError:
                pass
        for channel in idle:
            channel.close()
        return self.answering

    def _end_accepting(self, listener: socket.socket) -> None:
        """Close the listener once its accept thread has left ``accept()``. Closing alone leaves that thread
        blocked in the kernel on the old number, and a process paused and continued (a checkpoint's
        ``/undo`` then ``/redo``) restarts the call on whatever holds that number then: the next endpoint's
        listener, whose first connection — the HTTP face's link — it took and closed (the face left, and the
        agent's request with it). ``shutdown`` wakes it (``EINVAL``); it sees ``_stopped`` and returns."""
        try:
            listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        acceptor = self._acceptor
        if acceptor is not None and acceptor is not threading.current_thread():
            acceptor.join(ACCEPT_JOIN)
        try:
            listener.close()
        except OSError:
            pass

    def descriptors(self) -> list[int]:
        """The listener's and every connection's file descriptor (read without the lock: a forked copy of
        the session lets go of them, and another thread may have held the lock at the fork)."""
        found = [channel._fd for channel in list(self._channels)]
        listener = self._listener
        if listener is not None:
            found.append(listener.fileno())
        return [fd for fd in found if fd >= 0]

    @property
    def answering(self) -> int:
        """Connections whose call is being answered."""
        with self._lock:
            return len(self._busy)

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._channels)

    # -- connections -----------------------------------------------------------------------------------------
    def _accept(self, listener: socket.socket) -> None:
        """Serve each connection on a thread of its own, at most ``MAX_CONNECTIONS`` at once. One beyond that
        waits in the listener's backlog until a connection ends (its face waits for the welcome meanwhile):
        closing it at once was read by the face as "the session stopped serving", a false refusal under a
        flood of clients."""
        while not self._stopped:
            if not self._slots.acquire(timeout=0.5):  # every slot busy: the backlog holds the next ones
                continue
            try:
                sock, _ = listener.accept()
            except OSError:
                self._slots.release()
                return
            seen = peer(sock)
            other_user = seen is not None and hasattr(os, "getuid") and seen[1] != os.getuid()
            if self._stopped or other_user:
                sock.close()
                self._slots.release()
                continue
            threading.Thread(target=self._serve, args=(sock,), name="pyaichat-mcp-link", daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        channel = Channel.over_socket(sock, MAX_REQUEST)
        key = f"c{next(self._ids)}"  # until the hello names the face (one face opens several connections)
        try:
            sock.settimeout(HELLO_TIMEOUT)
            hello = channel.receive()
            if not token_matches(hello, self._token):
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
                with self._lock:
                    if self._stopped:
                        break
                    self._busy.add(channel)
                try:
                    channel.send(self._answer(key, request, sock))
                finally:
                    with self._lock:
                        self._busy.discard(channel)
                if self._stopped:  # its last answer (that the person stopped serving) is sent
                    break
        except (ChannelClosed, OSError):
            pass
        finally:
            with self._lock:
                last = False
                if channel in self._channels:
                    self._channels.discard(channel)
                    self._faces[key] -= 1
                    last = not self._faces[key]
                    if last:
                        del self._faces[key]
            channel.close()
            self._slots.release()
            if last:  # the face's last connection: its clients are gone
                self.backend.clients.gone(key)

    def _answer(self, key: str, request: dict[str, Any], sock: socket.socket) -> dict[str, Any]:
        op, rid = request.get("op"), request.get("id")
        backend = self.backend
        if op == "ping":
            return {"id": rid, "ok": True}
        if op == "refused":  # the HTTP face's guard turned away requests in a session it had served
            count = request.get("count")
            client = request.get("key")
            found = f"{key}/{client}" if isinstance(client, str) else None
            backend.refused_at_door(found, count if isinstance(count, int) else 1)
            return {"id": rid, "ok": True}
        if op != "call":
            return {"id": rid, "error": f"unknown op {op!r}"}
        client = backend.clients.seen(
            f"{key}/{request.get('key')}",
            request.get("client") or "client",
            request.get("transport"),  # type: ignore[arg-type]  # the face always names its transport
        )
        from .backend import refusal, to_wire  # loaded with the backend

        name, args = request.get("name"), request.get("args")
        if name != "propose_code":
            return {"id": rid, "result": to_wire(backend.call(name, args, client))}
        if not self._proposals.acquire(blocking=False):  # it waits for the person: a bounded few at once
            return {"id": rid, "result": to_wire(refusal(name, TOO_MANY_PROPOSALS))}
        left = Departure(sock)  # the face closes the connection when its caller cancels or goes away
        try:
            return {"id": rid, "result": to_wire(backend.call(name, args, client, left=left))}
        finally:
            left.stop()
            self._proposals.release()
