"""The proposal service: the steps of a proposal's life, on the front end's thread or submitted from another
(see the package's docstring)."""

from __future__ import annotations

import _thread
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import PyAIChatError
from ..proposal import ASSISTANT, Outcome, Proposal, Status
from .outputs import entry_output, run_output
from .pending import Cell, Pending, Placed

if TYPE_CHECKING:
    from ..journal import Journal
    from ..ports import FrontEnd
    from ..records import ExecResult, HistoryEntry
    from ..runtime import Runtime


# -- the service -------------------------------------------------------------------------------------------
class Proposals:
    """Every proposal's life in one session (see the package's docstring for the steps and the two ways in).

    ``model()`` names the model whose proposals are journaled; ``tell(note)`` tells the assistant something
    with its next question (an ``/undo``); ``on_placed()`` runs before code is put into the next input (the
    controller switches to Python mode)."""

    def __init__(
        self,
        runtime: Runtime,
        frontend: FrontEnd,
        journal: Journal,
        *,
        model: Callable[[], str | None] = lambda: None,
        tell: Callable[[str], None] = lambda note: None,
        on_placed: Callable[[], None] = lambda: None,
    ) -> None:
        self.runtime = runtime
        self.frontend = frontend
        self.journal = journal
        self._model = model
        self._tell = tell
        self._on_placed = on_placed
        # called from another thread when the idle prompt has something new for the person: a proposal
        # queued, or one withdrawn (the toolbar changes; the person may be due a notice)
        self.on_waiting: list[Callable[[], None]] = []
        self._lock = _thread.allocate_lock()
        self._queue: list[Pending] = []
        self._placed: Placed | None = None
        self._cell: Cell | None = None
        self._notices: list[str] = []  # said on the front end's thread at the next serve()
        self._last_source = ASSISTANT  # of the last approved code (what /undo takes back)
        self._edited: tuple[Proposal, int] | None = None  # the latest proposal ran as the person edited it

    # -- on the front end's thread -----------------------------------------------------------------------
    def decide(self, proposal: Proposal) -> Outcome:
        """Show ``proposal``, preview it, ask, run what the person approves, journal it. Returns its outcome
        (``placed`` after "edit" on code). This is the ``decide`` every proposer is handed."""
        return self._decide(proposal, None)

    def serve(self) -> int:
        """Decide every proposal submitted from another thread (the front end's prompt is idle); how many."""
        self._say_notices()
        served = 0
        while True:
            with self._lock:
                if not self._queue:
                    break
                pending = self._queue.pop(0)
                pending.state = "asking"
            served += 1
            try:
                self._decide(pending.proposal, pending)
            except KeyboardInterrupt:
                pending._finish(Outcome(pending.proposal, "declined"))
                raise
            except BaseException as exc:  # the caller must not wait for ever on a proposal that broke
                error = f"pyaichat hit an internal error ({type(exc).__name__}: {exc})"
                pending._finish(Outcome(pending.proposal, "failed", error=error))
                raise
            self._say_notices()
        return served

    @property
    def waiting(self) -> int:
        """How many proposals from other threads wait for the prompt."""
        return len(self._queue)

    @property
    def needs_prompt(self) -> bool:
        """Whether an idle prompt should make way for ``serve``: proposals wait, or the person is due a notice
        about one (withdrawn: no one answered in time)."""
        return bool(self._queue or self._notices)

    # -- from any thread ---------------------------------------------------------------------------------
    def submit(self, proposal: Proposal) -> Pending:
        """Queue ``proposal`` for the person (returns at once); the front end is woken to ``serve`` it."""
        pending = Pending(proposal, self._withdraw)
        with self._lock:
            self._queue.append(pending)
        self._wake()
        return pending

    def _wake(self) -> None:
        for wake in list(self.on_waiting):
            try:
                wake()
            except Exception:  # a front end that cannot be woken serves it at its next prompt
                pass

    def close(self) -> None:
        """The session ends: proposals still waiting are withdrawn, code placed in the input is declined."""
        with self._lock:
            queued, self._queue = self._queue, []
            for pending in queued:
                pending.state = "withdrawn"
                pending._finish(Outcome(pending.proposal, "unanswered"))
        self.drop_placed()

    def after_fork(self) -> None:
        """In a session forked from a checkpoint: the proposals queued by outside agents wait in the process
        that was forked, on its threads, and are answered there; none of them is this session's. Code placed
        in the next input stays, as the person's own."""
        self._lock = _thread.allocate_lock()
        self._queue = []
        self._notices = []
        if self._placed is not None:
            self._placed.pending = None

    def _withdraw(self, pending: Pending, notice: str | None = None, take_back: bool = False) -> None:
        """No answer in time (or the caller gave up): nothing of ``pending`` may run any more (called on the
        waiting thread). The person is told ``notice`` (by default: no one answered in time; "": nothing).
        ``take_back``: code placed in the next input leaves it too, unless the person changed it."""
        with self._lock:
            state = pending.state
            if state not in ("queued", "asking", "placed"):
                return  # answered just now: its outcome comes
            pending.state = "withdrawn"
            if state == "queued":
                self._queue.remove(pending)
            if state == "placed" and self._placed is not None and self._placed.pending is pending:
                self._placed = None  # the code stays in the input, as the person's own
            if notice is None:
                source = pending.proposal.source
                notice = f"The proposal from {source} was withdrawn: no one answered in time. Nothing ran."
            if notice:
                self._notices.append(notice)
            # within the lock: whoever finds it withdrawn finds its outcome too
            pending._finish(Outcome(pending.proposal, "unanswered"))
        if state == "asking" or (state == "placed" and take_back):
            code = pending.proposal.code if state == "placed" else None
            try:
                self.frontend.withdraw(pending.proposal.call_id, code)
            except Exception:  # a front end that cannot close it closes it at the person's answer
                pass
        if state != "asking" and (state == "queued" or notice):  # the toolbar's count, a notice: wake it
            self._wake()

    def _claim(self, pending: Pending | None, state: str) -> bool:
        """Move ``pending`` on after the person's answer; False when it was withdrawn meanwhile."""
        if pending is None:
            return True
        with self._lock:
            if pending.state == "withdrawn":
                return False
            pending.state = state
        if state != "placed":
            pending._answer()
        return True

    # -- the steps ---------------------------------------------------------------------------------------
    def _decide(self, proposal: Proposal, pending: Pending | None) -> Outcome:
        if self._withdrawn(pending):
            return self._too_late(pending)
        from ..agent.events import ApprovalRequiredEvent  # with the first proposal

        self.frontend.emit(ApprovalRequiredEvent(proposal=proposal))
        preview = self._preview(proposal) if proposal.kind == "code" else ""
        decision = self.frontend.decide(proposal) if not self._withdrawn(pending) else "no"
        if decision in ("session", "project") and proposal.choices != "scopes":
            decision = "run"  # a front end offered more than it was asked: this once only
        if decision in ("run", "session", "project"):
            if not self._claim(pending, "running"):
                return self._too_late(pending)
            outcome = self._run(proposal, proposal.code, proposal.arguments, preview, edited=False)
            if decision != "run" and outcome.ran:
                outcome.scope = decision
        elif decision == "edit" and proposal.kind == "tool":
            arguments = self.frontend.edit_arguments(proposal)
            if not self._claim(pending, "running" if arguments is not None else "done"):
                return self._too_late(pending)
            if arguments is None:
                outcome = Outcome(proposal, "declined")
            else:
                outcome = self._run(proposal, "", arguments, preview, edited=True)
        elif decision == "edit":
            if not self._claim(pending, "placed"):
                return self._too_late(pending)
            self.drop_placed()  # an older one still waiting in the input is replaced, so declined
            with self._lock:
                self._placed = Placed(proposal, preview, pending)
            self._on_placed()
            self.frontend.set_next_input(proposal.code)
            return Outcome(proposal, "placed", preview=preview)
        else:
            if not self._claim(pending, "done"):
                return self._too_late(pending)
            outcome = Outcome(proposal, "not_asked" if decision == "shown" else "declined", preview=preview)
        if pending is not None:
            pending._finish(outcome)
        return outcome

    def _withdrawn(self, pending: Pending | None) -> bool:
        return pending is not None and pending.state == "withdrawn"

    def _too_late(self, pending: Pending | None) -> Outcome:
        assert pending is not None and pending.outcome is not None
        self._say_notices()
        return pending.outcome

    def _preview(self, proposal: Proposal) -> str:
        """Show what the code would do, found in a walled copy of the session (Ctrl-C skips it); the lines
        shown, as text. What the preview could not see is also put on the proposal (``Proposal.unseen``) for
        whoever proposed it; the rest of the preview is the person's."""
        from ..agent.events import PreviewEvent, StateEvent  # compiled at import: with the first proposal
        from ..capabilities.sandbox.preview import Preview  # the panel's lines; with the first proposal

        self.frontend.emit(StateEvent(state="previewing", detail="what the code would do · Ctrl-C skips"))
        try:
            found = Preview.from_dict(self.runtime.preview(proposal.code))
        except KeyboardInterrupt:
            found = Preview("skipped", reason="Preview skipped (Ctrl-C); nothing ran.")
        except PyAIChatError as exc:  # e.g. the kernel died: still offer the choice
            found = Preview("unavailable", reason=f"No preview: {exc}")
        self.frontend.emit(StateEvent(state="idle"))
        lines = found.lines() if found.status != "skipped" else [("note", found.reason or "")]
        self.frontend.emit(PreviewEvent(call_id=proposal.call_id, status=found.status, lines=lines))
        proposal.unseen = found.told(proposal.code)
        return "\n".join(text for kind, text in lines if kind not in ("unseen", "tampered"))

    def _run(
        self,
        proposal: Proposal,
        code: str,
        arguments: dict[str, Any],
        preview: str,
        *,
        edited: bool,
    ) -> Outcome:
        """Run what the person approved: code as their input (checkpointed for ``/undo``, journaled for
        ``/save``), a tool call through its ``call``."""
        status: Status = "edited" if edited else "ran"
        if proposal.kind == "tool":
            assert proposal.call is not None
            try:  # Ctrl-C stops it and the answer, as for any tool call
                text = proposal.call(dict(arguments))
            except Exception as exc:
                return Outcome(proposal, "failed", arguments=arguments, error=f"{type(exc).__name__}: {exc}")
            return Outcome(proposal, status, arguments=arguments, output=str(text), preview=preview)
        try:
            result = self.runtime.run_proposal(code)
        except PyAIChatError as exc:  # e.g. the kernel died: the code did not run
            from ..agent.events import ErrorEvent  # compiled at import: with the first proposal

            self.frontend.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return Outcome(proposal, "failed", code=code, preview=preview, error=str(exc))
        self._approved(proposal, code, result.number)
        output, error = run_output(result)
        return Outcome(
            proposal,
            status,
            code=code,
            output=output,
            preview=preview,
            error=error,
            input_number=result.number,
            result=result,
        )

    def _approved(self, proposal: Proposal, code: str, number: int | None) -> None:
        model = self._model() if not proposal.outside else None
        self.journal.approve(code, model, number, proposal.explanation, proposed_by=proposal.source)
        self._last_source = proposal.source
        self._edited = None

    def _say_notices(self) -> None:
        with self._lock:
            notices, self._notices = self._notices, []
        if notices:
            from ..agent.events import NoticeEvent  # compiled at import: there was a proposal

            for text in notices:
                self.frontend.emit(NoticeEvent(text=text, level="warning"))

    # -- the next input settles a placed proposal ---------------------------------------------------------
    @property
    def placed(self) -> Proposal | None:
        """The proposal waiting in the person's next input, if any."""
        placed = self._placed
        return placed.proposal if placed is not None else None

    def _take_placed(self) -> Placed | None:
        with self._lock:
            placed, self._placed = self._placed, None
            if placed is not None and placed.pending is not None:
                if placed.pending.state == "withdrawn":
                    return None
                placed.pending.state = "running"
                placed.pending._answer()
        return placed

    def run_input(self, source: str) -> ExecResult | None:
        """Run the person's Python input. If a proposal was placed in it, this settles it: run unchanged it is
        approved (checkpointed, journaled), changed it is their own input with the code that ran. Raises
        ``PyAIChatError`` as ``Runtime.run`` does; ``None``: approved code could not run (an error event said
        why)."""
        placed = self._take_placed()
        if placed is None:
            return self.runtime.run(source)
        proposal = placed.proposal
        if source.strip() == proposal.code.strip():
            outcome = self._run(proposal, source, {}, placed.preview, edited=False)
            self._settle(placed, outcome)
            return outcome.result
        try:
            result = self.runtime.run(source)
        except PyAIChatError as exc:
            self._settle(placed, Outcome(proposal, "failed", code=source, error=str(exc)))
            raise
        output, error = run_output(result)
        outcome = Outcome(
            proposal,
            "edited",
            code=source,
            output=output,
            preview=placed.preview,
            error=error,
            input_number=result.number,
            result=result,
        )
        self._settle(placed, outcome)
        return result

    def drop_placed(self) -> None:
        """The person did not run the placed code (they asked something else, ran a command, or cleared the
        input): it is declined."""
        placed = self._take_placed()
        if placed is not None:
            self._settle(placed, Outcome(placed.proposal, "declined", preview=placed.preview))

    # IPython runs the cell itself: its two cell hooks call these around it.
    def cell_starting(self, source: str) -> None:
        """A cell is about to run: if a proposal was placed in it, this cell settles it (unchanged: it is
        checkpointed now for ``/undo``)."""
        placed = self._take_placed()
        if placed is None:
            return
        as_proposed = source.strip() == placed.proposal.code.strip()
        self._cell = Cell(placed, source, as_proposed)
        if as_proposed:
            self.runtime.begin_proposal(source)

    def cell_finished(self, number: int | None, entry: HistoryEntry | None) -> None:
        """The cell ran (``entry``: its history record, if it made one): settle the placed proposal."""
        cell, self._cell = self._cell, None
        if cell is None:
            return
        proposal = cell.placed.proposal
        if cell.as_proposed:
            self.runtime.end_proposal()
            self._approved(proposal, proposal.code, number)
        output, error = entry_output(entry)
        status: Status = "ran" if cell.as_proposed else "edited"
        outcome = Outcome(
            proposal,
            status,
            code=cell.source,
            output=output,
            preview=cell.placed.preview,
            error=error,
            input_number=number,
        )
        self._settle(cell.placed, outcome)

    def _settle(self, placed: Placed, outcome: Outcome) -> None:
        if outcome.status == "edited" and outcome.input_number is not None:
            self._edited = (placed.proposal, outcome.input_number)
        if placed.pending is not None:
            placed.pending._finish(outcome)

    # -- undo ----------------------------------------------------------------------------------------------
    def undo(self) -> tuple[bool, str]:
        """Take back the last approved code (``Runtime.undo``); the journal marks it undone and the assistant
        is told with its next question. Raises ``PyAIChatError`` when the runtime cannot undo at all.

        Code the person edited before running it is their own input (the journal and ``/save`` say so too):
        after it, ``/undo`` says so and takes nothing back — not an older proposal either."""
        if self._edited is not None:
            proposal, number = self._edited
            whose = "the assistant's" if proposal.source == ASSISTANT else f"{proposal.source}'s"
            return False, (
                f"Nothing was undone: you edited {whose} last proposal before running it, so input "
                f"[{number}] is your own code, which /undo does not take back."
            )
        ok, text = self.runtime.undo()
        if ok:  # the model must not go on believing the proposal's effects still stand
            if self._last_source == ASSISTANT:
                self._tell(f"The user undid the last approved proposal with /undo. {text}")
            else:
                self._tell(f"The user undid the code {self._last_source} proposed with /undo. {text}")
            self.journal.undone(text, self.runtime.last_input_number)
        return ok, text
