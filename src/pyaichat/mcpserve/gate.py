"""When an outside call may look at the session: the rule that keeps it from seeing half-done state.

The rule (README, "Use your session from Claude Code…"): **outside calls are answered while the session is
idle at its prompt — also while the person types.** While the session handles one of the person's inputs
(their code, a slash command, a question to the built-in assistant, a cell in IPython), an outside call
waits, up to ``mcp_serve_busy_wait`` seconds, and then answers that the session is busy. Outside calls run
one at a time, and the person comes first: an input that starts while a call runs waits for that call only
(each is bounded by its own deadline), and no new call starts while an input waits.

So no call ever reads a namespace that the person's code is half-way through changing, and no check that
compares fingerprints before and after a call can mistake the person's own changes for the tool's.

The person's side is entered on the main thread (``with gate:`` around each input, or ``enter``/``leave``
from IPython's cell hooks). Until serving starts there is nobody to wait for, so the gate is a counter and
costs the start-up nothing; ``attach`` (from the main thread, when serving starts) adds the condition that
outside callers wait on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading

BUSY = (
    "The session is busy running the person's own input (their code, a command or a question); "
    "nothing was read. Try again in a moment."
)


class SessionBusy(Exception):
    """An outside call waited its bound while the person's input ran (``BUSY`` is the sentence)."""


class SessionGate:
    """Whether the person's session is handling an input; outside callers wait for it to be idle."""

    def __init__(self) -> None:
        self._busy = 0  # the person's inputs being handled (nested: a %ai cell runs /mcp through handle)
        self._calls = 0  # outside calls running (at most one)
        self._wanting = 0  # the person's inputs waiting for a running call to end
        self._cond: threading.Condition | None = None
        self.serving: str | None = None  # what the toolbar says while the session is served ("⇄ MCP")

    # -- the person's side (main thread) ---------------------------------------------------------------------
    def attach(self) -> None:
        """Serving starts: from now on outside callers may wait here (call from the main thread)."""
        if self._cond is None:
            import threading  # only once serving starts

            self._cond = threading.Condition()

    def enter(self) -> None:
        """An input of the person's starts; a running outside call finishes first (it has a deadline)."""
        cond = self._cond
        if cond is None:
            self._busy += 1
            return
        with cond:
            self._wanting += 1
            try:
                while self._calls and not self._busy:
                    cond.wait()
            finally:
                self._wanting -= 1
            self._busy += 1

    def leave(self) -> None:
        cond = self._cond
        if cond is None:
            self._busy = max(self._busy - 1, 0)
            return
        with cond:
            self._busy = max(self._busy - 1, 0)
            cond.notify_all()

    def after_fork(self) -> None:
        """In a session forked from a checkpoint: the outside calls running when it was taken run in the
        process that was forked, not here; serving, if it comes back, attaches anew."""
        self._busy = self._calls = self._wanting = 0
        self._cond = None
        self.serving = None

    def __enter__(self) -> SessionGate:
        self.enter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.leave()

    @property
    def busy(self) -> bool:
        return self._busy > 0

    # -- the outside side (any thread) -----------------------------------------------------------------------
    def outside(self, timeout: float) -> _OutsideCall:
        """``with gate.outside(t):`` — wait up to ``t`` seconds for an idle session, then hold it for one
        call; raises ``SessionBusy`` when the person's input is still running."""
        return _OutsideCall(self, timeout)

    def _begin_call(self, timeout: float) -> None:
        cond = self._cond
        if cond is None:
            raise SessionBusy("The session is not serving.")
        deadline = time.monotonic() + max(timeout, 0.0)
        with cond:
            while self._busy or self._wanting or self._calls:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SessionBusy(BUSY)
                cond.wait(left)
            self._calls += 1

    def _end_call(self) -> None:
        cond = self._cond
        assert cond is not None
        with cond:
            self._calls -= 1
            cond.notify_all()


class _OutsideCall:
    __slots__ = ("_gate", "_timeout")

    def __init__(self, gate: SessionGate, timeout: float) -> None:
        self._gate, self._timeout = gate, timeout

    def __enter__(self) -> None:
        self._gate._begin_call(self._timeout)

    def __exit__(self, *exc: Any) -> None:
        self._gate._end_call()
