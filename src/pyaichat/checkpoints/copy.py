"""Taking a checkpoint: ``fork`` the live session into a paused copy, and — when the supervisor asks — fork a
live session back out of that copy. The copy itself never runs again; it stays, unchanged, for the next
``/undo`` that needs it.

In the live process ``take`` forks and returns at once (``Taken``): the copy's side of the work is the
copy's. In the copy, right after ``fork``:

- it leaves the terminal's process group (Ctrl-C, Ctrl-Z and a window resize are the live session's) and
  ignores those signals, so nothing the person does to the session reaches it;
- it lets go of what the session shares with its helper processes (the pipes and sockets of the MCP faces,
  the suggestion helper, MCP servers; the live session's own link to the supervisor; what the caller lets
  go of, ``in_copy``: the MCP endpoint's sockets): each such descriptor is pointed at ``/dev/null``
  (``dup2``), so the helper sees its end close when the live session closes it, and the Python object that
  holds the number stays harmless;
- it stops the cyclic garbage collector (a collection writes to every object it visits, which would copy
  those pages), offers itself first to the out-of-memory killer, and puts back the ``random`` state the
  ``fork`` hook reseeded;
- it sends the supervisor ``ready`` with what it holds (``resources.fd_table``, the threads it lost) and
  waits: ``ask`` (a question answered from its memory: ``answer``), ``spawn`` (fork a live session and
  return it to the caller of ``take``: ``Spawned``), ``reap`` (a live session it spawned ended: its status),
  ``exit``.

The copy has one thread (``fork`` keeps only the caller's), runs no ``atexit`` function and prints nothing:
it leaves with ``os._exit``, so nothing of the live session's is closed, flushed or written twice.
"""

from __future__ import annotations

import gc
import os
import random
import signal
import socket
import sys
import threading
from collections.abc import Callable, Collection
from typing import Any

from .link import Link, LinkClosed

# the signals a terminal sends to its foreground group, and the end of the terminal
TERMINAL_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGWINCH", "SIGHUP")
    if hasattr(signal, name)
)
COPY_OOM_SCORE = 500  # a copy is what the kernel should end first when memory runs out

_devnull = -1


def let_go(fd: int) -> None:
    """In a copy: this process stops holding ``fd`` (its number now names ``/dev/null``)."""
    global _devnull
    if fd < 0:
        return
    if _devnull < 0:
        _devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    if fd == _devnull:
        return
    try:
        os.dup2(_devnull, fd, inheritable=False)
    except OSError:
        pass


class Taken:
    """In the live process: a copy was taken (its pid)."""

    __slots__ = ("pid",)

    def __init__(self, pid: int) -> None:
        self.pid = pid


class Spawned:
    """In a new live process forked from a copy: its link to the supervisor, what the supervisor said
    (``why``: a jump or a crash; the attachment: what continues), the copy it was forked from, and the
    person's threads the session had when that copy was taken (none runs here)."""

    __slots__ = ("copy_pid", "link", "lost_threads", "message")

    def __init__(self, link: Link, message: dict[str, Any], copy_pid: int, lost_threads: list[str]) -> None:
        self.link, self.message, self.copy_pid, self.lost_threads = link, message, copy_pid, lost_threads


class _AtFork:
    """What the copy puts back or remembers of the moment it was taken."""

    __slots__ = ("gc_enabled", "handlers", "lost_threads", "oom_score", "random_state")

    def __init__(self) -> None:
        self.random_state = random.getstate()
        self.gc_enabled = gc.isenabled()
        self.handlers = {sig: signal.getsignal(sig) for sig in TERMINAL_SIGNALS}
        self.oom_score = _read_oom_score()
        self.lost_threads = person_threads(threading.enumerate())


def supported() -> bool:
    return hasattr(os, "fork") and hasattr(socket, "send_fds") and sys.platform != "win32"


def take(
    link: Link,
    *,
    children: Collection[int],
    answer: Callable[[dict[str, Any]], dict[str, Any]],
    describe: Callable[[], dict[str, Any]],
    in_copy: Callable[[], None] | None = None,
) -> Taken | Spawned:
    """Fork a paused copy of this process (the main thread, between inputs). ``link``: this process's link to
    the supervisor (the copy is registered there); ``children``: the copies this process has taken (they are
    not helpers whose pipes the copy must let go of); ``answer``: how the copy answers ``ask``; ``describe``:
    what the copy tells the supervisor it holds, ``in_copy``: what else it lets go of (both in the copy, right
    after ``fork``; neither may take a lock).

    Returns ``Taken`` in this process; in a live process forked later from the copy, ``Spawned``."""
    ours, theirs = Link.pair()
    at_fork = _AtFork()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, TERMINAL_SIGNALS)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        ours.close()
        theirs.close()
        raise
    if pid:  # the live process: Ctrl-C waits until the copy is the supervisor's
        try:
            theirs.close()
            link.send({"op": "checkpoint", "pid": pid}, fds=(ours.fileno(),))
        finally:
            ours.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return Taken(pid)
    # the copy
    try:
        ours.close()
        own = _become_copy(at_fork, link, theirs, children, blocked)
        if in_copy is not None:
            in_copy()
        own.send(
            {"op": "ready", "pid": os.getpid(), **_described(describe), "lost_threads": at_fork.lost_threads}
        )
    except BaseException:
        os._exit(70)
    return _wait(own, at_fork, answer)


def _described(describe: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return describe()
    except Exception as exc:  # what it holds is a report: the copy stands without it
        return {"describe_error": f"{type(exc).__name__}: {exc}"}


def _become_copy(
    at_fork: _AtFork, live_link: Link, theirs: socket.socket, children: Collection[int], blocked: Any
) -> Link:
    """Right after ``fork``, in the copy (see the module's docstring)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    for sig in TERMINAL_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    gc.disable()
    random.setstate(at_fork.random_state)
    _write_oom_score(str(COPY_OOM_SCORE))
    keep = {theirs.fileno()}
    let_go_shared_with_helpers(os.getppid(), set(children) | {os.getpid()}, keep)
    live_link.closed = True  # the number is the live process's link: pointed at /dev/null below
    let_go(live_link.fileno())
    return Link(theirs)


def _wait(own: Link, at_fork: _AtFork, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> Spawned:
    """The copy's life: answer the supervisor until it says ``spawn`` (then, in the forked child, return) or
    ``exit``."""
    while True:
        try:
            message = own.receive()
        except LinkClosed:  # the supervisor is gone: so is the session
            os._exit(0)
        except BaseException:
            os._exit(70)
        op = message.get("op")
        try:
            if op == "exit":
                os._exit(0)
            elif op == "reap":
                own.send({"op": "reaped", "pid": message.get("pid"), "status": _reap(message.get("pid"))})
            elif op == "ask":
                try:
                    reply = answer(message)
                except Exception as exc:
                    reply = {"error": f"{type(exc).__name__}: {exc}"}
                own.send({"op": "answer", "id": message.get("id"), **reply})
            elif op == "spawn":
                spawned = _spawn(own, at_fork, message)
                if spawned is not None:
                    return spawned
        except LinkClosed:
            os._exit(0)


def _reap(pid: Any) -> int | None:
    """The wait status of a live session this copy forked (it ended: the supervisor saw its link close)."""
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def _spawn(own: Link, at_fork: _AtFork, message: dict[str, Any]) -> Spawned | None:
    """Fork a live session out of this copy: ``Spawned`` in the child, ``None`` here (the supervisor is told
    its pid and given its link)."""
    ours, theirs = Link.pair()
    copy_pid = os.getpid()
    pid = os.fork()
    if pid:
        theirs.close()
        try:
            own.send({"op": "live", "pid": pid, "id": message.get("id")}, fds=(ours.fileno(),))
        finally:
            ours.close()
        return None
    ours.close()
    own.closed = True
    try:
        own.sock.close()
    except OSError:
        pass
    _become_live(at_fork, message.get("pgid"))
    return Spawned(Link(theirs), message, copy_pid, list(at_fork.lost_threads))


def _become_live(at_fork: _AtFork, pgid: Any) -> None:
    """In a live session forked from a copy: back in the terminal's group, the person's signals its own again,
    the collector running as it was."""
    if isinstance(pgid, int) and pgid > 0:
        try:
            os.setpgid(0, pgid)
        except OSError:
            pass
    for sig, handler in at_fork.handlers.items():
        try:
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        except (OSError, ValueError, TypeError):
            pass
    if at_fork.oom_score is not None:
        _write_oom_score(at_fork.oom_score)
    if at_fork.gc_enabled:
        gc.enable()


# -- what would not survive a fork ---------------------------------------------------------------------------
def gpu_context() -> str | None:
    """What GPU context lives in this process (``None``: none that a fork would break: forked CUDA/MPS state
    is unusable). Looked up in ``sys.modules`` and the open devices, never by importing a library."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return "a CUDA context (torch)"
        except Exception:
            pass
        if sys.platform == "darwin":
            try:
                mps = getattr(torch, "mps", None)
                if mps is not None and torch.backends.mps.is_available() and mps.current_allocated_memory():
                    return "an MPS context (torch)"
            except Exception:
                pass
    for target in fd_targets().values():  # any library's: a GPU driver keeps its devices open
        if target.startswith(("/dev/nvidia", "/dev/kfd", "/dev/dri/render")):
            return f"a GPU context ({target} is open)"
    return None


def fd_targets() -> dict[int, str]:
    """This process's descriptors and what each names (``/proc/self/fd``; empty where there is none)."""
    found: dict[int, str] = {}
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except (OSError, ValueError):
            continue
    return found


# threads of pyaichat and of the libraries it runs (started again where needed), not the person's
_OURS = frozenset({
    "pyaichat", "litellm", "prompt_toolkit", "asyncio", "concurrent", "httpx", "httpcore", "anyio", "openai",
    "mcp", "rich", "uvicorn", "jupyter_client", "zmq", "tornado",
})  # fmt: skip


def person_threads(threads: Collection[threading.Thread]) -> list[str]:
    """The names of the threads among ``threads`` that the person's code started (not the main thread, not
    pyaichat's or its libraries')."""
    names = []
    for thread in threads:
        if thread is threading.main_thread() or thread.name.startswith(("pyaichat", "litellm")):
            continue
        if isinstance(thread, threading._DummyThread):  # a thread of C code: not the person's to name
            continue
        target = getattr(thread, "_target", None)
        module = getattr(target, "__module__", None) or type(thread).__module__ or ""
        if module.split(".")[0] in _OURS and type(thread).__module__.split(".")[0] in _OURS:
            continue
        names.append(thread.name)
    return names


# -- what a copy must not hold ----------------------------------------------------------------------------
def let_go_shared_with_helpers(parent: int, skip: set[int], keep: set[int]) -> None:
    """Point at ``/dev/null`` every descriptor of this process that is a pipe or socket also held by a child
    of ``parent`` (the live session's helpers, servers and other processes it started; not the copies in
    ``skip``), except the terminal (0–2) and ``keep``. Linux only (``/proc``)."""
    try:
        theirs: set[str] = set()
        for pid in _children(parent) - skip:
            theirs |= _ends(pid)
        if not theirs:
            return
        for fd, target in _own_ends().items():
            if fd > 2 and fd not in keep and target in theirs:
                let_go(fd)
    except OSError:
        pass


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.update(int(word) for word in fh.read().split())
        except (OSError, ValueError):
            continue
    return found


def _ends(pid: int) -> set[str]:
    """The pipes and sockets process ``pid`` holds (``pipe:[inode]``, ``socket:[inode]``)."""
    found: set[str] = set()
    base = f"/proc/{pid}/fd"
    try:
        names = os.listdir(base)
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"{base}/{name}")
        except OSError:
            continue
        if target.startswith(("pipe:", "socket:")):
            found.add(target)
    return found


def _own_ends() -> dict[int, str]:
    return {fd: target for fd, target in fd_targets().items() if target.startswith(("pipe:", "socket:"))}


def _read_oom_score() -> str | None:
    try:
        with open("/proc/self/oom_score_adj") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _write_oom_score(value: str) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(value)
    except OSError:
        pass
