"""The supervisor: the process the shell started, kept small, holding the session's copies.

``launch.start`` forks the session (the parent stays as the supervisor, the child returns and runs the REPL),
so the process the shell waits for never changes: job control, Ctrl-Z/``fg`` and the exit status behave as
without checkpoints. The supervisor reads no key and prints nothing. It is the child subreaper of everything
the session forks (``PR_SET_CHILD_SUBREAPER``), so a copy whose parent is gone is still its own to reap.

It keeps, for each process of the session, its link (``link.Link``) and role:

- the **live** session, which the person types into (one at a time);
- **copies** (checkpoints), paused, each the state before one input, oldest first;
- at most one **paused** session: where the person was before ``/undo``, resumed by ``/redo``.

And it does what a process of the session cannot do for itself:

- a **jump** (``/undo``): the live session sends what continues (the conversation, the history, …) and pauses
  (``SIGSTOP``, out of the terminal's group); the copy forks a new live session, which takes it;
- a **redo**: the paused session gets ``SIGCONT`` and what continues; the live one leaves;
- a **crash**: the live session's link closes without a ``bye``; its wait status says how it ended (a
  signal, ``os._exit``); the newest copy forks a new live session, told which input crashed and how;
- the **budget**: the copies' own memory (``memory``), measured after each input and while one runs, kept
  under the budget by letting the oldest copies go; the live session is told which.

When the live session ends (a ``bye``, or a signal that means the person ended it), every copy is let go
and the supervisor ends the same way: the same exit code, or the same signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn

from . import memory
from .link import Link, LinkClosed

# how a process ends that the person did not mean: the supervisor brings the session back
CRASH_SIGNALS = frozenset(
    getattr(signal, name)
    for name in (
        "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS", "SIGTRAP", "SIGKILL", "SIGXCPU",
        "SIGXFSZ", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGVTALRM", "SIGPROF", "SIGSTKFLT",
    )
    if hasattr(signal, name)
)  # fmt: skip
MAX_COPIES = 100  # beyond it the oldest go, whatever their memory: each is a process (tables, a pid)
MEASURE_AFTER = 0.3  # seconds after an input before the copies are measured
MEASURE_EVERY = 2.0  # while an input runs (the live session may be writing over shared pages)
MEASURE_SHARE = 0.1  # of a CPU the measuring may take: the kernel walks every copy's page tables
REAP_WAIT = 5.0
_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Proc:
    """One process of the session, as the supervisor knows it."""

    pid: int
    link: Link
    role: str  # "live", "copy", "paused" or "leaving"
    parent: int  # the process that forked it (0: the supervisor itself)
    order: int
    before: int | None = None  # a copy: the input that ran after it was taken
    ready: dict[str, Any] | None = None  # a copy: what it told when it was ready
    carried: bytes | None = None  # a copy: what continued when a jump resumed it (for a crash later)
    usage: memory.Usage | None = None
    replies: list[dict[str, Any]] = field(default_factory=list)


class Supervisor:
    def __init__(self, link: Link, pid: int, pgid: int, budget_gb: float | None) -> None:
        self.pgid = pgid
        self._order = 0
        self.procs: dict[int, Proc] = {}
        self.live: Proc | None = self._add(pid, link, "live", 0)
        self.running: dict[str, Any] | None = None  # the input the live session is running
        self.bye: int | None = None
        self.ending = False  # the person ended the session (SIGTERM, SIGHUP to the supervisor)
        self.statuses: dict[int, int] = {}  # wait statuses of the processes reaped here
        self.notices: list[dict[str, Any]] = []  # for the live session, sent at once
        self.budget_gb = budget_gb
        self.budget = 0
        self._used = 0  # what the copies held when last measured
        self._measure_at: float | None = None
        self._measured_at = 0.0  # when the copies were last measured, and what it took
        self._measure_cost = 0.0
        self._wake_r, self._wake_w = os.pipe()
        self._tty: Any = None
        self.final: int | None = None  # the wait status the supervisor leaves with

    def _add(self, pid: int, link: Link, role: str, parent: int) -> Proc:
        self._order += 1
        proc = Proc(pid, link, role, parent, self._order)
        self.procs[pid] = proc
        return proc

    # -- life ----------------------------------------------------------------------------------------------
    def run(self) -> NoReturn:
        status = None
        try:
            self._set_up()
            status = self._loop()
        except (
            BaseException
        ):  # a fault here must not leave the session without the process the shell waits for
            status = self._last_resort()
        self._leave(status)

    def _set_up(self) -> None:
        for sig in (signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)  # the person's keys are the session's
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._end_asked)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        os.set_blocking(self._wake_w, False)
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        self._tty = _terminal_state()
        self.budget = memory.budget(self.budget_gb)
        try:
            import ctypes  # Linux's prctl: here, after the session has started, never on its way

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except Exception:  # elsewhere a copy whose parent ended is reaped by init
            pass

    def _end_asked(self, signum: int, frame: Any) -> None:
        """SIGTERM or SIGHUP to the supervisor (the terminal closed, someone ended the process the shell
        started): the live session gets the same signal, the copies go, and the supervisor ends by it at once,
        as the session's one process did without checkpoints."""
        self.ending = True
        for proc in list(self.procs.values()):
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signum if proc is self.live else signal.SIGKILL)
        _leave_as(signum)  # a wait status of "killed by signum" is signum itself

    def _loop(self) -> int:
        import select

        while self.final is None:
            # a link closed here by a failed read (a message too long): no read will see its end, so it
            # ends now (a failed send leaves the link open: its last messages and its end are still read)
            for ended in [p for p in self.procs.values() if p.link.closed]:
                self._gone(ended)
                if self.final is not None:
                    return self.final
            links = {
                proc.link.sock.fileno(): proc for proc in list(self.procs.values()) if not proc.link.closed
            }
            timeout = 1.0
            if self._measure_at is not None:
                timeout = max(0.0, min(timeout, self._measure_at - time.monotonic()))
            try:
                readable, _, _ = select.select([*links, self._wake_r], [], [], timeout)
            except InterruptedError:
                continue
            if self._wake_r in readable:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 512)
                self._reap_orphans()
            for fd in readable:
                proc = links.get(fd)
                if proc is not None and self.final is None:
                    self._read(proc)
            if self._measure_at is not None and time.monotonic() >= self._measure_at:
                self._measure_at = None
                self._keep_to_budget()
            if self.running is not None and self._measure_at is None:
                self._measure_at = time.monotonic() + max(MEASURE_EVERY, self._measure_cost / MEASURE_SHARE)
        return self.final

    def _read(self, proc: Proc) -> None:
        try:
            messages = proc.link.poll()
        except LinkClosed:
            messages = None
        for message in messages or ():
            try:
                self._handle(proc, message)
            except LinkClosed:
                pass
        if messages is None or proc.link.closed:
            self._gone(proc)

    # -- messages ------------------------------------------------------------------------------------------
    def _handle(self, proc: Proc, message: dict[str, Any]) -> None:
        op = message.get("op")

        if proc.role in ("copy", "leaving") and op in ("ready", "live", "answer", "reaped"):
            self._from_copy(proc, op, message)
            return
        if proc is not self.live:
            return  # a paused or leaving session says nothing that matters
        handler = getattr(self, f"_on_{op}", None)
        if handler is not None:
            handler(proc, message)

    def _proc(self, pid: object) -> Proc | None:
        """The process a message names (``None``: none, or not a pid)."""
        return self.procs.get(pid) if isinstance(pid, int) else None

    def _from_copy(self, proc: Proc, op: str, message: dict[str, Any]) -> None:
        if op == "ready":
            proc.ready = {k: v for k, v in message.items() if k not in ("op", "pid")}
        elif op == "live":
            fds = message.get("_fds") or []
            pid = message.get("pid")
            if not fds or not isinstance(pid, int):
                return
            new = self._add(pid, Link(socket.socket(fileno=fds[0])), "live", proc.pid)
            self.live = new
            for notice in self.notices:
                self._tell(notice)
            self.notices = []
        elif op == "answer":
            if self.live is not None:
                self._send(self.live, message)
        elif op == "reaped":
            status, pid = message.get("status"), message.get("pid")
            if isinstance(status, int) and isinstance(pid, int):
                self.statuses[pid] = status

    def _on_checkpoint(self, proc: Proc, message: dict[str, Any]) -> None:
        fds = message.get("_fds") or []
        pid = message.get("pid")
        if fds and isinstance(pid, int):
            self._add(pid, Link(socket.socket(fileno=fds[0])), "copy", proc.pid)
            self._measure_soon()

    def _on_running(self, proc: Proc, message: dict[str, Any]) -> None:
        self.running = {"number": message.get("number"), "source": message.get("source")}
        copy = self._proc(message.get("copy"))  # the copy taken before this input
        if copy is not None and copy.role == "copy" and copy.before is None:
            copy.before = message.get("number")

    def _on_ran(self, proc: Proc, message: dict[str, Any]) -> None:
        self.running = None
        self._measure_soon()

    def _on_story(self, proc: Proc, message: dict[str, Any]) -> None:
        """What continues changed while the session's state did not (an answer): kept with the copy that holds
        the state, for a crash before the next copy."""
        copy = self._proc(message.get("copy"))
        if copy is not None and copy.role == "copy":
            copy.carried = message.get("_blob") or None

    def _on_release(self, proc: Proc, message: dict[str, Any]) -> None:
        for pid in message.get("pids") or ():
            copy = self.procs.get(pid)
            if copy is not None and copy.role == "copy":
                self._release(copy)

    def _on_bye(self, proc: Proc, message: dict[str, Any]) -> None:
        code = message.get("code")
        self.bye = code if isinstance(code, int) else 0

    def _on_list(self, proc: Proc, message: dict[str, Any]) -> None:
        # /checkpoints: measured now, the list is what the budget leaves; /undo: as last measured (after each
        # input, and every few seconds while one runs), so going back does not wait for the kernel's walk
        used = self._keep_to_budget() if message.get("measure", True) else self._used
        paused = next((p.pid for p in self.procs.values() if p.role == "paused"), None)
        listing = {"copies": self._copies(), "paused": paused, "used": used, "budget": self.budget}
        self._send(proc, {"op": "list", **listing})

    def _copies(self) -> list[dict[str, Any]]:
        """The copies, oldest first, as the live session lists them."""
        return [
            {
                "pid": c.pid,
                "before": c.before,
                "own": c.usage.own if c.usage is not None else None,
                "fds": (c.ready or {}).get("fds") or [],
            }
            for c in sorted(self.procs.values(), key=lambda c: c.order)
            if c.role == "copy" and c.ready is not None
        ]

    def _on_ask(self, proc: Proc, message: dict[str, Any]) -> None:
        copy = self._proc(message.get("to"))
        if copy is None or copy.role != "copy":
            self._send(proc, {"op": "answer", "id": message.get("id"), "error": "that checkpoint is gone"})
            return
        if not self._send(copy, message):
            self._send(proc, {"op": "answer", "id": message.get("id"), "error": "that checkpoint is gone"})

    def _on_jump(self, proc: Proc, message: dict[str, Any]) -> None:
        """``/undo``: the live session pauses (or leaves, when a paused one already holds where the person
        was) and the copy forks the new live session."""
        target = self._proc(message.get("to"))
        if target is None or target.role != "copy" or target.ready is None:
            self._send(proc, {"op": "refused", "why": "That checkpoint has been let go."})
            return
        blob = message.get("_blob") or b""
        paused = any(p.role == "paused" for p in self.procs.values())
        self._send(proc, {"op": "leave" if paused else "pause"})
        proc.role = "leaving" if paused else "paused"
        self.live = None
        self.running = None
        target.carried = blob
        self._spawn(target, {"why": "jump"}, blob)

    def _on_redo(self, proc: Proc, message: dict[str, Any]) -> None:
        paused = next((p for p in self.procs.values() if p.role == "paused"), None)
        if paused is None:
            self._send(proc, {"op": "refused", "why": "There is nothing to redo."})
            return
        self._send(proc, {"op": "leave"})
        proc.role = "leaving"
        paused.role = "live"
        self.live = paused
        self._restore_terminal()
        self._send(paused, {"op": "resume", "pgid": self.pgid}, blob=message.get("_blob") or b"")
        _when_stopped(paused.pid)  # a SIGCONT before its own SIGSTOP would be lost: it would stop for good
        with contextlib.suppress(OSError):
            os.kill(paused.pid, signal.SIGCONT)

    def _on_forget_redo(self, proc: Proc, message: dict[str, Any]) -> None:
        """Something new ran: where the person was before ``/undo`` is let go."""
        for paused in [p for p in self.procs.values() if p.role == "paused"]:
            self._kill(paused)

    # -- copies and processes ------------------------------------------------------------------------------
    def _spawn(self, copy: Proc, what: dict[str, Any], blob: bytes) -> None:
        self._restore_terminal()
        self._send(copy, {"op": "spawn", "pgid": self.pgid, "copies": self._copies(), **what}, blob=blob)

    def _release(self, copy: Proc) -> None:
        copy.role = "leaving"
        if not self._send(copy, {"op": "exit"}):
            with contextlib.suppress(OSError):
                os.kill(copy.pid, signal.SIGKILL)

    def _kill(self, proc: Proc) -> None:
        proc.role = "leaving"
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)

    def _send(self, proc: Proc, message: dict[str, Any], *, blob: bytes = b"") -> bool:
        try:
            proc.link.send(message, blob=blob)
            return True
        except LinkClosed:
            return False

    def _tell(self, notice: dict[str, Any]) -> None:
        """A notice for the live session (kept for the next one while there is none)."""
        if self.live is None or not self._send(self.live, notice):
            self.notices.append(notice)

    def _gone(self, proc: Proc) -> None:
        """``proc``'s link closed: it ended (or is ending)."""

        proc.link.close()
        self.procs.pop(proc.pid, None)
        role = proc.role
        if role == "live" and proc is self.live:
            self.live = None
            self._live_ended(proc)
            return
        if role == "copy":  # not let go by anyone here: the kernel ended it (out of memory?) or someone did
            self._tell({"op": "released", "pids": [proc.pid], "why": "ended"})
        self._reap(proc, wait=False)

    def _live_ended(self, proc: Proc) -> None:
        status = self._reap(proc, wait=True)
        crashed = status is None or _is_crash(status)
        if self.bye is not None or self.ending or not crashed:
            self.final = status if status is not None else 0
            return
        copy = self._newest_copy()
        if copy is None:
            self.final = status if status is not None else 0
            return
        running, self.running = self.running, None
        crash = {"how": describe_end(status), "number": None, "source": None}
        if running is not None:
            crash.update(number=running.get("number"), source=running.get("source"))
        for paused in [p for p in self.procs.values() if p.role == "paused"]:
            self._kill(paused)  # the crash was new: there is no redo past it
        if copy.before == crash["number"]:
            copy.before = None  # it holds the session before the next input now: the crashed one is gone
        self._spawn(copy, {"why": "crash", "crash": crash}, copy.carried or b"")

    def _newest_copy(self) -> Proc | None:
        ready = [p for p in self.procs.values() if p.role == "copy" and p.ready is not None]
        return max(ready, key=lambda p: p.order) if ready else None

    def _reap(self, proc: Proc, *, wait: bool) -> int | None:
        """``proc``'s wait status: reaped here when it is (or has become) the supervisor's child, else by the
        copy that forked it."""
        if proc.pid in self.statuses:
            return self.statuses.pop(proc.pid)
        try:
            pid, ended = os.waitpid(proc.pid, 0 if wait else os.WNOHANG)
            return ended if pid else None
        except ChildProcessError:
            pass
        parent = self.procs.get(proc.parent)
        if parent is None or parent.role != "copy":
            return _zombie_status(proc.pid)
        status = _zombie_status(proc.pid) if wait else None
        if not self._send(parent, {"op": "reap", "pid": proc.pid}) or not wait:
            return status
        deadline = time.monotonic() + REAP_WAIT
        while time.monotonic() < deadline:
            try:
                message = parent.link.receive(timeout=max(deadline - time.monotonic(), 0.01))
            except (TimeoutError, LinkClosed):
                break
            if message.get("op") == "reaped" and message.get("pid") == proc.pid:
                found = message.get("status")
                return found if isinstance(found, int) else status
            self._handle(parent, message)
        return status

    def _reap_orphans(self) -> None:
        """Processes that became the supervisor's (a copy whose parent ended) and have ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            if pid in self.procs:
                self.statuses[pid] = status

    # -- memory --------------------------------------------------------------------------------------------
    def _measure_soon(self) -> None:
        at = max(time.monotonic() + MEASURE_AFTER, self._measured_at + self._measure_cost / MEASURE_SHARE)
        if self._measure_at is None or at < self._measure_at:
            self._measure_at = at

    def _memory(self) -> dict[str, Any]:
        started = time.monotonic()
        held = [p for p in self.procs.values() if p.role in ("copy", "paused")]
        live = memory.usage(self.live.pid) if self.live is not None else None
        for proc in held:
            proc.usage = memory.usage(proc.pid) or proc.usage
        used = memory.held_by_copies(live, [p.usage for p in held if p.usage is not None])
        self._measured_at = time.monotonic()
        self._measure_cost = self._measured_at - started
        return {"used": used, "budget": self.budget}

    def _keep_to_budget(self) -> int:
        """Let the oldest copies go until what the copies hold fits the budget; the live session is told.
        Returns what they hold then (about: the next measure has the exact figure)."""
        self._measure_at = None
        let_go: list[int] = []
        while sum(1 for p in self.procs.values() if p.role == "copy") > MAX_COPIES:
            copy = self._oldest_releasable()
            if copy is None:
                break
            let_go.append(copy.pid)
            self._release(copy)
        if let_go:
            self._tell({"op": "released", "pids": let_go, "why": "count", "count": MAX_COPIES})
            let_go = []
        figures = self._memory()
        used = figures["used"]
        while used > self.budget:
            copy = self._oldest_releasable()
            if copy is None:
                break
            used -= copy.usage.own if copy.usage is not None else 0
            let_go.append(copy.pid)
            self._release(copy)
        self._used = used
        self._tell({"op": "memory", "used": used, "budget": self.budget})
        if let_go:
            self._tell(
                {"op": "released", "pids": let_go, "why": "memory", "used": used, "budget": self.budget}
            )
            self._measure_soon()
        return used

    def _oldest_releasable(self) -> Proc | None:
        copies = [p for p in self.procs.values() if p.role == "copy"]
        if len(copies) < 2:
            return None
        newest = max(copies, key=lambda p: p.order)
        parents = {p.parent for p in self.procs.values() if p.role in ("live", "paused")}
        kept = [p for p in copies if p is not newest and p.pid not in parents]
        return min(kept, key=lambda p: p.order) if kept else None

    # -- the end -------------------------------------------------------------------------------------------
    def _restore_terminal(self) -> None:
        """Before a new live session takes the terminal: its settings as the session started with them, its
        foreground group the session's (a crash may have left either changed)."""
        if self._tty is None:
            return
        try:
            import termios  # POSIX only: a terminal there

            termios.tcsetattr(0, termios.TCSANOW, self._tty)
            if os.tcgetpgrp(0) != self.pgid:
                old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
                try:
                    os.tcsetpgrp(0, self.pgid)
                finally:
                    signal.signal(signal.SIGTTOU, old)
        except (OSError, ImportError, ValueError):
            pass

    def _last_resort(self) -> int:
        """The supervisor failed: let every copy go and wait for the live session alone."""
        for proc in list(self.procs.values()):
            if proc.role in ("copy", "paused", "leaving"):
                with contextlib.suppress(OSError):
                    os.kill(proc.pid, signal.SIGKILL)
        live = self.live
        while live is not None:
            try:
                return os.waitpid(live.pid, 0)[1]
            except ChildProcessError:
                time.sleep(0.5)
                if not os.path.exists(f"/proc/{live.pid}"):
                    return 0
            except InterruptedError:
                continue
        return 0

    def _leave(self, status: int | None) -> NoReturn:
        for proc in list(self.procs.values()):
            if proc.role in ("copy", "leaving"):
                self._send(proc, {"op": "exit"})
            if proc.role in ("paused", "leaving", "copy"):
                with contextlib.suppress(OSError):
                    os.kill(proc.pid, signal.SIGKILL)
        self._reap_orphans()
        _leave_as(status if status is not None else 0)


def _leave_as(status: int) -> NoReturn:
    """End this process as the session ended: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource  # no core file of the supervisor: the session's own was written

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _is_crash(status: int) -> bool:
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status) in CRASH_SIGNALS
    return os.WIFEXITED(status)  # it left without saying goodbye: os._exit in a library


def describe_end(status: int | None) -> str:
    """How a process ended, in words: ``a segmentation fault``, ``SIGKILL (killed: out of memory, or by
    someone)``, ``exit code 3 (os._exit)``."""
    if status is None:
        return "an unknown cause"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        named: dict[int, str] = {
            signal.SIGSEGV: "a segmentation fault",
            signal.SIGABRT: "an abort (SIGABRT)",
            signal.SIGBUS: "a bus error (SIGBUS)",
            signal.SIGFPE: "a floating-point exception (SIGFPE)",
            signal.SIGILL: "an illegal instruction (SIGILL)",
            signal.SIGKILL: "SIGKILL (killed by the system when memory ran out, or by someone)",
        }
        if sig in named:
            return named[sig]
        try:
            return f"signal {signal.Signals(sig).name}"
        except ValueError:
            return f"signal {sig}"
    if os.WIFEXITED(status):
        return f"exit code {os.WEXITSTATUS(status)} without leaving the REPL (os._exit)"
    return "an unknown cause"


def _when_stopped(pid: int, timeout: float = 10.0) -> None:
    """Wait until ``pid`` has stopped itself (``/proc/<pid>/stat``: ``T``), or has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                state = fh.read().rpartition(b")")[2].split()[:1]
        except OSError:
            return
        if state and state[0] in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0.005)


def _zombie_status(pid: int) -> int | None:
    """The wait status of an ended process not yet reaped by its parent (``/proc/<pid>/stat``'s
    ``exit_code``, Linux)."""
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        fields = data.rpartition(b")")[2].split()
        if fields and fields[0] == b"Z":
            try:
                return int(fields[49])
            except (IndexError, ValueError):
                return None
        time.sleep(0.01)
    return None


def _terminal_state() -> Any:
    try:
        import termios

        return termios.tcgetattr(0)
    except Exception:
        return None
