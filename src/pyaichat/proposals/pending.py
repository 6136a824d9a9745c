"""A proposal on its way through the service: submitted from another thread and waited for (``Pending``),
placed in the person's next input (``Placed``), or in the IPython cell that settles it (``Cell``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..proposal import Outcome, Proposal


# -- a proposal from another thread --------------------------------------------------------------------------
class Pending:
    """A proposal submitted from another thread; ``wait`` for its outcome."""

    # queued → asking → (placed →) running → done; queued, asking or placed → withdrawn (no answer in time,
    # or its caller gave up)
    def __init__(self, proposal: Proposal, withdraw: Callable[[Pending, str | None, bool], None]) -> None:
        import threading  # only for proposals from another thread

        self.proposal = proposal
        self.state = "queued"
        self._withdraw = withdraw  # the service's: nothing of it may run any more
        self._outcome: Outcome | None = None
        self._answered = threading.Event()  # the person answered (or it was withdrawn)
        self._done = threading.Event()

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    def wait(self, timeout: float | None = None) -> Outcome:
        """The outcome. ``timeout`` bounds the wait for the person's answer: past it, an unanswered proposal
        is withdrawn and its outcome is ``unanswered``. Once answered, this waits until the run is over."""
        if not self._answered.wait(timeout):
            self._withdraw(self, None, False)
        self._done.wait()
        assert self._outcome is not None
        return self._outcome

    def withdraw(self, notice: str = "", *, take_back: bool = False) -> Outcome:
        """Withdraw it now, unless the person has answered already (then this waits for what they approved to
        finish). ``notice`` is what the person is told at their next prompt ("": nothing, e.g. they withdrew
        it themselves by stopping what it came through). ``take_back``: its code leaves the person's next
        input too, if it waits there unchanged (its caller cancelled it: running it would not be an answer
        to anyone)."""
        self._withdraw(self, notice, take_back)
        self._done.wait()
        assert self._outcome is not None
        return self._outcome

    def _answer(self) -> None:
        self._answered.set()

    def _finish(self, outcome: Outcome) -> None:
        if self._outcome is None:
            self._outcome = outcome
        self._answered.set()
        self._done.set()


class Placed:
    """A proposal waiting in the person's next input."""

    __slots__ = ("pending", "preview", "proposal")

    def __init__(self, proposal: Proposal, preview: str, pending: Pending | None) -> None:
        self.proposal, self.preview, self.pending = proposal, preview, pending


class Cell:
    """The cell IPython is running for a placed proposal (between its two cell hooks)."""

    __slots__ = ("as_proposed", "placed", "source")

    def __init__(self, placed: Placed, source: str, as_proposed: bool) -> None:
        self.placed, self.source, self.as_proposed = placed, source, as_proposed
