"""What going back to a checkpoint cannot undo, found from the kernel's own counters, not from a hook on the
person's code.

A Python audit hook would name every file an input opens, but it is called for every audited event of the
whole process, forever (a hook cannot be removed): measured here (``benchmarks/checkpoints.py --hooks``),
``id()`` 4x slower, ``copy.deepcopy`` 1.6x, ``sys._getframe`` 3x — on every input, for the life of the
session. It would also miss what C code writes (Arrow's writers open files themselves). So each input is
bracketed instead by what the kernel counts for this process, read before and after it (about 40 µs):

- files written: ``write_bytes`` of the main thread's ``/proc/thread-self/io`` (bytes it sent to storage,
  whatever code wrote them: Python, C, a library's own writer); which files, where a cheap look can tell:
  paths named in the input that changed during it. Files in memory (``/dev/shm``, a tmpfs) are not counted by
  the kernel, nor what other threads of the session write;
- processes started: the children's resource usage (``RUSAGE_CHILDREN``) grew (a process that ran and was
  waited for), or a child exists that started during the input (``/proc``);
- descriptors opened during the input (the person's files, connections): kept as the session's own, apart
  from pyaichat's; at a jump, each one open both at the checkpoint and now is compared — a file whose offset
  moved (the copy shares it: going back does not move it back), a TCP connection that sent or received since
  (what it sent stays sent: a committed transaction stays committed, and the two processes share its state).

A GPU context is checked for before each checkpoint (``copy.gpu_context``): forked CUDA/MPS state is unusable,
so while one lives no checkpoint is taken at all.
"""

from __future__ import annotations

import os
import resource
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from .copy import fd_targets

if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

_TCP_INFO = getattr(socket, "TCP_INFO", 11)
_TCP_COUNTERS = struct.Struct("=QQII")  # bytes_acked, bytes_received, segs_out, segs_in (at byte 120)
_TCP_AT = 120


# -- an input's window --------------------------------------------------------------------------------------
class Window:
    """What the kernel counted for this process around one input (``open`` before it, ``close`` after)."""

    def __init__(self, number: int, source: str) -> None:
        self.number, self.source = number, source
        self.started = time.time()
        self.ended: float | None = None
        self.wrote = 0  # bytes the main thread sent to storage
        self.children = False  # a child process ran (and was waited for) during it
        self.opened: dict[int, str] = {}  # descriptors it opened that are still open
        self._io = 0
        self._usage = (0, 0.0)
        self._fds: dict[int, str] = {}

    @classmethod
    def open(cls, number: int, source: str) -> Window:
        window = cls(number, source)
        window._io = written_bytes()
        window._usage = children_usage()
        window._fds = fd_targets()
        window.started = time.time()
        return window

    def close(self, ours: AbstractSet[int] = frozenset()) -> None:
        """After the input. ``ours``: descriptors pyaichat's own threads hold (the MCP endpoint's), not the
        person's; files in pyaichat's state directory (the resume file's writer) are not theirs either."""
        self.ended = time.time()
        self.wrote = max(written_bytes() - self._io, 0)
        minflt, cpu = children_usage()
        self.children = minflt > self._usage[0] or cpu > self._usage[1]
        now = fd_targets()
        state = state_dir()
        self.opened = {
            fd: target
            for fd, target in now.items()
            if self._fds.get(fd) != target
            and fd not in ours
            and not (state and (target == state or target.startswith(state + os.sep)))
        }
        self._fds = {}


def state_dir() -> str | None:
    """pyaichat's state directory (the resume file, the history, MCP's records)."""
    from ..paths import state_path  # loaded at start-up

    try:
        return os.path.dirname(state_path("x"))
    except Exception:
        return None


def written_bytes() -> int:
    """Bytes the main thread has sent to storage (the input runs there; the resume file's writer and other
    helpers write from threads of their own, which would be counted with the process's)."""
    try:
        with open("/proc/thread-self/io", "rb") as fh:
            for line in fh:
                if line.startswith(b"write_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def children_usage() -> tuple[int, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_minflt, usage.ru_utime + usage.ru_stime


# -- the person's descriptors, and their state at a moment ---------------------------------------------------
def fd_state(fd: int, target: str) -> dict[str, Any] | None:
    """What can move under a shared descriptor: a file's offset, a TCP connection's counters (``None``: gone,
    or no longer what it was)."""
    try:
        if os.readlink(f"/proc/self/fd/{fd}") != target:
            return None
    except OSError:
        return None
    state: dict[str, Any] = {"fd": fd, "target": target}
    if target.startswith("socket:"):
        state.update(_socket_state(fd))
    elif target.startswith("/"):
        try:
            state["pos"] = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            pass
    return state


def _socket_state(fd: int) -> dict[str, Any]:
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return {"kind": "socket"}
    try:
        found: dict[str, Any] = {"kind": "unix socket" if sock.family == socket.AF_UNIX else "socket"}
        try:
            peer = sock.getpeername()
            found["peer"] = peer if isinstance(peer, str) else f"{peer[0]}:{peer[1]}"
        except OSError:
            pass
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
            found["kind"] = "tcp"
            try:
                info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 256)
                if len(info) >= _TCP_AT + _TCP_COUNTERS.size:
                    found["counters"] = list(_TCP_COUNTERS.unpack_from(info, _TCP_AT))
            except OSError:
                pass
        return found
    finally:
        sock.close()  # the duplicate only


def states(fds: dict[int, str]) -> list[dict[str, Any]]:
    """The state of each of the person's descriptors that is still what it was."""
    return [state for fd, target in sorted(fds.items()) if (state := fd_state(fd, target)) is not None]
