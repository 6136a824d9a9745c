"""Run a job in a forked child: copy-on-write view of the live data, resource limits, SIGKILL at the deadline.

The child is a copy of this process at the moment of ``fork``, holding only the forking thread. It therefore
takes no lock another thread may have held (no logging, no stdout, no imports of new modules — the parent
pre-imports what the snippet needs). It first replaces every mapping it shares with the session by a private
one (``shared_memory``: a memmap, shared memory — the memory ``fork`` does not copy), then closes every
inherited descriptor except its pipe, drops the environment, applies ``resource`` limits, raises the kernel
walls (``confine``), runs the job, writes one bounded JSON document and leaves with ``os._exit`` (no
``atexit`` handlers, no flushing of buffers it shares with the parent).

The job may run code that replaces what that report needs (``json.dumps``, ``os.write``, ``os._exit``): the
child takes its own references to them before the job runs. The report starts with a marker, so bytes the
code itself wrote into the pipe before it are told apart (``CHANNEL_WRITTEN``), and a pipe the code closed is
told from a crash by the exit status (``CHANNEL_CLOSED``).
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import queue
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from ...errors import CapabilityTimeout
from ..layout import forget_environment
from . import shared_memory
from .confine import ConfineError, Walls, libc_handle, prepare_in_parent, raise_walls
from .shared_memory import fcntl

try:
    import resource
except ImportError:  # Windows: no fork either, so the forked runner is never used there
    resource = None  # type: ignore[assignment]  # no resource module on this platform

MAX_RESULT_BYTES = 1 << 20
REPORT_MARK = b"\x00pyaichat-report\x00"
CHANNEL_WRITTEN = "written"  # ``result["channel"]``: the job's code wrote into the pipe before the report
CHANNEL_CLOSED = "closed"  # the job's code closed the pipe (or put another file in its place)
_CLOSED_EXIT = 71
AS_HEADROOM = 4 << 30  # bytes of address space a child may add to what the parent already maps
CHILD_NOFILE = 32

# Python >= 3.12 warns on every fork of a multi-threaded process; forking here is deliberate and the child
# only runs code that takes no lock another thread may hold.
warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks.*", category=DeprecationWarning)


def fork_available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32" and sys.platform != "emscripten"


def _vm_size() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            pages = int(fh.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# Above any descriptor number the kernel hands out (RLIMIT_NOFILE's hard limit is at most 2**30 on Linux).
_FD_CEILING = 2**31 - 1


def _child_setup(keep_fds: tuple[int, ...], timeout: float, vm_size: int) -> None:
    """Everything the child does before running the job; each step is best effort but ordered: descriptors
    first (while we may still open /dev/null), limits last. ``keep_fds``: the result pipe, the Landlock
    ruleset, and what the job opened for itself (``open_in_child``)."""
    keep = sorted({fd for fd in keep_fds if fd >= 3})
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            if fd not in keep:
                os.dup2(devnull, fd)
    except OSError:  # no /dev/null: stdio goes instead
        for fd in (0, 1, 2):
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
    # Every inherited descriptor goes, whatever its number: an open file, socket or pipe of the session is a
    # way out that neither Landlock nor the seccomp filter would close (CPython uses close_range(2), so a
    # large upper bound costs nothing).
    _close_all_but(keep)
    _clear_environment()
    gc.disable()  # a full collection would touch (and so copy) every page of the parent's heap
    try:

        def limit(which: int, soft: int) -> None:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, hard if hard != resource.RLIM_INFINITY else soft))

        limit(resource.RLIMIT_CPU, math.ceil(timeout) + 1)
        limit(resource.RLIMIT_FSIZE, 0)
        limit(resource.RLIMIT_NOFILE, max(CHILD_NOFILE, *(fd + 1 for fd in keep_fds)))
        limit(resource.RLIMIT_CORE, 0)
        if vm_size and sys.platform.startswith("linux"):
            limit(resource.RLIMIT_AS, vm_size + AS_HEADROOM)
    except Exception:
        pass


def _close_all_but(keep: list[int]) -> None:
    """Close every descriptor from 3 up except ``keep`` (sorted)."""
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _FD_CEILING)


def _renumber_low(fds: tuple[int, ...]) -> tuple[int, ...]:
    """In the child: every inherited descriptor but ``fds`` goes; ``fds`` move to the lowest numbers (3 up).
    A session with many files open (a test runner's worker, a notebook server) hands out pipes numbered above
    ``CHILD_NOFILE``; kept there, they would force the child's descriptor limit up to their number.
    Negative entries (no descriptor) stay as they are."""
    keep = sorted({fd for fd in fds if fd >= 3})
    _close_all_but(keep)
    moved: dict[int, int] = {}
    for fd in keep if fcntl is not None else ():
        try:
            new = fcntl.fcntl(fd, fcntl.F_DUPFD, 3)  # the lowest free number from 3
        except OSError:
            moved[fd] = fd
            continue
        if new < fd:
            os.close(fd)
            moved[fd] = new
        else:
            os.close(new)
            moved[fd] = fd
    return tuple(moved.get(fd, fd) for fd in fds)


def _clear_environment() -> None:
    """No API key in this process's environment, neither in ``os.environ`` nor in the C library's ``environ``
    (what a library or the session's own code would read) nor in ``posix.environ`` (the interpreter's copy
    from its start). ``clearenv()`` once plus dropping the mapping is about ten times faster in a fresh child
    than ``os.environ.clear()`` (one ``unsetenv`` per variable)."""
    startup = getattr(sys.modules.get("posix"), "environ", None)
    if isinstance(startup, dict):
        startup.clear()  # the environment as the interpreter found it at its start (``os.environ``'s source)
    forget_environment()  # a copy of it in the session's variables is still told apart (and hidden)
    libc = libc_handle()
    data = getattr(os.environ, "_data", None)
    if libc is not None and isinstance(data, dict) and getattr(libc, "clearenv", None) is not None:
        try:
            if libc.clearenv() == 0:
                data.clear()
                return
        except Exception:
            pass
    try:
        os.environ.clear()
    except Exception:
        pass


def _write_all(fd: int, data: bytes, write: Callable[[int, memoryview], int]) -> None:
    view = memoryview(data)
    while view:
        n = write(fd, view)
        view = view[n:]


def run_forked(
    job: Callable[[], dict[str, Any]],
    timeout: float,
    walls: Walls | None = None,
    require_walls: bool = False,
    open_in_child: Callable[[], tuple[int, ...]] | None = None,
) -> dict[str, Any]:
    """Run ``job`` in a forked child and return its dict; raise ``CapabilityTimeout`` after ``timeout`` s.
    ``walls`` (from ``confine.probe()``) are raised in the child before ``job`` runs; with ``require_walls``
    a wall that fails to go up ends the run instead of running ``job`` behind the guards alone.
    ``open_in_child``: called in the child before the walls go up; the descriptors it returns stay open for
    ``job`` (a preview's ``/proc/self/pagemap``)."""
    vm_size = _vm_size()
    shared_memory.prepare()
    ruleset = -1
    if walls is not None:
        try:
            ruleset = prepare_in_parent(walls)
        except ConfineError:
            ruleset = -1  # the child tries again, and reports
    read_fd, write_fd = os.pipe()
    # what the report needs, taken before the job's code can replace it
    encode, write, close, exit_now = json.JSONEncoder(default=str).encode, os.write, os.close, os._exit
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # ---- child ----
        code = 0
        try:
            os.close(read_fd)
            write_fd, ruleset = _renumber_low((write_fd, ruleset))
            failed = _privatize((write_fd, ruleset))
            extra = open_in_child() if open_in_child is not None and not failed else ()
            _child_setup((write_fd, ruleset, *extra), timeout, vm_size)
            try:
                if walls is not None and not failed:
                    try:
                        raise_walls(walls, ruleset if ruleset >= 0 else None)
                    except ConfineError as exc:
                        if require_walls:
                            failed = f"the sandbox could not confine its process ({exc.strerror})"
                result = {"ok": False, "error": failed, "text": ""} if failed else job()
            except MemoryError:
                result = {"ok": False, "error": "the code ran out of memory in the sandbox", "text": ""}
            data = encode(result).encode("utf-8", "replace")
            if len(data) > MAX_RESULT_BYTES:
                data = encode({"ok": False, "error": "the result was too large", "text": ""}).encode()
            code = _CLOSED_EXIT  # until the report is written
            _write_all(write_fd, REPORT_MARK + data, write)
            close(write_fd)  # the parent has its answer now, not after this address space is torn down
            code = 0
        except BaseException:
            code = code or 70
        finally:
            exit_now(code)
    # ---- parent ----
    os.close(write_fd)
    chunks: list[bytes] = []
    size = 0
    timed_out = False
    answered = False  # the child sent its result and closed the pipe
    left = True  # the wait ended by an exception (Ctrl-C): the child is stopped, not waited for
    try:
        while True:
            remaining = timeout - (time.monotonic() - started)
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                answered = bool(chunks)
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESULT_BYTES:
                break
        left = False
    finally:
        os.close(read_fd)
        killed = left or timed_out or size > MAX_RESULT_BYTES
        # A child that answered or is killed is collected in the background: its status says nothing more,
        # and waiting for its address space to be torn down would hold up a bounded caller (the picture).
        status = _reap_later(pid) if answered or killed else _reap(pid, kill=False)
    if timed_out:
        raise CapabilityTimeout(f"The code did not finish within {timeout:g} s and was stopped.")
    if size > MAX_RESULT_BYTES:
        return {"ok": False, "error": "the result was too large", "text": ""}
    if not chunks:
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _CLOSED_EXIT:
            error = "the code closed the channel the sandbox reports through"
            return {"ok": False, "error": error, "text": "", "channel": CHANNEL_CLOSED}
        return {"ok": False, "error": _death(status), "text": ""}
    data = b"".join(chunks)
    before, mark, report = data.rpartition(REPORT_MARK)
    try:
        result = json.loads(report if mark else data)
    except ValueError:
        return {"ok": False, "error": "the sandboxed process sent an unreadable result", "text": ""}
    if not isinstance(result, dict):
        return {"ok": False, "error": "unreadable result", "text": ""}
    if before or not mark:
        result["channel"] = CHANNEL_WRITTEN
    return result


_reaper: tuple[int, queue.SimpleQueue[int]] | None = None  # (the process that started it, its queue)
_reaper_lock = threading.Lock()


def _reap_later(pid: int) -> int:
    """The child answered: make sure it ends (a snippet may have closed the pipe itself and kept running) and
    let a background thread collect it, instead of waiting here for the kernel to tear down the child's copy
    of the address space (a millisecond or more per gigabyte mapped)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    global _reaper
    with _reaper_lock:
        if _reaper is None or _reaper[0] != os.getpid():
            pids: queue.SimpleQueue[int] = queue.SimpleQueue()
            threading.Thread(
                target=_reap_forever, args=(pids,), name="pyaichat-sandbox-reaper", daemon=True
            ).start()
            _reaper = (os.getpid(), pids)
        _reaper[1].put(pid)
    return 0


def _reap_forever(pids: queue.SimpleQueue[int]) -> None:
    while True:
        _reap(pids.get(), kill=False)


def _reap(pid: int, kill: bool) -> int:
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return status
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0


def _privatize(skip: tuple[int, ...]) -> str:
    """In the child: no memory shared with the session is left writable (``shared_memory``). Returns why the
    job must not run, or ""."""
    try:
        shared_memory.privatize(skip)
    except shared_memory.PrivatizeError as exc:
        return (
            "memory the session shares with other processes could not be made private in the sandbox "
            f"({exc.strerror}); nothing ran"
        )
    return ""


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == getattr(signal, "SIGXCPU", None):
            return "the code used up its CPU time in the sandbox and was stopped"
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if name in ("SIGSEGV", "SIGBUS"):
            reason = shared_memory.crash_reason(name)
            if reason:
                return reason
        return f"the sandboxed process died ({name}), probably out of memory or a crash in a library"
    return "the sandboxed process ended without a result"
