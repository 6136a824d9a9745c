"""IPython's executed cells, recorded into a ``Session``'s history and last error.

IPython runs cells itself, so ``Session.run`` never sees them; ``pre_run_cell``/``post_run_cell`` callbacks
record each input (as typed), a short summary of its result, and its exception, which is what the
assistant's context reads. Questions (``%ai …`` cells) are not recorded as inputs: the conversation memory
has them. Used by the IPython extension and by the kernel helper, both inside a running IPython:
``shell_runtime`` makes the local runtime over a shell's ``user_ns`` for both.
"""

from __future__ import annotations

import os
import reprlib
import sys
import time
import types
from typing import TYPE_CHECKING, Any

from ..records import HistoryEntry, LastError
from ..session import Session, Tee, bounded_outputs, safe_repr, short
from .local import LocalRuntime

if TYPE_CHECKING:
    from ..configuration.config import Config

_BACKFILL = 20  # inputs typed before the extension was loaded that are copied into the history
_LOAD_MAGICS = ("%load_ext", "%reload_ext", "%unload_ext")
_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 120


def is_question(source: str) -> bool:
    """True for a cell that only asks the assistant: ``%ai …`` on one line, or a ``%%ai`` cell."""
    text = source.strip()
    if text.startswith("%%ai") and (len(text) == 4 or text[4].isspace()):
        return True
    return "\n" not in text and text.startswith("%ai") and (len(text) == 3 or text[3].isspace())


def summarise_value(value: Any) -> str:
    try:
        return short(_repr.repr(value), 120)
    except Exception:  # a broken __repr__ is not worth an error in the history
        return f"<{type(value).__name__}>"


def _user_traceback(exc: BaseException) -> types.TracebackType | None:
    """The traceback without IPython's own leading frames (``run_code``): it starts at the user's cell."""
    tb = exc.__traceback__
    ipython = sys.modules.get("IPython")  # the cell ran in IPython: it is loaded (no import here)
    if ipython is None or not ipython.__file__:
        return tb
    root = os.path.dirname(ipython.__file__)
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(root):
        tb = tb.tb_next
    return tb


def record_error(session: Session, exc: BaseException, source: str | None) -> LastError:
    """``session.record_exception`` over the user's part of the traceback. The exception object itself is
    left as IPython keeps it (``%tb`` and ``%debug`` still read its full traceback)."""
    original = exc.__traceback__
    exc.__traceback__ = _user_traceback(exc)
    try:
        return session.record_exception(exc, source)
    finally:
        exc.__traceback__ = original


class CellRecorder:
    """IPython event callbacks that mirror executed cells into a ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session
        session.numbered_here = False  # IPython's execution count numbers the inputs
        self._started = time.perf_counter()
        self._tees: list[tuple[Tee, Tee]] = []

    def pre_run_cell(self, info: Any) -> None:
        self._started = time.perf_counter()
        self._capture()

    # The cell's text output, for a saved notebook: sys.stdout/stderr write through a ``Tee`` while the cell
    # runs (what the user sees, and Jupyter's own output, are unchanged), put back after it. Cells nest (a
    # cell magic such as ``%%capture`` runs its body as a cell of its own), so the tees are a stack.
    def _capture(self) -> None:
        tees = (Tee(sys.stdout), Tee(sys.stderr))
        self._tees.append(tees)
        sys.stdout, sys.stderr = tees

    def _release(self) -> tuple[str, int, str, int]:
        if not self._tees:
            return "", 0, "", 0
        out, err = self._tees.pop()
        if sys.stdout is out:  # a cell that replaced the stream itself keeps its own
            sys.stdout = out.target
        if sys.stderr is err:
            sys.stderr = err.target
        return out.text(), out.total, err.text(), err.total

    def post_run_cell(self, result: Any) -> None:
        out, out_total, err, err_total = self._release()
        source = getattr(result.info, "raw_cell", None) or ""
        if not source.strip() or is_question(source) or source.lstrip().startswith(_LOAD_MAGICS):
            return
        error = result.error_in_exec or result.error_before_exec
        number = result.execution_count or self.session.next_number
        duration = round((time.perf_counter() - self._started) * 1000, 2)
        if error is not None and not isinstance(error, KeyboardInterrupt):
            last = record_error(self.session, error, source)
            last.input_number = number
            summary = short(last.headline())
        elif isinstance(error, KeyboardInterrupt):
            summary = "KeyboardInterrupt"
        else:
            summary = summarise_value(result.result) if result.result is not None else ""
        shown = safe_repr(result.result) if result.result is not None else None
        stdout, stderr, value = bounded_outputs((out, out_total), (err, err_total), (shown, len(shown or "")))
        self.session.history.append(
            HistoryEntry(number, source, error is None, summary, duration, stdout or "", stderr or "", value)
        )

    def backfill(self, shell: Any) -> None:
        """Copy the last inputs typed before the extension was loaded (with their ``Out`` values)."""
        if self.session.history:
            return
        try:
            raw = list(shell.history_manager.input_hist_raw)
            outputs = dict(shell.history_manager.output_hist)
        except Exception:
            return
        for number in range(max(1, len(raw) - _BACKFILL), len(raw)):
            source = raw[number]
            if not source.strip() or is_question(source) or source.lstrip().startswith(_LOAD_MAGICS):
                continue
            summary = summarise_value(outputs[number]) if number in outputs else ""
            self.session.history.append(HistoryEntry(number, source, True, summary, 0.0))


def shell_runtime(
    shell: Any, config: Config | None = None, *, where: str | None = None
) -> tuple[LocalRuntime, CellRecorder]:
    """The local runtime over ``shell.user_ns`` (the very same dict) and the recorder that mirrors its cells
    into the session's history, with the inputs typed before; a proposal's ``%magics`` preview as IPython
    runs them. The caller registers the recorder's two cell events (the extension wraps them in its own)."""
    session = Session(namespace=shell.user_ns, config=config)
    runtime = LocalRuntime(session, transform=shell.transform_cell, where=where)
    recorder = CellRecorder(session)
    recorder.backfill(shell)
    return runtime, recorder
