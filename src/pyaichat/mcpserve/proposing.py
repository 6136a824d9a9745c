"""``propose_code`` from an outside agent: on the session's one proposal path, answered by the person.

The proposal goes to ``controller.proposals`` (``proposals.Proposals.submit``), the very path the built-in
assistant's proposals take: the same panel (naming the client), the preview of its effects computed on a
walled copy, the run / edit / no choice, the checkpoint for ``/undo``, the journal for ``/save``. It never
interrupts a line being typed: the prompt shows it when the line is empty, and the toolbar says one waits.

This call waits meanwhile — on the endpoint's thread of this face's connection, never on the person's — up
to the agent's ``wait_seconds``, capped by the person's ``mcp_serve_proposal_wait``; the face sends the agent
progress notifications as it waits. It returns what happened, masked like any result: declined; edited and
run (with the code that ran); run, with its output and the preview's summary of what changed; or not run
because no one answered in time (then the panel closes and nothing of it can run any more).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .backend import failure

if TYPE_CHECKING:
    from ..config import Config
    from ..proposals import Outcome, Pending, Proposals
    from .clients import ClientRecord

NO_CODE = "propose_code needs code: the Python to run in the person's session, as they would type it."
MAX_CODE = 20_000  # characters of proposed code (a person reads it before it runs)
READS_WITHIN = 600.0  # seconds: what a client read this long before proposing is named on the panel
STOPPED = "The person stopped serving this session (/mcp off) before answering; the code did not run."


class Proposer:
    """Takes outside agents' proposals to the person (one per session that can ask them)."""

    def __init__(self, proposals: Proposals, config: Callable[[], Config], session: Any) -> None:
        self.proposals = proposals
        self._config = config
        self._session = session  # whose audit log the proposals go into
        self._pending: set[Pending] = set()
        self._stopped: set[Pending] = set()  # withdrawn by /mcp off, not by the wait running out
        self._lock = threading.Lock()

    def propose(self, args: dict[str, Any], client: ClientRecord) -> dict[str, Any]:
        from ..proposals import Proposal  # the proposal path (loaded with the controller)

        started = time.perf_counter()
        code, explanation = args.get("code"), args.get("explanation") or ""
        unknown = sorted(set(args) - {"code", "explanation", "wait_seconds"})
        if unknown:
            return self._done(client, args, failure(f"propose_code takes no {', '.join(unknown)}.", started))
        if not isinstance(code, str) or not code.strip():
            return self._done(client, args, failure(NO_CODE, started))
        if len(code) > MAX_CODE or not isinstance(explanation, str):
            return self._done(
                client, args, failure(f"Proposed code is kept under {MAX_CODE:,} characters.", started)
            )
        wait = self._wait(args.get("wait_seconds"))
        # what this client read in the last minutes that looked like an instruction: the panel says so
        provenance = client.reads.line(within=READS_WITHIN)
        pending = self.proposals.submit(
            Proposal.of_code(code, explanation, source=client.name, provenance=provenance)
        )
        with self._lock:
            self._pending.add(pending)
        try:
            outcome = pending.wait(wait)
        finally:
            with self._lock:
                self._pending.discard(pending)
                stopped = pending in self._stopped
                self._stopped.discard(pending)
        return self._done(client, args, self._result(outcome, wait, started, stopped=stopped))

    def withdraw_all(self) -> int:
        """Serving stops: proposals no one has answered yet are withdrawn at once (their callers are told that
        the person stopped serving); one already approved finishes its run first. Call from the person's
        thread (``/mcp off``); returns how many were withdrawn."""
        with self._lock:
            pending = list(self._pending)
        withdrawn = 0
        for waiting in pending:
            if waiting.state in ("queued", "placed"):  # not answered yet
                with self._lock:
                    self._stopped.add(waiting)
                # the person stopped serving themselves: no notice that "no one answered"
                if waiting.withdraw(notice="").status == "unanswered":
                    withdrawn += 1
        return withdrawn

    # -- internals -------------------------------------------------------------------------------------------
    def _wait(self, asked: Any) -> float:
        bound = float(getattr(self._config(), "mcp_serve_proposal_wait", 300.0))
        if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > 0:
            return min(float(asked), bound)
        return bound

    def _result(self, outcome: Outcome, wait: float, started: float, *, stopped: bool) -> dict[str, Any]:
        from ..capabilities.redact import masker_for  # what leaves is masked, as any result

        masker = masker_for(self._config())
        status = outcome.status
        if status == "unanswered" and stopped:
            text = STOPPED
        elif status == "unanswered":
            text = f"No one answered within {wait:g} s, so the proposal was withdrawn; the code did not run."
        else:
            text = outcome.observation
            if status in ("ran", "edited") and outcome.preview.strip():
                shown = (
                    "What the preview showed the person it would change:"
                    if status == "ran"
                    else "What the preview of your code (before the person's edit) showed it would change:"
                )
                text += f"\n{shown}\n" + outcome.preview.strip()
        ok = status in ("ran", "edited", "declined") and not outcome.error
        text = masker.mask_text(text)
        result = {
            "ok": ok,
            "text": text if ok else "",
            "error": None if ok else text,
            "truncated": False,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "images": [],
            "status": status,
        }
        return result

    def _done(self, client: ClientRecord, args: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """Audited like every call (the code masked), counted for ``/mcp status``."""
        from ..capabilities.redact import masker_for
        from ..capabilities.registry import CapabilityResult, record_call

        config = self._config()
        if config.audit:
            shown = CapabilityResult(
                name="propose_code",
                ok=bool(result["ok"]),
                text=result.get("text") or "",
                error=result.get("error"),
                duration_ms=float(result.get("duration_ms") or 0.0),
            )
            origin = f"mcp {client.name} via {client.transport}"
            record_call(self._session, masker_for(config), "propose_code", args, shown, origin)
        return result
