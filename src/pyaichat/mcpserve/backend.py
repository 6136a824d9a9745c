"""One outside call over the session: through the gate, bounded, masked, audited, counted and shown.

``LocalBackend`` is what a face ultimately talks to — in the session's own process behind the endpoint, or
in ``pyaichat mcp --existing`` over a kernel. Every call goes through the runtime's ``call``, the same door as
the built-in assistant's tool calls (the session picture included: ``get_session_picture`` is a capability),
so the same masking, output bounds, deadlines, privacy level and audit apply, and every answer is a
``CapabilityResult``; the audit entry's origin names the client and the transport (``mcp claude-code via
stdio``). ``propose_code`` waits for the person (``proposing``) and leaves by the same door.
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
    from ..capabilities.catalog import CapabilityResult
    from ..runtime import Runtime
    from .departure import Departure
    from .proposing import Proposer

# A flood from an agent (or a loop gone wrong) is bounded: a burst of this many calls, then so many a second.
BURST = 200
PER_SECOND = 100.0
TOO_MANY = f"Too many calls: this session answers at most {PER_SECOND:g} a second. Slow down and try again."
_ARG_CHARS = 40
_MASKED_CHARS = 400


STOPPED = "The person stopped serving this session (/mcp off); the call did not run."


def read_label(name: str, args: dict[str, Any]) -> str:
    """A call as the panel names what was read: ``eval_expr(df.notes[17])``."""
    shown = ", ".join(str(v) for v in args.values())
    shown = " ".join(shown.split())
    return f"{name}({shown if len(shown) <= 60 else shown[:59] + '…'})"


class LocalBackend:
    """Outside calls over ``runtime``, one at a time, while ``gate`` says the session is idle.

    ``show(line)`` prints the quiet line of each call where the person sees it (``None``: nowhere);
    ``proposer`` takes ``propose_code`` to the person (``None``: nobody is there to decide, and the tool is
    not offered); ``where`` says in a few words what this session is (``pyaichat REPL``); ``busy_wait``
    says how long a call waits while the person's input runs (``mcp_serve_busy_wait``, read at each call).
    """

    def __init__(
        self,
        runtime: Runtime,
        gate: SessionGate,
        *,
        show: Callable[[str], None] | None = None,
        proposer: Proposer | None = None,
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
        self._busy_wait = busy_wait or (lambda: runtime.config.mcp_serve_busy_wait)
        self._tools: list[dict[str, Any]] | None = None
        # Every use of the runtime from the serving threads holds this: calls are one at a time already (the
        # gate), but the tool table is asked for by whichever face connects first.
        self._runtime_lock = threading.Lock()
        self.stopped = False
        # told with each client's next answer, once: the session went back to a checkpoint (``checkpoints``)
        self.note: str | None = None
        self._noted: set[int] = set()

    def stop(self) -> None:
        """Serving stops: no call runs from now on, not even one already waiting for the gate."""
        self.stopped = True

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

    def call(
        self, name: object, args: Any, client: ClientRecord, left: Departure | None = None
    ) -> CapabilityResult:
        """Run tool ``name`` for ``client``: always a result (a refusal is ``ok=False`` with one sentence),
        never an exception. ``left`` says when the caller has gone (a proposal waiting for the person is then
        withdrawn)."""
        started = time.perf_counter()
        if self.stopped:
            return self._done(client, name, args, refusal(str(name), STOPPED, started))
        if not isinstance(name, str) or name not in {tool["name"] for tool in self.tools()}:
            known = ", ".join(tool["name"] for tool in self.tools())
            error = f"There is no tool named {name!r}. Known: {known}."
            return self._done(client, name, args, refusal(str(name), error, started))
        if args is not None and not isinstance(args, Mapping):
            error = f"Arguments for {name} must be a JSON object."
            return self._done(client, name, args, refusal(name, error, started))
        if not self.rate.take():  # every call, propose_code too: a flood of proposals is refused here
            return self._done(client, name, args, refusal(name, TOO_MANY, started), refused=True)
        if name == PROPOSE and self.proposer is not None:  # it waits for the person's prompt, not the gate
            result = self.proposer.propose(dict(args or {}), client, left=left)
            self.clients.counted(client, result.ok)
            return result
        try:
            with self.gate.outside(self._busy_wait()), self._runtime_lock:
                if self.stopped:  # it waited while the person's /mcp off ran
                    return self._done(client, name, args, refusal(name, STOPPED, started))
                origin = f"mcp {client.name} via {client.transport}"
                result = self.runtime.call(name, dict(args or {}), origin=origin, images=True)
                if name == PICTURE:
                    result = self._introduced(result)
                # what it read that looks like an instruction is named on its proposals' panels
                client.reads.saw(read_label(name, dict(args or {})), result.text or result.error or "")
                return self._done(client, name, args, self._noted_once(client, result), shown=True)
        except SessionBusy as exc:  # one quiet line: the person sees an agent was turned away
            return self._done(client, name, args, refusal(name, str(exc), started), refused=True)

    def _noted_once(self, client: ClientRecord, result: CapabilityResult) -> CapabilityResult:
        """``result`` with ``note`` before its text: the first answer each client gets after it was set."""
        note = self.note
        if note is None or not result.ok or id(client) in self._noted:
            return result
        self._noted.add(id(client))
        return result.model_copy(update={"text": f"({note})\n{result.text}"})

    def refused_at_door(self, key: str | None, count: int) -> None:
        """Requests came without the serving token after the client ``key`` was served (``guard``): a quiet
        line naming it as its calls are named — it lost its token, or someone else holds its session."""
        record = self.clients.find(key) if key is not None else None
        who = record.name if record is not None else "an HTTP client"
        what = "a request" if count <= 1 else f"{count} requests"
        self._say_refusal(f"⇄ {who} refused · {what} without the serving token after it was served")

    def _say_refusal(self, line: str) -> None:
        """A refusal's quiet line (``QuietLines.refusal`` shows it even when calls are kept quiet)."""
        if self.show is None:
            return
        refuse = getattr(self.show, "refusal", self.show)
        try:
            refuse(line)
        except Exception:
            pass  # a line that cannot be shown never fails the call

    def _introduced(self, picture: CapabilityResult) -> CapabilityResult:
        """The picture, introduced in this server's own words: what serves the session, and what an agent may
        do here (the picture itself came through the one door: bounded, masked, audited)."""
        if not picture.ok:
            return picture
        may = (
            "propose_code asks the person, who runs, edits or declines it."
            if self.proposer is not None
            else "nothing here can change the session."
        )
        head, _, rest = picture.text.partition("\n")
        text = f"{self.where} · {head}\nEvery tool here only reads (bounded, secrets masked); {may}\n{rest}"
        return picture.model_copy(update={"text": text})

    # -- bookkeeping -----------------------------------------------------------------------------------------
    def _done(
        self,
        client: ClientRecord,
        name: Any,
        args: Any,
        result: CapabilityResult,
        *,
        shown: bool = False,
        refused: bool = False,
    ) -> CapabilityResult:
        self.clients.counted(client, result.ok)
        if refused:
            self._say_refusal(refusal_line(client, name, result))
        elif shown and self.show is not None:
            try:
                from ..capabilities.redact import masker_for  # loaded by the call already

                mask = masker_for(self.runtime.config).mask_text
                call = getattr(self.show, "call", None)  # a ``lines.QuietLines`` coalesces repeats
                line = lambda: quiet_line(client, name, args, result, mask)  # noqa: E731
                if call is not None:  # made only when it is shown (not within a burst)
                    call(client.name, safe_text(name, 40), line)
                else:
                    self.show(line())
            except Exception:
                pass  # a line that cannot be shown never fails the call
        return result


def refusal(name: str, error: str, started: float | None = None) -> CapabilityResult:
    """A call refused before it ran: one sentence, nothing to mask (the sentence is ours)."""
    from ..capabilities.catalog import CapabilityResult  # pydantic: with the first call, not at /mcp on

    ms = round((time.perf_counter() - started) * 1000, 3) if started is not None else 0.0
    return CapabilityResult(name=name, ok=False, error=error, duration_ms=ms)


def to_wire(result: CapabilityResult) -> dict[str, Any]:
    """A result as the faces read it (JSON)."""
    return result.model_dump(mode="json")


def refusal_line(client: ClientRecord, name: Any, result: CapabilityResult) -> str:
    """``⇄ claude-code get_repr refused · The session is busy…`` — a call turned away, in one quiet line."""
    return f"⇄ {client.name} {safe_text(name, 40)} refused · {safe_text(result.error or 'refused', 80)}"


def quiet_line(
    client: ClientRecord,
    name: Any,
    args: Any,
    result: CapabilityResult,
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
                    from ..capabilities.redact import mask as session_mask  # loaded by the call already

                    mask = session_mask
                # the head of it: a credential that starts within the line ends within these characters
                shown = safe_text(mask(safe_text(first, _MASKED_CHARS)), _ARG_CHARS)
            except Exception:
                shown = "…"
    ms = result.duration_ms
    timing = f"{ms:.0f} ms" if ms >= 1 else f"{ms:.1f} ms"
    line = f"⇄ {client.name} {safe_text(name, 40)}({shown}) {timing}"
    if not result.ok:
        line += " · " + safe_text(result.error or "failed", 60)
    return line
