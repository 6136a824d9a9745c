"""One outside call over the session: through the gate, bounded, masked, audited, counted and shown.

``LocalBackend`` is what a face ultimately talks to — in the session's own process behind the endpoint, or
in ``pyaichat mcp --existing`` over a kernel. Every call goes through the runtime's ``call``, the same path as
the built-in assistant's tool calls, so the same masking, output bounds, deadlines and privacy level apply;
the audit entry's origin names the client and the transport (``mcp claude-code via stdio``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .clients import ClientBook, ClientRecord, safe_text
from .gate import SessionBusy, SessionGate
from .rate import RateBound
from .tools import PICTURE, PROPOSE, tool_table

if TYPE_CHECKING:
    from ..runtime import Runtime

# A flood from an agent (or a loop gone wrong) is bounded: a burst of this many calls, then so many a second.
BURST = 200
PER_SECOND = 100.0
TOO_MANY = f"Too many calls: this session answers at most {PER_SECOND:g} a second. Slow down and try again."
_ARG_CHARS = 40
_MASKED_CHARS = 400


def failure(error: str, started: float | None = None) -> dict[str, Any]:
    ms = round((time.perf_counter() - started) * 1000, 3) if started is not None else 0.0
    return {"ok": False, "text": "", "error": error, "truncated": False, "duration_ms": ms, "images": []}


def read_label(name: str, args: dict[str, Any]) -> str:
    """A call as the panel names what was read: ``eval_expr(df.notes[17])``."""
    shown = ", ".join(str(v) for v in args.values())
    shown = " ".join(shown.split())
    return f"{name}({shown if len(shown) <= 60 else shown[:59] + '…'})"


class LocalBackend:
    """Outside calls over ``runtime``, one at a time, while ``gate`` says the session is idle.

    ``show(line)`` prints the quiet line of each call where the person sees it (``None``: nowhere);
    ``proposer`` takes ``propose_code`` to the person (``None``: nobody is there to decide, and the tool is
    not offered); ``where`` says in a few words what this session is (``pyaichat REPL``).
    """

    def __init__(
        self,
        runtime: Runtime,
        gate: SessionGate,
        *,
        show: Callable[[str], None] | None = None,
        proposer: Any = None,
        where: str = "pyaichat",
        busy_wait: Callable[[], float] | None = None,
    ) -> None:
        self.runtime = runtime
        self.gate = gate
        self.show = show
        self.proposer = proposer
        self.where = where
        self.clients = ClientBook()
        self.rate = RateBound(BURST, PER_SECOND)
        self._busy_wait = busy_wait or (lambda: float(getattr(runtime.config, "mcp_serve_busy_wait", 15.0)))
        self._tools: list[dict[str, Any]] | None = None
        # Every use of the runtime from the serving threads holds this: calls are one at a time already (the
        # gate), but the tool table is asked for by whichever face connects first.
        self._runtime_lock = threading.Lock()

    # -- what the faces ask ----------------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        if self._tools is None:
            with self._runtime_lock:  # a kernel's connection serves one request at a time
                if self._tools is None:
                    self._tools = tool_table(self.runtime, proposals=self.proposer is not None)
        return self._tools

    def info(self) -> dict[str, Any]:
        """Who this session is, for the faces and for an agent choosing among sessions."""
        return {
            "pid": os.getpid(),
            "cwd": os.getcwd(),
            "where": self.where,
            "python": sys.version.split()[0],
        }

    def call(self, name: str, args: Any, client: ClientRecord) -> dict[str, Any]:
        """Run tool ``name`` for ``client``; always a result dict (``ok``, ``text``, ``error``, ``truncated``,
        ``duration_ms``, ``images``), never an exception."""
        started = time.perf_counter()
        if not isinstance(name, str) or name not in {tool["name"] for tool in self.tools()}:
            known = ", ".join(tool["name"] for tool in self.tools())
            return self._done(
                client, name, args, failure(f"There is no tool named {name!r}. Known: {known}.")
            )
        if args is not None and not isinstance(args, Mapping):
            return self._done(client, name, args, failure(f"Arguments for {name} must be a JSON object."))
        if name == PROPOSE:  # offered only with a proposer; it waits for the person's prompt, not the gate
            result = self.proposer.propose(dict(args or {}), client)
            self.clients.counted(client, bool(result.get("ok")))
            return result
        if not self.rate.take():
            return self._done(client, name, args, failure(TOO_MANY, started))
        try:
            with self.gate.outside(self._busy_wait()), self._runtime_lock:
                result = self._run(name, dict(args or {}), client)
                client.reads.saw(read_label(name, dict(args or {})), str(result.get("text") or ""))
                return self._done(client, name, args, result, shown=True)
        except SessionBusy as exc:  # no line: the person's own input is running and printing now
            return self._done(client, name, args, failure(str(exc), started))

    def _run(self, name: str, args: dict[str, Any], client: ClientRecord) -> dict[str, Any]:
        """One capability call (or the picture) for ``client``, as a result dict."""
        origin = f"mcp {client.name} via {client.transport}"
        if name == PICTURE:
            return self.picture(origin)
        result = self.runtime.call(name, args, origin=origin, images=True)
        return {
            "ok": result.ok,
            "text": result.text,
            "error": result.error,
            "truncated": result.truncated,
            "duration_ms": result.duration_ms,
            "images": list(result.images),
        }

    def picture(self, origin: str) -> dict[str, Any]:
        """The session picture the built-in assistant starts from, with a line on where it lives and what an
        agent may do; masked and audited like any call. It leaves the assistant's own state alone (which error
        its next picture calls new)."""
        from ..capabilities.redact import masker_for  # with the first call, in the serving process
        from ..capabilities.registry import CapabilityResult, cap_text, record_call

        started = time.perf_counter()
        config = self.runtime.config
        masker = masker_for(config)
        session = getattr(self.runtime, "session", None)
        try:
            if session is not None:
                from ..capabilities.picture import session_picture

                body = session_picture(session, config)
            else:
                body = self.runtime.picture()
        except Exception as exc:  # a picture that fails is one sentence, never a broken call
            body = f"(The session picture failed: {type(exc).__name__}.)"
        info = self.info()
        head = (
            f"{info['where']} · pid {info['pid']} · {info['cwd']} · Python {info['python']} · privacy "
            f"level {config.privacy}.\nEvery tool here only reads (bounded, secrets masked); "
            + (
                "propose_code asks the person, who runs, edits or declines it."
                if self.proposer is not None
                else "nothing here can change the session."
            )
        )
        text, cut = cap_text(masker.mask_text(f"{head}\n\n{body}"), max(config.max_output_chars, 4000))
        ms = round((time.perf_counter() - started) * 1000, 3)
        result = CapabilityResult(name=PICTURE, ok=True, text=text, truncated=cut, duration_ms=ms)
        if config.audit:
            record_call(session if session is not None else self.runtime, masker, PICTURE, {}, result, origin)
        return {"ok": True, "text": text, "error": None, "truncated": cut, "duration_ms": ms, "images": []}

    # -- bookkeeping -----------------------------------------------------------------------------------------
    def _done(
        self, client: ClientRecord, name: Any, args: Any, result: dict[str, Any], *, shown: bool = False
    ) -> dict[str, Any]:
        self.clients.counted(client, bool(result.get("ok")))
        if shown and self.show is not None:
            try:
                from ..capabilities.redact import masker_for  # loaded by the call already

                mask = masker_for(self.runtime.config).mask_text
                self.show(quiet_line(client, name, args, result, mask))
            except Exception:
                pass  # a line that cannot be shown never fails the call
        return result


def quiet_line(
    client: ClientRecord,
    name: Any,
    args: Any,
    result: dict[str, Any],
    mask: Callable[[str], str] | None = None,
) -> str:
    """``⇄ claude-code get_repr(df) 4 ms`` — what the person sees of one outside call. What the agent sent is
    masked (``mask``: the session's own rules) before it is cut to fit, so no secret shows half."""
    shown = ""
    if isinstance(args, Mapping) and args:
        first = next(iter(args.values()))
        if first is not None:
            try:
                if mask is None:
                    from ..capabilities.redact import mask
                # the head of it: a credential that starts within the line ends within these characters
                shown = safe_text(mask(safe_text(first, _MASKED_CHARS)), _ARG_CHARS)
            except Exception:
                shown = "…"
    ms = float(result.get("duration_ms") or 0.0)
    timing = f"{ms:.0f} ms" if ms >= 1 else f"{ms:.1f} ms"
    line = f"⇄ {client.name} {safe_text(name, 40)}({shown}) {timing}"
    if not result.get("ok"):
        line += " · " + safe_text(result.get("error") or "failed", 60)
    return line
