"""The line to a Jupyter kernel: liveness, restarts, interrupts, and requests to pyaichat's helper in it.

``KernelConnection`` speaks the Jupyter messaging protocol through ``jupyter_client`` (nothing invented). It
loads the helper (``kernel_helper``) with one silent ``user_expressions`` evaluation and then talks to it over
a comm; ``execute.CellRun`` (a cell) and ``kernel.KernelRuntime`` (the runtime) are built on it. A dead or
restarted kernel is a ``KernelUnavailable`` with one sentence; nothing here exits the REPL.

One module of ~450 lines on purpose: it is one object's state — the client, the helper's comm, the restart
and liveness bookkeeping — that every member reads and changes (a request waits on the comm while watching
for a restart, a restart resets the helper), so a split would hand that state across modules; the cell and
the runtime built on it are modules of their own already.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..version import __version__
from . import KernelUnavailable
from .kernel_link import COMM_TARGET, PROTOCOL

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
POLL_S = 0.25  # how often a wait checks that the kernel is still alive

_INSTALL = "__import__('pyaichat.runtime.kernel_helper', fromlist=['install']).install()"


def not_installed() -> str:
    """Why the assistant cannot see a kernel's data when pyaichat is missing there, and how to install it
    there from where this one came (the package index, or this clone)."""
    from ..extras import install_command  # only to say how

    return (
        "pyaichat is not installed in the kernel's Python environment, so the assistant cannot look at the "
        f"kernel's data: install it there with `{install_command(python='<kernel python>')}` (Python mode "
        "works)."
    )


NOT_IPYTHON = (
    "This kernel is not an IPython kernel (ipykernel), so there is no user namespace for the assistant to "
    "look at (Python mode still runs in it)."
)
DEAD = "The kernel is not running (it died or was shut down); start it again and reattach with --existing."
DEAD_OWN = "The kernel pyaichat started has died (its variables are gone); restart pyaichat for a new one."
RESTARTED = "The kernel restarted: its variables are gone."
# A Jupyter Server tells no other client of a restart, and its subscription to the new kernel's output joins
# a few hundred milliseconds after the restart: an input sent in that window runs, but its output is lost.
OUTPUT_LOST = (
    "What this input printed was lost while the connection joined the new kernel; run it again to see it."
)
HEAR_AFTER_RESTART = 5.0  # seconds a restarted kernel has to be heard on IOPub before inputs go anyway
# A new kernel process announces itself with "starting"; a Jupyter Server says "restarting" first when it
# restarts a kernel that died.
NEW_PROCESS = ("starting", "restarting")


@dataclass
class WireStats:
    """Bytes of the last helper request and its reply, as serialized for the wire (benchmarks, tests)."""

    sent: int = 0
    received: int = 0
    calls: int = 0
    total: deque[int] = field(default_factory=lambda: deque(maxlen=1000))  # per call, the latest last
    latency: deque[float] = field(default_factory=lambda: deque(maxlen=50))  # seconds per request (/status)


class KernelConnection:
    """A connected kernel client (and the manager, when pyaichat started the kernel)."""

    def __init__(
        self,
        client: Any,
        manager: Any = None,
        *,
        color: bool = True,
        out: TextIO | None = None,
        err: TextIO | None = None,
        connection_file: str | None = None,
    ) -> None:
        self.client = client
        self.manager = manager
        self.connection_file = connection_file
        self.color = color
        self._out, self._err = out, err
        self.wire = WireStats()
        self.kernel_info: dict[str, Any] = {}
        self.restarted = False  # a new kernel process was seen behind the same ports
        self.execution_count = 0  # the kernel's count of the last input run through this connection
        # the last /snapshot saved through this connection: its file ("" the default one) and when
        self.snapshot: tuple[str, float] | None = None
        self._ids = itertools.count(1)
        self._comm_id: str | None = None
        self._token: str | None = None
        self._helper_problem: str | None = None
        # One conversation at a time: the channels are not thread-safe, and a suggestion's facts are asked
        # for from a background thread while the prompt (completion, Enter) may ask too.
        self.lock = threading.RLock()

    # -- connecting ------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str, *, color: bool = True, timeout: float = 10.0) -> KernelConnection:
        """Connect to a running kernel through its connection file and load pyaichat's helper into it."""
        # jupyter_client (and pyzmq) are optional: imported once the connection file was found with them
        from jupyter_client.blocking.client import BlockingKernelClient

        client = BlockingKernelClient(connection_file=path)
        try:
            client.load_connection_file()
        except (OSError, ValueError, KeyError) as exc:
            raise KernelUnavailable(f"Cannot read the kernel connection file {path}: {exc}.")
        client.start_channels()
        kernel = cls(client, color=color, connection_file=path)
        try:
            kernel.connect(timeout)
        except BaseException:
            client.stop_channels()
            raise
        return kernel

    @property
    def connection_path(self) -> str | None:
        """The connection file that reaches this kernel: the one it was attached by, or the one of the kernel
        pyaichat started (``None``: none does)."""
        return self.connection_file or (self.manager.connection_file if self.manager is not None else None)

    def reopen(self) -> KernelConnection:
        """A second connection to the same kernel (channels of its own), never shutting it down: for
        ``/mcp on``, whose calls come from another thread than the prompt's."""
        path = self.connection_path
        if not path:
            raise KernelUnavailable(
                "This session's kernel cannot be reached a second time; serve it with "
                "`pyaichat mcp --existing FILE` instead."
            )
        return KernelConnection.open(path, color=self.color)

    def connect(self, timeout: float = 10.0) -> None:
        """Wait until the kernel answers on shell and IOPub (``hear``), then load the helper."""
        self.hear(timeout)
        self.load_helper()

    def hear(self, timeout: float) -> None:
        """Wait until the kernel answers on shell *and* IOPub: a SUB socket (ours, or a Jupyter Server's for
        our websocket) drops what is published before it has joined — at the start, and after a restart, when
        an input sent at once would lose its output."""
        deadline = time.monotonic() + timeout
        while True:
            msg_id = self.client.kernel_info()
            reply = self.shell_reply(msg_id, min(1.0, max(deadline - time.monotonic(), 0.05)))
            if reply is not None:
                self.kernel_info = reply["content"]
                if self._iopub_heard(msg_id, 0.5):
                    break
            if time.monotonic() > deadline:
                raise KernelUnavailable(f"The kernel did not answer within {timeout:g} s; is it running?")
            if self.manager is not None and not self.alive():  # (a heartbeat needs a moment to start)
                raise self.dead()

    def _iopub_heard(self, parent_id: str, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                msg = self.client.iopub_channel.get_msg(timeout=left)
            except Exception:
                return False
            if msg.get("parent_header", {}).get("msg_id") == parent_id:
                self.drain_iopub()
                return True
        return False

    def load_helper(self) -> None:
        """Load pyaichat's helper with a silent user expression (no count, no history, nothing in ``user_ns``)
        and open the comm to it. Problems become one sentence the capabilities return."""
        self._comm_id = None
        info = self.kernel_info
        language = (info.get("language_info") or {}).get("name", "")
        if info and (language != "python" or info.get("implementation") not in ("ipython", None)):
            self._helper_problem = NOT_IPYTHON
            return
        msg_id = self.client.execute(
            "", silent=True, store_history=False, user_expressions={"pyaichat": _INSTALL}, allow_stdin=False
        )
        reply = self.shell_reply(msg_id, 15.0)
        if reply is None:  # busy with another client's cell: the next capability call loads it
            if not self.alive():
                raise self.dead()
            return
        value = (reply["content"].get("user_expressions") or {}).get("pyaichat", {})
        if value.get("status") != "ok":
            ename = value.get("ename", "")
            self._helper_problem = (
                not_installed()
                if ename in ("ModuleNotFoundError", "ImportError")
                else NOT_IPYTHON
                if ename in ("NotIPython", "NameError")
                else f"pyaichat's helper could not start in the kernel ({ename}: {value.get('evalue', '')})."
            )
            return
        hello = ast.literal_eval(value["data"]["text/plain"])
        if hello.get("protocol") != PROTOCOL:
            self._helper_problem = (
                f"pyaichat {hello.get('version')} in the kernel does not match pyaichat {__version__} here: "
                "install the same version in the kernel's environment."
            )
            return
        self._token = hello["token"]
        self._helper_problem = None
        comm_id = uuid.uuid4().hex
        self._send_shell("comm_open", {"comm_id": comm_id, "target_name": COMM_TARGET, "data": {"id": 0}})
        self._comm_id = comm_id
        opened = self._await_comm(0, 10.0)
        if opened.get("token") != self._token:  # pragma: no cover - a second helper would be a bug
            raise KernelUnavailable("pyaichat's helper in the kernel answered for another session.")

    @property
    def helper_problem(self) -> str | None:
        """Why the assistant cannot look inside this kernel (one sentence), or ``None``."""
        return self._helper_problem

    # -- liveness --------------------------------------------------------------------------------------------
    def alive(self) -> bool:
        try:
            if self.manager is not None:
                return bool(self.manager.is_alive())
            return bool(self.client.is_alive())
        except Exception:
            return False

    def dead(self, *, while_running: bool = False) -> KernelUnavailable:
        """The one sentence for a kernel that is gone (it depends on who started it)."""
        if while_running:
            return KernelUnavailable(
                "The kernel died while running this input"
                + ("; restart pyaichat for a new one." if self.manager else "; start it again and reattach.")
            )
        return KernelUnavailable(DEAD_OWN if self.manager is not None else DEAD)

    def interrupt(self) -> None:
        """Interrupt the code running in the kernel (not pyaichat)."""
        if self.manager is not None:
            self.manager.interrupt_kernel()
        else:  # a kernel started elsewhere: ask it to interrupt itself (works across machines)
            self.client.control_channel.send(self.client.session.msg("interrupt_request", {}))

    def restart_sentence(self, sentence: str = RESTARTED) -> str:
        """``sentence`` (the variables are gone), offering the last snapshot back when one was taken."""
        if self.snapshot is None:
            return sentence
        path, when = self.snapshot
        at = time.strftime("%H:%M", time.localtime(when))
        again = f"/resume {shlex.quote(path)}" if path else "/resume"
        return f"{sentence} {again} brings back those of your /snapshot of {at}."

    def reset_after_restart(self) -> None:
        """A new kernel process is behind the connection: its helper and its input count start afresh, and
        nothing is sent before it is heard on IOPub (what it publishes would be lost)."""
        self.restarted = False
        self._comm_id = None
        self.execution_count = 0
        try:
            self.hear(HEAR_AFTER_RESTART)
        except KernelUnavailable:
            pass  # not answering: what is sent next says so

    def close(self) -> None:
        """Stop our channels; shut the kernel down only when pyaichat started it."""
        try:
            self.client.stop_channels()
        finally:
            if self.manager is not None:
                self.manager.shutdown_kernel(now=False)

    def describe(self) -> str:
        """One line saying which kernel this is (shown when the REPL starts)."""
        info = self.kernel_info.get("language_info") or {}
        what = f"{info.get('name', 'a')} {info.get('version', '')}".strip()
        if self.manager is not None:
            kind = getattr(self.manager, "kernel_name", "")
            return f"started a {kind} kernel ({what}); Ctrl-D exits and shuts it down"
        name = self.connection_file.rsplit("/", 1)[-1] if self.connection_file else "a kernel"
        return f"attached to {name} ({what}); Ctrl-D detaches and leaves it running"

    def status_lines(self) -> list[str]:
        """What ``/status`` shows: which kernel, and how long a request to its helper takes."""
        return [self.describe(), f"Link: ZMQ; {self.helper_latency()}."]

    def helper_latency(self) -> str:
        """How long a request to the helper took, in words (the median of the last ones)."""
        trips = sorted(self.wire.latency)
        took = f"{trips[len(trips) // 2] * 1000:.0f} ms (median of {len(trips)})" if trips else "none yet"
        return f"a request to pyaichat's helper in the kernel: {took}"

    # -- talking to the helper -------------------------------------------------------------------------------
    def request(self, data: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """One request to the helper over the comm, and its reply (reloading the helper once if the kernel
        was restarted under us)."""
        with self.lock:
            return self._request(data, timeout)

    def _request(self, data: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self.restarted:
            self.reset_after_restart()
        for attempt in (1, 2):
            if self._comm_id is None:
                if self._helper_problem:
                    raise KernelUnavailable(self._helper_problem)
                self.load_helper()
                if self._comm_id is None:
                    raise KernelUnavailable(self._helper_problem or str(self.dead()))
            self.drain_iopub()
            if self.restarted:
                self.reset_after_restart()
                continue
            request_id = next(self._ids)
            started = time.perf_counter()
            msg_id, self.wire.sent = self._send_shell(
                "comm_msg", {"comm_id": self._comm_id, "data": {**data, "id": request_id}}
            )
            try:
                reply = self._await_comm(request_id, timeout, msg_id)
                self.wire.latency.append(time.perf_counter() - started)
                return reply
            except _Restarted:
                if attempt == 2:
                    raise KernelUnavailable(self.restart_sentence())
                self.reset_after_restart()
        raise self.dead()  # pragma: no cover

    def _send_shell(self, msg_type: str, content: dict[str, Any]) -> tuple[str, int]:
        msg = self.client.session.msg(msg_type, content)
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"], _wire_size(self.client.session, msg)

    def _await_comm(self, request_id: int, timeout: float, msg_id: str | None = None) -> dict[str, Any]:
        """The helper's reply to ``request_id``. The kernel goes idle after handling our message; idle
        without a reply means no helper handled it: a new kernel process behind the same ports."""
        deadline = time.monotonic() + timeout
        channel = self.client.iopub_channel
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if not self.alive():
                    raise self.dead()
                raise (
                    _Restarted()
                    if self._probe_restart()
                    else KernelUnavailable("The kernel did not answer in time (it may be busy running code).")
                )
            try:
                msg = channel.get_msg(timeout=min(POLL_S, left))
            except Exception:
                if not self.alive():
                    raise self.dead()
                continue
            kind = msg["header"]["msg_type"]
            content = msg["content"]
            if kind == "comm_msg" and content.get("comm_id") == self._comm_id:
                reply = content.get("data") or {}
                if reply.get("id") == request_id:
                    self.wire.received = _wire_size(self.client.session, msg)
                    self.wire.calls += 1
                    self.wire.total.append(self.wire.sent + self.wire.received)
                    return reply
            elif (kind == "status" and content.get("execution_state") in NEW_PROCESS) or (
                kind == "status"
                and msg_id is not None
                and content.get("execution_state") == "idle"
                and msg.get("parent_header", {}).get("msg_id") == msg_id
            ):
                raise _Restarted()
            elif kind == "comm_close" and content.get("comm_id") == self._comm_id:
                self._comm_id = None
                raise _Restarted()

    def _probe_restart(self) -> bool:
        """After a silent timeout: is it a new kernel process (our helper gone)?"""
        try:
            self.load_helper()
        except KernelUnavailable:
            return False
        return self._comm_id is not None

    def shell_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None:
        """The shell channel's reply to ``msg_id``, or ``None`` when none came in time."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = self.client.shell_channel.get_msg(timeout=min(left, POLL_S))
            except Exception:
                if not self.alive():
                    return None
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg
        return None

    def drain_iopub(self) -> None:
        """Drop what other clients' cells published meanwhile (noticing a restart on the way)."""
        channel = self.client.iopub_channel
        while channel.msg_ready():
            msg = channel.get_msg(timeout=0)
            if msg["header"]["msg_type"] == "status" and msg["content"].get("execution_state") in NEW_PROCESS:
                self.restarted = True

    # -- output ----------------------------------------------------------------------------------------------
    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    def plain(self, text: str) -> str:
        """Kernel text without colour codes unless the terminal shows colours."""
        if self.color and _isatty(self.out):
            return text
        return ANSI.sub("", text)


class _Restarted(Exception):
    """The kernel process behind the connection is a new one."""


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


def _wire_size(session: Any, msg: dict[str, Any]) -> int:
    """Bytes the message takes on the wire: its four JSON frames, the signature and the delimiter."""
    pack = session.pack
    frames = (msg["header"], msg.get("parent_header") or {}, msg.get("metadata") or {}, msg["content"])
    return sum(len(pack(f)) for f in frames) + 64 + len(b"<IDS|MSG>")
