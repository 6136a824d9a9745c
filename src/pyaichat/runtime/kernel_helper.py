"""The helper pyaichat loads *inside* a Jupyter kernel: the kernel runtime's far end.

The host (``connection.KernelConnection``) loads it with one silent ``user_expressions`` evaluation — no
execution count, no history entry, no name bound in ``user_ns`` — and then talks to it over a comm (target
``pyaichat``). Its state lives in this module (in ``sys.modules``), so ``%who``, ``dir()`` and ``In``/``Out``
never see it.

Every request runs what the local runtime runs — ``capabilities.call`` and ``capabilities.digest`` over a
``Session`` whose namespace *is* the kernel's ``user_ns`` (the same dict) — so bounds, privacy levels, masking
and the read-only guarantee are applied here, before anything leaves the kernel, and ``run_python`` forks on
the kernel's machine. IPython's cell events feed the session's history and last error, exactly as in the
IPython extension (``cells.CellRecorder``).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from IPython import get_ipython

from ..config import Config
from ..errors import PyAIChatError
from ..session import Session
from ..version import __version__
from . import COMM_TARGET, PROTOCOL
from .cells import CellRecorder, record_error

if TYPE_CHECKING:
    from ..persist.undo import Checkpoint

_helper: KernelHelper | None = None
_WORK = ("preview", "checkpoint", "finish", "undo", "save_variables", "load_variables")


class NotIPython(RuntimeError):
    """The kernel is not an IPython kernel: there is no ``user_ns`` to look at."""


class KernelHelper:
    """One per kernel process: the session over ``user_ns`` and the handlers of the host's requests."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.token = uuid.uuid4().hex  # tells the host whether the kernel it talks to is still the same one
        self.session = Session(namespace=shell.user_ns)
        self.recorder = CellRecorder(self.session)
        self.recorder.backfill(shell)
        last = getattr(sys, "last_value", None)
        if isinstance(last, BaseException) and not isinstance(last, KeyboardInterrupt):
            # an error raised before pyaichat attached is still "the last error"
            record_error(self.session, last, _last_source(shell))
        shell.events.register("pre_run_cell", self.recorder.pre_run_cell)
        shell.events.register("post_run_cell", self.recorder.post_run_cell)
        self._configs: dict[str, Config] = {}
        self._reported_error: object = None  # the last error the previous digest told about
        self._undo: Checkpoint | None = None  # the last approved proposal's, for /undo

    # -- requests --------------------------------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request from the host; never raises (the host turns ``error`` into one sentence)."""
        op = request.get("op")
        try:
            if op == "call":
                return self._call(request)
            if op == "digest":
                return {"text": self._digest(request)}
            if op == "names":
                return {"names": self._names()}
            if op == "history":
                return {"history": self._history(int(request.get("count", 20)))}
            if op == "hello":
                return self.hello()
            if op in _WORK:
                return self._work(op, request)
            return {"error": f"pyaichat's kernel helper does not know the request {op!r}."}
        except PyAIChatError as exc:  # a refusal for the user (a foreign snapshot, a full disk): one sentence
            return {"error": str(exc)}
        except Exception as exc:  # a bug here must not break the kernel's shell loop
            return {"error": f"pyaichat's kernel helper failed: {type(exc).__name__}: {exc}"}

    def hello(self) -> dict[str, Any]:
        return {"token": self.token, "pid": os.getpid(), "version": __version__, "protocol": PROTOCOL}

    def _config(self, settings: dict[str, Any]) -> Config:
        """A ``Config`` for the host's capability settings (cached: the host sends the same ones every time).
        Auditing happens on the host, which knows who asked."""
        key = json.dumps(settings, sort_keys=True, default=str)
        config = self._configs.get(key)
        if config is None:
            config = Config(**settings, audit=False)
            if len(self._configs) > 8:
                self._configs.clear()
            self._configs[key] = config
        return config

    # The capabilities (pydantic and all) load with the first request, not while the host waits to attach.
    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from ..capabilities import call  # first request

        config = self._config(request.get("settings") or {})
        result = call(
            self.session,
            str(request.get("name")),
            request.get("args") or {},
            config=config,
            images=bool(request.get("images")),
        )
        return {"result": result.model_dump()}

    def _digest(self, request: dict[str, Any]) -> str:
        from ..capabilities.digest import session_digest  # first request

        config = self._config(request.get("settings") or {})
        text = session_digest(self.session, config, seen_error=self._reported_error)
        self._reported_error = self.session.last_error
        return text

    def _names(self) -> list[list[str]]:
        from ..capabilities.introspect import user_names  # first request
        from ..capabilities.summary import type_name  # first request

        ns = self.session.namespace
        return [[name, type_name(ns.get(name))] for name in user_names(ns)][:5000]

    def _history(self, count: int) -> list[dict[str, Any]]:
        entries = self.session.history[-count:] if count > 0 else []
        return [asdict(e) for e in entries]

    # -- proposals and the work that lasts, run here where the data is -------------------------------------
    # Each loads its module with its first request: the host attaches without waiting for them.
    def _work(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        namespace = self.session.namespace
        config = self._config(request.get("settings") or {})
        if op == "preview":
            from ..capabilities.sandbox import preview_code  # first proposal

            code = str(request.get("code") or "")
            return {"preview": preview_code(config, namespace, code, self._transform).to_dict()}
        if op == "checkpoint":
            from ..persist.undo import checkpoint  # first approved proposal

            self._undo = None  # the previous proposal's old objects are released now
            self._undo = checkpoint(namespace, str(request.get("code") or ""))
            return {}
        if op == "finish":
            from ..persist.undo import finish  # first approved proposal

            if self._undo is not None and self._undo.changes is None:
                finish(namespace, self._undo)
            return {}
        if op == "undo":
            from ..persist.undo import undo  # first /undo

            if self._undo is None:
                return {"ok": False, "text": "Nothing to undo: no approved proposal has run in this kernel."}
            done = undo(namespace, self._undo)
            return {"ok": done.ok, "text": done.text}
        path = request.get("path") or None
        if op == "save_variables":
            from ..persist.snapshot import save_snapshot  # first /snapshot

            secrets = bool(request.get("include_secrets"))
            return {"text": save_snapshot(namespace, path, config=config, include_secrets=secrets).text()}
        from ..persist.snapshot import load_snapshot  # op == "load_variables"

        return {"text": load_snapshot(path, namespace).text()}

    def _transform(self, source: str) -> str:
        """Proposed code as IPython would run it (magics become calls)."""
        return str(self.shell.transform_cell(source))

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
