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

if TYPE_CHECKING:
    from ..capabilities.catalog import CapabilityResult
    from ..configuration.config import Config
    from ..proposals import Outcome, Pending, Proposals
    from .clients import ClientRecord
    from .departure import Departure

NO_CODE = "propose_code needs code: the Python to run in the person's session, as they would type it."
MAX_CODE = 20_000  # characters of proposed code (a person reads it before it runs)
READS_WITHIN = 600.0  # seconds: what a client read this long before proposing is named on the panel
PROPOSE = "propose_code"
STOPPED = "The person stopped serving this session (/mcp off) before answering; the code did not run."
CANCELLED = "Cancelled before the person answered, so the proposal was withdrawn; the code did not run."


class Proposer:
    """Takes outside agents' proposals to the person (one per session that can ask them)."""

    def __init__(self, proposals: Proposals, settings: Callable[[], Config], audited_as: Any) -> None:
        self.proposals = proposals
        self._settings = settings
        self._audited_as = audited_as  # the session the audit log files the proposals under
        self._pending: set[Pending] = set()
        self._stopped: set[Pending] = set()  # withdrawn by /mcp off, not by the wait running out
        self._cancelled: set[Pending] = set()  # withdrawn because the caller cancelled it or went away
        self._lock = threading.Lock()

    def propose(
        self, args: dict[str, Any], client: ClientRecord, left: Departure | None = None
    ) -> CapabilityResult:
        from ..proposals import Proposal  # the proposal path (loaded with the controller)

        started = time.perf_counter()
        code, explanation = args.get("code"), args.get("explanation") or ""
        unknown = sorted(set(args) - {"code", "explanation", "wait_seconds"})
        if unknown:
            return self._done(client, args, started, f"propose_code takes no {', '.join(unknown)}.")
        if not isinstance(code, str) or not code.strip():
            return self._done(client, args, started, NO_CODE)
        if len(code) > MAX_CODE or not isinstance(explanation, str):
            return self._done(client, args, started, f"Proposed code is kept under {MAX_CODE:,} characters.")
        wait = self._wait(args.get("wait_seconds"))
        # what this client read in the last minutes that looked like an instruction: the panel says so
        provenance = client.reads.line(within=READS_WITHIN)
        pending = self.proposals.submit(
            Proposal.of_code(code, explanation, source=client.name, provenance=provenance)
        )
        with self._lock:
            self._pending.add(pending)
        if left is not None:  # its caller cancelled or went away: withdrawn, and its code leaves the input
            left.on_leave(lambda: self._withdraw_cancelled(pending, client.name))
        try:
            outcome = pending.wait(wait)
        finally:
            with self._lock:
                self._pending.discard(pending)
                stopped = pending in self._stopped
                cancelled = pending in self._cancelled
                self._stopped.discard(pending)
                self._cancelled.discard(pending)
        ok, text = self._told(outcome, wait, stopped=stopped, cancelled=cancelled)
        return self._done(client, args, started, None if ok else text, text if ok else "")

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
    def _withdraw_cancelled(self, pending: Pending, client: str) -> None:
        """The agent cancelled its call or went away: the proposal is withdrawn from the person's panel (or
        input) with one line saying so, unless they answered it already (then it runs as they chose)."""
        with self._lock:
            self._cancelled.add(pending)
        notice = f"{client} cancelled its proposal, so it was withdrawn; nothing of it ran."
        pending.withdraw(notice=notice, take_back=True)

    def _wait(self, asked: Any) -> float:
        bound = self._settings().mcp_serve_proposal_wait
        if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > 0:
            return min(float(asked), bound)
        return bound

    @staticmethod
    def _told(outcome: Outcome, wait: float, *, stopped: bool, cancelled: bool = False) -> tuple[bool, str]:
        """Whether it ran, was edited or was declined, and what the agent is told."""
        status = outcome.status
        if status == "unanswered" and stopped:
            return False, STOPPED
        if status == "unanswered" and cancelled:  # no one reads it: it is for the audit
            return False, CANCELLED
        if status == "unanswered":
            return (
                False,
                f"No one answered within {wait:g} s, so the proposal was withdrawn; the code did not run.",
            )
        text = outcome.observation
        if status in ("ran", "edited") and outcome.preview.strip():
            shown = (
                "What the preview showed the person it would change:"
                if status == "ran"
                else "What the preview of your code (before the person's edit) showed it would change:"
            )
            text += f"\n{shown}\n" + outcome.preview.strip()
        return status in ("ran", "edited", "declined") and not outcome.error, text

    def _done(
        self, client: ClientRecord, args: dict[str, Any], started: float, error: str | None, text: str = ""
    ) -> CapabilityResult:
        """Out through the capabilities' one door: masked, bounded, audited like every call."""
        from ..capabilities.invoke import finish  # loaded by the proposal's preview already

        origin = f"mcp {client.name} via {client.transport}"
        ok = error is None
        settings = self._settings()
        return finish(self._audited_as, settings, PROPOSE, args, origin, started, ok, text, error)
