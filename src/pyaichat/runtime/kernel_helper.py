"""The helper pyaichat loads *inside* a Jupyter kernel: the kernel runtime's far end.

The host (``connection.KernelConnection``) loads it with one silent ``user_expressions`` evaluation — no
execution count, no history entry, no name bound in ``user_ns`` — and then talks to it over a comm (target
``pyaichat``). Its state lives in this module (in ``sys.modules``), so ``%who``, ``dir()`` and ``In``/``Out``
never see it.

It holds a ``LocalRuntime`` over a ``Session`` whose namespace *is* the kernel's ``user_ns`` (the same dict),
and answers each request by running the declared operation on it (``kernel_link.answer``): the very code a
local session runs, so bounds, privacy levels, masking, the audit and the read-only guarantee apply here,
before anything leaves the kernel, and ``run_python`` forks on the kernel's machine. IPython's cell events
feed the session's history and last error, exactly as in the IPython extension (``cells.CellRecorder``).
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

from IPython import get_ipython

from ..version import __version__
from .cells import record_error, shell_runtime
from .kernel_link import COMM_TARGET, PROTOCOL, WHERE, answer

_helper: KernelHelper | None = None


class NotIPython(RuntimeError):
    """The kernel is not an IPython kernel: there is no ``user_ns`` to look at."""


class KernelHelper:
    """One per kernel process: the local runtime over ``user_ns``, and the comm the host reaches it by."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.token = uuid.uuid4().hex  # tells the host whether the kernel it talks to is still the same one
        self.runtime, self.recorder = shell_runtime(shell, where=WHERE)
        self.session = self.runtime.session
        last = getattr(sys, "last_value", None)
        if isinstance(last, BaseException) and not isinstance(last, KeyboardInterrupt):
            # an error raised before pyaichat attached is still "the last error"
            record_error(self.session, last, _last_source(shell))
        shell.events.register("pre_run_cell", self.recorder.pre_run_cell)
        shell.events.register("post_run_cell", self.recorder.post_run_cell)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request from the host; never raises (the host turns ``error`` into one sentence)."""
        if request.get("op") == "hello":
            return self.hello()
        return answer(self.runtime, request)

    def hello(self) -> dict[str, Any]:
        return {"token": self.token, "pid": os.getpid(), "version": __version__, "protocol": PROTOCOL}

    # -- the comm --------------------------------------------------------------------------------------------
    def on_comm_open(self, comm: Any, open_msg: dict[str, Any]) -> None:
        def on_msg(msg: dict[str, Any]) -> None:
            data = msg.get("content", {}).get("data", {}) or {}
            reply = self.handle(data)
            reply["id"] = data.get("id")
            comm.send(reply)

        comm.on_msg(on_msg)
        comm.send({"id": (open_msg.get("content", {}).get("data") or {}).get("id"), **self.hello()})


def _last_source(shell: Any) -> str | None:
    try:
        raw = shell.history_manager.input_hist_raw
        return raw[-1] if raw else None
    except Exception:
        return None


def _comm_manager(shell: Any) -> Any:
    """ipykernel ≥ 6.11 manages comms through the ``comm`` package; older ones keep their own manager."""
    try:
        from comm import get_comm_manager  # optional: present with ipykernel ≥ 6.11
    except ImportError:
        return shell.kernel.comm_manager
    return get_comm_manager()


def install() -> dict[str, Any]:
    """Load the helper into this kernel (idempotent) and register the comm target; returns ``hello``.

    Evaluated by the host as a silent user expression, so it must bind nothing in the user's namespace.
    """
    global _helper
    shell = get_ipython()
    if shell is None or not hasattr(shell, "user_ns"):
        raise NotIPython("This kernel is not an IPython kernel.")
    if _helper is None or _helper.shell is not shell:
        _helper = KernelHelper(shell)
        _comm_manager(shell).register_target(COMM_TARGET, _helper.on_comm_open)
    return _helper.hello()
