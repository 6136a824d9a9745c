"""The session's threads and helper processes across a jump: what the process being left lets go of, and
what a session resumed from a copy starts again.

A copy has only the thread that forked it. In a session forked from that copy, the objects of every other
thread's work are still in memory — the resume file's writer, the suggestion engine and its helper, the MCP
client's servers and event loop, the model client's open connections, the MCP serving endpoint and its face
process, litellm half loaded — but their threads, locks and processes belong to the process that was forked.
``revive`` has each part let go of them (kept in ``KEPT``, so no finalizer of another process's object runs
here: closing an event loop would unregister the other process's descriptors from the epoll instance they
share) and start afresh when next needed.

Serving to outside agents moves with the person (``quiesce``, ``serve_on``): the process being left stops
(its proposals are withdrawn: those agents are told), and the resumed one serves at the same address with
the same token, so an agent keeps its configuration; each agent's next answer says the session went back.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..mcpserve.service import McpService
    from .carry import Parts

KEPT: list[Any] = []  # objects of the process a session was forked from: never finalized here
PORT_WAIT = 3.0  # seconds to wait for the port a crashed session's face still holds


def serving(ctrl: Parts) -> dict[str, Any] | None:
    """Where the session serves over MCP (host, port, token), ``None`` when it does not."""
    service = _service(ctrl)
    return service.handover() if service is not None else None


def quiesce(ctrl: Parts) -> dict[str, Any] | None:
    """The process being left (a jump, a redo): stop serving, write the resume file; returns where it served,
    for the resumed session."""
    handover = serving(ctrl)
    service = _service(ctrl)
    if handover is not None and service is not None:
        try:
            service.stop()
        except Exception:
            pass
    try:
        ctrl.resume_file.flush()
    except Exception:
        pass
    return handover


def serve_on(ctrl: Parts, handover: dict[str, Any] | None, note: str | None) -> None:
    """Serve as ``handover`` says (the same host, port and token); ``note`` is told to each agent with its
    next answer. The port may still be held by a crashed session's face for a moment: then a new one, said."""
    if not handover:
        return
    service = _service(ctrl, create=True)
    if service is None:
        return
    deadline = time.monotonic() + PORT_WAIT
    while True:
        try:
            service.start(
                handover.get("host"), token=handover.get("token"), port=int(handover.get("port") or 0)
            )
            break
        except (RuntimeError, OSError) as exc:
            if "Cannot listen" not in str(exc) or time.monotonic() > deadline:
                try:
                    text = service.start(handover.get("host"), token=handover.get("token"))
                except (RuntimeError, OSError) as again:
                    ctrl.notice(f"Serving over MCP stopped: {again}", "warning")
                    return
                ctrl.notice(f"Serving over MCP moved: {text}", "warning")
                break
            time.sleep(0.1)
    if service.backend is not None:
        service.backend.note = note


def leave() -> None:
    """The process being left ends here (where the person was is held by another): nothing of it is needed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)


def revive(ctrl: Parts) -> None:
    """In a session forked from a copy (see the module's docstring)."""
    drop_half_imported()
    ctrl.resume_file.after_fork()
    ctrl.proposals.after_fork()
    gate = getattr(ctrl, "gate", None)
    if gate is not None:
        gate.after_fork()
    background = sys.modules.get("pyaichat.background")
    if background is not None:
        KEPT.append(background.forget_after_fork())
    suggester = ctrl.suggester_if_any
    if suggester is not None:
        KEPT.append(suggester)
        ctrl._suggester = None  # type: ignore[attr-defined]  # the controller's own: made again when needed
    assistant = ctrl.assistant
    KEPT.append((assistant._llm, assistant._servers))
    assistant._llm = assistant._llm_key = assistant._servers = None
    loader = sys.modules.get("pyaichat.agent.llm.loader")
    if loader is not None:
        loader.LITELLM.after_fork()
    if "litellm" in sys.modules:
        from ..agent.llm.client import forget_connections  # litellm is loaded: so is its client

        KEPT.append(forget_connections())
    service = _service(ctrl)
    if service is not None:
        service.forget()


def in_copy(ctrl: Parts) -> None:
    """In a new copy, right after ``fork``: let go of the serving endpoint's sockets (the faces and bridges
    connected to it must see the live session close them). The pipes shared with helper processes are let go
    of by ``copy`` itself."""
    service = _service(ctrl)
    endpoint = getattr(service, "endpoint", None)
    if endpoint is not None:
        from .copy import let_go

        for fd in endpoint.descriptors():
            let_go(fd)


def own_fds(ctrl: Parts) -> set[int]:
    """Descriptors pyaichat's own threads hold for serving (the endpoint and its connections)."""
    endpoint = getattr(_service(ctrl), "endpoint", None)
    return set(endpoint.descriptors()) if endpoint is not None else set()


def drop_half_imported() -> None:
    """Modules another thread was importing when the copy was taken are half made, and their import locks
    held by a thread that is not here: drop both, as a failed import would, so the next import starts over."""
    try:
        import importlib._bootstrap as bootstrap
    except ImportError:
        return
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if spec is not None and getattr(spec, "_initializing", False):
            sys.modules.pop(name, None)
    for table in ("_module_locks", "_blocking_on"):
        found = getattr(bootstrap, table, None)
        if isinstance(found, dict):
            KEPT.append(dict(found))
            found.clear()


def _service(ctrl: Parts, *, create: bool = False) -> McpService | None:
    """The session's MCP service (the local REPL's is an ``McpService``); ``None`` while it never served."""
    return cast("McpService | None", ctrl.mcp(create=create))
