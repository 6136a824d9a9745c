"""The session's resume file: what ``--resume`` brings back tomorrow, kept and restored in one place.

What lasts is the conversation memory and the notes not yet told to the model (the assistant's
``memory_state``), the numbered inputs (the runtime's, where a resumed session can number on after them), the
journal (where questions fell among the inputs, which inputs were approved proposals and which ``/undo`` took
back: ``/save`` and ``/history`` need it), and the last ``/snapshot`` file. ``persist.resume`` owns the
file's format (plain, checked JSON, masked, written atomically and privately); this module owns when it is
written and how a session is brought back.

Writing is kept off the keystroke path: ``changed()`` (after every input) only takes the current state, which
is cheap; a background thread masks, serialises and writes it. A front end that draws a prompt sets
``defer`` and calls ``idle()`` once the next prompt is on screen, so the prompt never waits for the file; the
others have it written at once. ``flush()`` (at exit) waits for the last write. A crash loses at most the
input that crashed, and a file that cannot be written is said once, in one sentence, with the next input.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

from .errors import PyAIChatError

if TYPE_CHECKING:
    import threading

    from .agent.assistant import Assistant
    from .configuration.config import Config
    from .journal import Journal
    from .runtime import Runtime

Level = Literal["info", "warning", "success"]


class ResumeFile:
    """The resume file of one session: kept after every input, read back by ``/resume`` and ``--resume``."""

    def __init__(
        self,
        runtime: Runtime,
        assistant: Assistant,
        *,
        config: Callable[[], Config],
        keep: Callable[[], bool],
        notice: Callable[[str, Level], None],
        journal: Journal | None = None,
    ) -> None:
        self.runtime = runtime
        self.assistant = assistant
        self.journal = journal
        self._config = config
        self._keep = keep  # whether this session is kept (the autosave setting and the front end)
        self._notice = notice
        self.snapshot: str | None = None  # the last /snapshot's file ("": the runtime's default file)
        self.defer = False  # write only once the front end is idle again (``idle()``)
        self._lock = _thread.allocate_lock()
        self._kept: tuple[object, ...] | None = None  # what the file last held (or is about to)
        self._pending: tuple[Any, ...] | None = None
        self._writer: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._failure_said = False

    # -- keeping -----------------------------------------------------------------------------------------
    def changed(self) -> None:
        """An input was handled: take what would be kept now and have it written (never fails an input)."""
        self._say_failure()
        if not self._keep():
            return
        history = list(self.runtime.history) if self.runtime.keeps_inputs else []
        turns, notes = self.assistant.memory_state()
        journal = self._journal_now() if history else None  # its input numbers mean nothing without them
        key = (
            history[-1].number if history else 0,
            len(history),
            len(turns),
            tuple(notes),
            self.snapshot,
            self.journal.state() if journal is not None and self.journal is not None else None,
        )
        if key == self._kept or not (history or turns):
            return
        self._kept = key
        config = self._config()
        # here, between inputs: the writer thread masks by value the secrets the session holds at this moment
        self.runtime.know_secrets()
        with self._lock:
            self._pending = (turns, history, notes, self.snapshot, config, journal)
        if not self.defer:
            self._start()

    def _journal_now(self) -> Any:
        """The journal's records as they are now (the writer runs on another thread)."""
        if self.journal is None:
            return None
        return SimpleNamespace(turns=list(self.journal.turns), approved=list(self.journal.approved))

    def prepare(self) -> None:
        """Before the first input, while the person reads the prompt: load what the first write needs (the
        masker with the session's secret values, the file's writer and json), so that neither the prompt after
        that input nor the exit waits for it. Nothing is written."""
        if not self._keep() or not self.runtime.keeps_inputs:
            return  # a kernel's session is kept after a question only; its secret values are a round trip
        self.runtime.know_secrets()
        from .persist import resume  # noqa: F401  (loaded for the first write, see above)

    def idle(self) -> None:
        """The front end is idle (its next prompt is on screen): write what is waiting."""
        if self._pending is not None:
            self._start()

    def flush(self) -> None:
        """Write what is waiting now and wait for the writer (at exit)."""
        if self._pending is not None:
            self._start()
        with self._lock:
            writer = self._writer
        if writer is not None:
            writer.join()

    def _start(self) -> None:
        import threading  # only when something is kept

        # The writer's modules load on this thread, between inputs, not on the writer's: an import makes
        # dozens of file system calls, each of which would hand the GIL back and forth between the writer and
        # a prompt handling keys, each handover waiting for the other thread to be scheduled.
        from .persist.resume import save_resume

        with self._lock:
            if self._writer is not None or self._pending is None:
                return  # the running writer takes the newest state before it stops
            self._writer = threading.Thread(
                target=self._write_all, args=(save_resume,), name="pyaichat-autosave"
            )
            self._writer.start()  # not a daemon: leaving waits for a write under way

    def _write_all(self, save_resume: Callable[..., Any]) -> None:
        while True:
            with self._lock:
                job, self._pending = self._pending, None
                if job is None:
                    self._writer = None
                    return
            turns, history, notes, snapshot, config, journal = job
            try:
                save_resume(turns, history, config=config, snapshot=snapshot, notes=notes, journal=journal)
            except Exception as exc:  # a thread of its own: nothing above it would say anything
                self._failure = exc

    def after_fork(self) -> None:
        """In a session forked from a checkpoint: no writer runs here (its thread stayed in the process that
        was forked), and what the file holds is written again at the next input."""
        self._lock = _thread.allocate_lock()
        self._writer = None
        self._kept = None

    def _say_failure(self) -> None:
        failure = self._failure
        if failure is not None and not self._failure_said:
            self._failure_said = True
            self._notice(f"The session cannot be kept for --resume: {failure}", "warning")

    # -- bringing a session back -------------------------------------------------------------------------
    def snapshot_taken(self, path: str) -> None:
        """``/snapshot`` wrote ``path`` ("": the runtime's default file): ``/resume`` without a file loads it
        back with the conversation."""
        self.snapshot = path

    def _restore_journal(self, turns: list[Any], approved: list[Any]) -> None:
        """The old inputs came back with their numbers: so do the journal's records of them, and the mark of
        each input ``/undo`` took back."""
        if self.journal is None:
            return
        self.journal.restore(turns, approved)
        undone = {p.input_number for p in approved if p.undone and p.input_number is not None}
        for entry in self.runtime.history if undone else ():
            if entry.number in undone:
                entry.undone = True

    def resume(self, path: str | None) -> None:
        """Bring back the last session's conversation and inputs, then the variables of ``path`` (a snapshot)
        or, without one, of the last session's own last ``/snapshot``. Each part is all or nothing and says in
        one sentence what came back or why not."""
        from .persist.resume import load_resume  # with /resume or --resume only

        if path is not None:  # a file that cannot be a snapshot is refused before anything comes back
            from .persist.snapshot_file import not_a_snapshot  # with /resume FILE only

            problem = not_a_snapshot(path, here=self.runtime.describe() is None)
            if problem is not None:
                self._notice(problem, "warning")
                return
        snapshot = path
        try:
            last = load_resume()
        except PyAIChatError as exc:  # no earlier session, or a damaged one: the variables may still load
            self._notice(str(exc), "warning")
            if path is None:
                return
        else:
            if last.turns or last.notes:
                self.assistant.restore(last.turns, last.notes)  # e.g. an /undo the model was not told of
            said = last.text()
            if last.history and not self.runtime.adopt_history(last.history_entries()):
                said += (
                    " The old inputs are not in /history: inputs already ran here, or the kernel or IPython "
                    "numbers its own."
                )
            elif last.history:
                self._restore_journal(last.journal_turns, last.approved)
            self._notice(said, "success")
            snapshot = path if path is not None else last.snapshot
            if snapshot is None and last.history:  # inputs came back, the names they bound did not
                self._notice(
                    "No variables came back: the last session took no /snapshot (run /snapshot to keep them "
                    "next time).",
                    "warning",
                )
        if snapshot is not None:  # "": the runtime's default snapshot file
            try:
                self._notice(self.runtime.load_variables(snapshot or None), "success")
            except PyAIChatError as exc:
                self._notice(str(exc), "warning")
                return
            self.snapshot = snapshot
