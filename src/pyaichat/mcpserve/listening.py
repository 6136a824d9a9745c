"""Where serving listens and what it hands the socket to: the addresses a host name means, the bound
listener, the hosts the guard accepts, and the HTTP face process (spawned with a clean environment, ended
after what it was answering). ``McpService`` (``service``) starts and stops them."""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

from ..ipc import Child
from .endpoint import MAX_REQUEST

if TYPE_CHECKING:
    from .endpoint import Endpoint

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")
GRACE = 2.0  # seconds the HTTP face has, once told to stop, to answer what it was answering
# What the face process keeps of the environment: enough to start Python, nothing secret.
_ENV_KEEP = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "VIRTUAL_ENV",
)


def addresses(host: str) -> list[str]:
    """The addresses other machines reach this one by, when serving on ``host``: ``host`` itself, or for a
    wildcard (``0.0.0.0``, ``::``) the machine's own — which no other machine can use as written. Local
    look-ups only: a UDP socket "connected" to a documentation address sends nothing, and says which address
    this machine would use to leave."""
    if host not in WILDCARD:
        return [host]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    found: list[str] = []
    probe = "2001:db8::1" if family == socket.AF_INET6 else "192.0.2.1"
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            found.append(udp.getsockname()[0])
    except OSError:
        pass
    try:
        name = socket.gethostname()
        for info in socket.getaddrinfo(name, None, family, socket.SOCK_STREAM):
            found.append(str(info[4][0]))
        found.append(name)
    except OSError:
        pass
    seen = [a for a in dict.fromkeys(found) if a not in LOOPBACK and not a.startswith("127.")]
    return seen


def bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def listen(host: str, port: int = 0) -> socket.socket:
    """A listening socket on ``host`` at ``port`` (0: a free one), answering without Nagle's delay (a
    request's headers and body would otherwise wait out the peer's delayed ACK, ~40 ms a call)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if hasattr(socket, "SO_REUSEADDR") and os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    return sock


def allowed_hosts(host: str, port: int) -> list[str]:
    """The ``Host`` headers the face accepts (a DNS-rebinding page names its own host). Listening on every
    address (``0.0.0.0``, ``::``), any name may be right: ``*`` — the token and the refusal of browsers are
    then the walls."""
    if host in WILDCARD:
        return ["*"]
    names = {"127.0.0.1", "localhost", "[::1]"} if host in LOOPBACK else {host, f"[{host}]"}
    return sorted(f"{name}:{port}" for name in names)


def face_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in _ENV_KEEP if key in os.environ}
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [package_root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def spawn_face(listener: socket.socket, settings: dict[str, Any], log: str) -> Child:
    """Start the HTTP face with the listening socket and its settings (on stdin: never in argv, which other
    users can read in the process list); its stdin stays open while this process lives."""
    fd = listener.fileno()
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        face = Child(
            [sys.executable, "-m", "pyaichat.mcpserve.http_main"],
            env=face_env(),
            limit=MAX_REQUEST,
            reads=False,
            stderr=log_fd,
            pass_fds=(fd,),
        )
    finally:
        os.close(log_fd)
    face.channel.send({**settings, "fd": fd})
    return face


def end_after(face: Child, endpoint: Endpoint | None) -> None:
    """The HTTP face, once the calls it was waiting on are answered: it stopped listening when the session
    closed its link, and leaves by itself when they are sent; killed if it has not within ``GRACE``."""
    deadline = time.monotonic() + GRACE
    while endpoint is not None and endpoint.answering and time.monotonic() < deadline:
        time.sleep(0.02)
    face.end(max(deadline - time.monotonic(), 0.1))
