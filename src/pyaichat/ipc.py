"""How pyaichat's own processes talk: one JSON object per line, bounded, over a socket or a pair of pipes.

Every link between pyaichat's processes is one of these:

- a session and its MCP faces (``mcpserve``: the HTTP face, ``pyaichat mcp``): a private Unix socket; the
  face opens each connection with ``hello`` and the serving token, and proves who is at the other end by the
  socket's peer credentials (``peer``);
- the suggestion engine and its model helper (``agent.suggest.helper`` ↔ ``agent.llm.infill_helper``), and a
  session and its HTTP face at start: the child's stdin and (for the helper) a private copy of its stdout.

A request carries an ``id`` that its answer repeats, so one channel may carry several at once. Each side
bounds the lines it reads (``limit``): neither can be made to buffer without end. Children are started here
too (``Child``): out of the terminal's process group (the Ctrl-C for the person's code is not theirs), their
input a pipe that ends with this process, ended with a bounded wait and then killed; on their side,
``die_with_parent`` and ``private_stdout``.

**Where the heavy libraries run — one rule for litellm and the MCP SDK.** A heavy library works in the
person's own process only while the person waits for that work; work that goes on while they type runs in a
child process of its own. So:

- litellm: the assistant's turn runs in the REPL (the person waits for the answer; the import starts in the
  background when they enter Assistant mode); ghost-text suggestions, asked while they type, run in the
  helper (``agent.suggest.helper``).
- the MCP SDK: its client, for the person's own servers, runs in the REPL (its calls are made during a turn;
  the import comes with the servers' start, in the background, at Assistant mode); its server, which serves
  the session to outside agents whose calls come while the person types, runs in the faces (the HTTP face,
  ``pyaichat mcp``).

Why, measured with that work moved into the REPL (``benchmarks/suggest.py --in-process``,
``benchmarks/mcp.py --in-process``; a 2-core machine at load 5–10): while litellm loads for the first
suggestion, keystroke echo p99 is 738 ms (max 856) in the REPL against 30 ms (max 143) with the helper, and
with each request aborted by the next key p99 was 45.6 ms against 17.0 off; the SDK's server on a thread of
the REPL grows it by 51 MB over 100 calls against 20 (the capability layer's 17 in both; the face process's
own 66 MB stay apart), makes the idle echo's
median 13–16 ms against 5–8 and the calls' median 30–69 ms against 32–38, with 1–8 keys of 140–179 over
50 ms while 4 clients call, against 1–2. What the rule costs: the helper's own memory (litellm, ~260 MB
resident) and a hop per call (~0.1 ms on the link). The other way round does not pay: the assistant in a
helper would add a hop to every streamed chunk and tool call of a turn the person is waiting for, and a second
copy of litellm, for an echo nobody is typing into then.

Standard library only: the person's process loads it with the first suggestion or ``/mcp on``.
"""

from __future__ import annotations

import hmac
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

PROTOCOL = 1


class ChannelClosed(Exception):
    """The other side went away, or broke the protocol (the channel is closed)."""


def encode(message: dict[str, Any]) -> bytes:
    """``message`` as one line (anything JSON cannot hold is sent as its ``str``)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str).encode() + b"\n"


def decode(line: bytes, limit: int) -> dict[str, Any]:
    """One line back into a message; ``ChannelClosed`` at the end, on a line over ``limit`` bytes, or on one
    that is not a JSON object."""
    if not line:
        raise ChannelClosed("end of stream")
    if len(line) > limit or not line.endswith(b"\n"):
        raise ChannelClosed("message too long")
    try:
        message = json.loads(line)
    except ValueError:
        raise ChannelClosed("not JSON") from None
    if not isinstance(message, dict):
        raise ChannelClosed("not a JSON object")
    return message


class Channel:
    """One end of a link: ``send`` from any thread, ``receive`` from one reader at a time."""

    def __init__(
        self, reader: IO[bytes] | None, write: Callable[[bytes], Any] | None, limit: int, *, fd: int = -1
    ) -> None:
        self._reader, self._write, self._limit, self._fd = reader, write, limit, fd
        self._lock = threading.Lock()
        self._closers: list[Callable[[], Any]] = []
        self.closed = False

    @classmethod
    def over_socket(cls, sock: socket.socket, limit: int) -> Channel:
        channel = cls(sock.makefile("rb"), sock.sendall, limit, fd=sock.fileno())
        shut = lambda: sock.shutdown(socket.SHUT_RDWR)  # noqa: E731 - wakes a reader blocked on it
        channel._closers = [shut, sock.close, channel._reader.close]  # type: ignore[union-attr]  # the reader exists once the channel is open
        return channel

    @classmethod
    def over_pipes(cls, reader: IO[bytes] | None, write_fd: int | None, limit: int) -> Channel:
        """``reader`` (``None``: this end only writes) and the file descriptor it writes to (``None``: only
        reads); closing the channel closes neither (their owner does)."""

        def write(data: bytes) -> None:
            assert write_fd is not None
            while data:
                data = data[os.write(write_fd, data) :]

        return cls(
            reader, write if write_fd is not None else None, limit, fd=-1 if write_fd is None else write_fd
        )

    def send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        with self._lock:
            if self.closed or self._write is None:
                raise ChannelClosed("closed")
            try:
                self._write(data)
            except (OSError, ValueError) as exc:
                self.close()
                raise ChannelClosed(str(exc)) from None

    def send_now(self, data: bytes) -> bool:
        """Write one short line (at most ``PIPE_BUF`` bytes, so written whole) only if that cannot wait: no
        other thread is writing and the pipe has room. From any thread; False if it would have waited."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self.closed or self._fd < 0 or not select.select([], [self._fd], [], 0)[1]:
                return False
            os.write(self._fd, data)
            return True
        except (OSError, ValueError):
            return False
        finally:
            self._lock.release()

    def receive(self) -> dict[str, Any]:
        """The next message (``ChannelClosed`` at the end or on a broken line: the channel is then closed)."""
        try:
            if self._reader is None:
                raise ChannelClosed("this end only writes")
            return decode(self._reader.readline(self._limit + 1), self._limit)
        except ChannelClosed:
            self.close()
            raise
        except (OSError, ValueError) as exc:
            self.close()
            raise ChannelClosed(str(exc)) from None

    def close(self) -> None:
        """From any thread, at once (never waiting for a send in progress: closing is what ends it)."""
        if self.closed:
            return
        self.closed = True
        for action in self._closers:
            try:
                action()
            except OSError:
                pass


# -- who is at the other end ---------------------------------------------------------------------------------
def hello(token: str, **fields: Any) -> dict[str, Any]:
    """The first message of a connection to a session's endpoint."""
    return {"op": "hello", "token": token, "protocol": PROTOCOL, **fields}


def token_matches(message: dict[str, Any], token: str) -> bool:
    """``message`` is a ``hello`` with ``token`` (compared in constant time)."""
    said = message.get("token")
    return (
        message.get("op") == "hello"
        and isinstance(said, str)
        and hmac.compare_digest(said.encode(), token.encode())
    )


def peer(sock: socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a Unix socket (for a client: the process that listens),
    from the kernel; ``None`` where the system does not say (not Linux, or not a Unix socket)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or sock.family != getattr(socket, "AF_UNIX", None):
        return None
    try:
        pid, uid, _gid = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
        )
    except OSError:
        return None
    return pid, uid


# -- child processes -----------------------------------------------------------------------------------------
class Child:
    """A helper process of ours, with ``channel`` over its stdin (and its stdout, when ``reads``)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        limit: int,
        reads: bool = True,
        stderr: int = subprocess.DEVNULL,
        pass_fds: Sequence[int] = (),
    ) -> None:
        own = (
            {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]  # Windows only
            if sys.platform == "win32"
            else {"start_new_session": True}  # out of the terminal's process group
        )
        self.popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE if reads else subprocess.DEVNULL,
            stderr=stderr,
            env=env,
            close_fds=True,
            pass_fds=tuple(pass_fds),
            **own,
        )
        assert self.popen.stdin is not None
        self.channel = Channel.over_pipes(self.popen.stdout, self.popen.stdin.fileno(), limit)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit code; ``None`` if it is still running after ``timeout`` seconds."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def end(self, timeout: float = 2.0) -> None:
        """End its input, so it leaves by itself; killed if it has not within ``timeout`` seconds."""
        self._close_input()
        if self.wait(timeout) is None:
            self.kill()

    def kill(self) -> None:
        """At once (its connections drop with it)."""
        try:
            self.popen.kill()
        except OSError:
            pass
        self.wait(5.0)
        self._close_input()

    def _close_input(self) -> None:
        try:
            if self.popen.stdin is not None:
                self.popen.stdin.close()
        except OSError:
            pass

    def exit_text(self) -> str:
        """How it ended, in words (``killed by SIGKILL``, ``exit code 1``)."""
        code = self.popen.returncode
        if code is None:
            return "it went away"
        if code < 0:
            import signal  # only to name one

            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def memory_mb(self) -> float | None:
        """Its resident memory (Linux), ``None`` where unknown or once it has ended."""
        if self.popen.returncode is not None:
            return None
        return resident_mb(f"/proc/{self.pid}/statm")


def resident_mb(statm: str = "/proc/self/statm") -> float | None:
    try:
        with open(statm) as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return None


# -- a child's side ------------------------------------------------------------------------------------------
def private_stdout(limit: int) -> Channel:
    """The link to the parent for a child that runs libraries which print: stdin in, a private copy of
    stdout out, and file descriptor 1 itself (and ``sys.stdout``) sent to /dev/null, so nothing a library
    prints can break a line."""
    fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    return Channel.over_pipes(sys.stdin.buffer, fd, limit)


def die_with_parent(parent: int) -> None:
    """On Linux, the kernel ends this process when ``parent`` (the one that started it) dies; the end of its
    input does too, but a fork of the parent could hold that pipe open."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes  # Linux's prctl, in the child between fork and exec
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:  # best effort: the end of input still ends it
            pass
    if parent and os.getppid() != parent:  # the parent died before the line above
        raise SystemExit(0)
