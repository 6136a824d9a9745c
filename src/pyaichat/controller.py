"""Mode state and input dispatch, shared by the interactive REPL and piped mode.

The front ends only read input and render events; everything a line *means* (a slash command, Python code, a
question) is decided here, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from .errors import PyAIChatError
from .mcpserve.gate import SessionGate
from .modes import Mode
from .runtime import Runtime, as_runtime

if TYPE_CHECKING:
    from .agent.assistant import Assistant
    from .agent.events import ApprovalRequiredEvent, Event
    from .agent.loop import Approval
    from .agent.suggest import Suggester
    from .config import Config
    from .journal import Journal
    from .records import ExecResult
    from .session import Session

__all__ = ["Controller", "Decision", "FrontEnd", "Mode"]


Decision = Literal["run", "edit", "no"]


class FrontEnd(Protocol):
    """What the shared core needs from a front end."""

    interactive: bool
    remembers: bool  # keeps the session for --resume when the autosave setting is "auto" (not piped input)

    def emit(self, event: Event) -> None: ...

    def decide(self, proposal: ApprovalRequiredEvent) -> Decision:
        """Ask the user what to do with proposed code (piped mode always answers "no")."""
        ...

    def set_next_input(self, code: str) -> None:
        """Put ``code`` into the next Python-mode input for the user to edit."""
        ...


class Controller:
    """Routes each complete input to a slash command, the Python session or the assistant.

    ``runtime`` is where the user's session lives (a ``Session`` runs in this process)."""

    def __init__(self, config: Config, runtime: Runtime | Session, frontend: FrontEnd) -> None:
        self.config = config
        self.runtime = as_runtime(runtime)
        self.frontend = frontend
        self.mode = Mode.PYTHON
        self.should_exit = False
        self.mode_listeners: list = []
        self._assistant: Assistant | None = None
        self._journal: Journal | None = None
        self._remembered: tuple[object, ...] | None = None  # what the resume file last held
        self._remember_failed = False
        self._snapshot: str | None = None  # the last /snapshot's file, for /resume without one
        self._suggester: Suggester | None = None
        # outside agents' calls (/mcp) wait while an input is handled: they never see it half-done
        self.gate = SessionGate()

    # -- modes -----------------------------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        if mode is self.mode:
            return
        self.mode = mode
        if mode is Mode.ASSISTANT:  # the first question should not wait for litellm's import
            self.assistant.warm_up()
        for listener in self.mode_listeners:
            listener(mode)

    def toggle_mode(self) -> Mode:
        self.set_mode(Mode.ASSISTANT if self.mode is Mode.PYTHON else Mode.PYTHON)
        return self.mode

    # -- dispatch --------------------------------------------------------------------------------------------
    def handle(self, text: str) -> None:
        """Handle one complete input. ``SystemExit`` from user code propagates to the front end."""
        stripped = text.strip()
        if not stripped:
            return
        try:
            with self.gate:
                if stripped.startswith("/"):
                    from .commands import dispatch  # with the first slash command, not at start-up

                    dispatch(self, stripped)
                elif self.mode is Mode.PYTHON:
                    self.run_python(text)
                else:
                    self.ask(stripped)
        finally:
            self.remember()

    def run_python(self, source: str) -> ExecResult | None:
        """Run ``source`` in the session; a session that cannot run it (a dead kernel) is one sentence."""
        try:
            return self.runtime.run(source)
        except PyAIChatError as exc:
            from .agent.events import ErrorEvent  # pydantic: not at start-up

            self.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return None

    def ask(self, question: str) -> None:
        """Answer a question with the assistant: events go to the front end, proposals through ``decide``."""
        # the agent (pydantic, the loop) loads with the first question, not at start-up
        from .agent.events import ErrorEvent

        before = self.runtime.last_input_number
        try:
            result = self.assistant.ask(question, self.emit, self._approve)
        except Exception as exc:  # a bug in pyaichat must not end the session (piped mode has no other guard)
            self.emit(
                ErrorEvent(
                    message=f"The assistant hit an internal error ({type(exc).__name__}: {exc}); "
                    "your session is intact.",
                    kind="internal",
                )
            )
            return
        if result is not None:
            self.journal.question(result, before, self.runtime.last_input_number)

    # -- a proposal: preview, choice, run ------------------------------------------------------------------
    def _approve(self, event: ApprovalRequiredEvent) -> Approval:
        """The user's choice on proposed code, made after seeing what it would do."""
        from .agent.assistant import DECLINED, EDITING  # the agent: with the first question
        from .agent.loop import Approval  # likewise

        self._preview(event)
        decision = self.frontend.decide(event)
        if decision == "run":
            return self._run_approved(event)
        if decision == "edit":
            self.frontend.set_next_input(event.code)
            self.set_mode(Mode.PYTHON)
            return Approval("edit", EDITING)
        return Approval("no", DECLINED)

    def _preview(self, event: ApprovalRequiredEvent) -> None:
        """Show what the proposal would do, found in a walled copy of the session (Ctrl-C skips it). Only the
        front end sees it: the model is told the user's choice and nothing of the preview."""
        from .agent.events import PreviewEvent, StateEvent  # pydantic: with the first proposal
        from .capabilities.sandbox.preview import Preview  # the panel's lines; with the first proposal

        self.emit(StateEvent(state="previewing", detail="what the code would do · Ctrl-C skips"))
        try:
            found = Preview.from_dict(self.runtime.preview(event.code))
        except KeyboardInterrupt:
            found = Preview("skipped", reason="Preview skipped (Ctrl-C); nothing ran.")
        except PyAIChatError as exc:  # e.g. the kernel died: still offer the choice
            found = Preview("unavailable", reason=f"No preview: {exc}")
        self.emit(StateEvent(state="idle"))
        lines = found.lines() if found.status != "skipped" else [("note", found.reason or "")]
        self.emit(PreviewEvent(call_id=event.call_id, status=found.status, lines=lines))

    def _run_approved(self, event: ApprovalRequiredEvent) -> Approval:
        """Run approved code in the session, keeping what ``/undo`` needs, and record it for ``/save``."""
        from .agent.assistant import describe_run  # the agent: with the first question
        from .agent.events import ErrorEvent  # pydantic: with the first question
        from .agent.loop import Approval  # likewise

        try:
            result = self.runtime.run_proposal(event.code)
        except PyAIChatError as exc:  # e.g. the kernel died: the code did not run
            self.emit(ErrorEvent(message=str(exc), kind="runtime"))
            return Approval("run", f"The proposed code could not run: {exc}")
        self.journal.approve(event.code, self.config.model, result.number, event.explanation)
        return Approval("run", describe_run(result), input_number=result.number)

    # -- the session kept for --resume -----------------------------------------------------------------------
    def remember(self) -> None:
        """Keep the conversation and the numbered inputs for ``--resume``, written atomically after every
        input that changed them (a crash loses at most the input that crashed). Never fails an input."""
        if self.config.autosave == "off" or (self.config.autosave == "auto" and not self.frontend.remembers):
            return
        history = self.runtime.history if self.runtime.keeps_inputs else []
        turns = self._assistant.memory.turns if self._assistant is not None else []
        notes = self._assistant.notes if self._assistant is not None else []
        key = (history[-1].number if history else 0, len(history), len(turns), tuple(notes), self._snapshot)
        if key == self._remembered or not (history or turns):
            return
        self._remembered = key
        from dataclasses import asdict  # with the first input, like the records it reads

        from .persist.resume import save_resume  # with the first input, not at start-up

        try:
            turns_data = [asdict(t) for t in turns]
            save_resume(turns_data, history, config=self.config, snapshot=self._snapshot, notes=notes)
        except (PyAIChatError, OSError) as exc:
            if not self._remember_failed:
                self._remember_failed = True
                self.notice(f"The session cannot be kept for --resume: {exc}", level="warning")

    def snapshot_taken(self, path: str) -> None:
        """``/snapshot`` wrote ``path`` ("": the runtime's default file): ``/resume`` without a file loads it
        back with the conversation."""
        self._snapshot = path

    def resume(self, path: str | None) -> None:
        """Bring back the last session's conversation and inputs, then the variables of ``path`` (a snapshot)
        or, without one, of the last session's own last ``/snapshot``. Each part is all or nothing and says in
        one sentence what came back or why not."""
        from .agent.context import Turn  # the agent: with /resume only
        from .persist.resume import load_resume  # with /resume or --resume only

        snapshot = path
        try:
            last = load_resume()
        except PyAIChatError as exc:  # no earlier session, or a damaged one: the variables may still load
            self.notice(str(exc), level="warning")
            if path is None:
                return
        else:
            self.assistant.memory.turns[:0] = [
                Turn(t["question"], t["messages"], t["answer"]) for t in last.turns
            ]
            self.assistant.notes[:0] = last.notes  # e.g. an /undo the model has not been told of yet
            said = last.text()
            if last.history and not self.runtime.adopt_history(last.history_entries()):
                said += (
                    " The old inputs are not in /history: inputs already ran here, or the kernel or IPython "
                    "numbers its own."
                )
            self.notice(said, level="success")
            snapshot = path if path is not None else last.snapshot
        if snapshot is not None:  # "": the runtime's default snapshot file
            try:
                self.notice(self.runtime.load_variables(snapshot or None), level="success")
            except PyAIChatError as exc:
                self.notice(str(exc), level="warning")
                return
            self._snapshot = snapshot

    @property
    def journal(self) -> Journal:
        """Where the questions and approved proposals are recorded for ``/save`` (created on first use)."""
        if self._journal is None:
            from .journal import Journal  # with the first question, not at start-up

            self._journal = Journal()
        return self._journal

    @property
    def assistant(self) -> Assistant:
        """The session's assistant, created on first use (creating it imports no heavy library)."""
        if self._assistant is None:
            from .agent.assistant import Assistant  # not at start-up

            self._assistant = Assistant(self.config, self.runtime)
        return self._assistant

    @property
    def suggester(self) -> Suggester:
        """The session's ghost-text suggestions (created on first use; idle until ``suggest_model`` is set,
        and it starts no thread before its first request)."""
        if self._suggester is None:
            from .agent.suggest import Suggester  # standard library only

            self._suggester = Suggester(lambda: self.config, self.runtime)
        return self._suggester

    @property
    def suggester_if_any(self) -> Suggester | None:
        return self._suggester

    def active_suggester(self) -> Suggester | None:
        """The suggester when a suggestion model is set (what a prompt asks on every keystroke)."""
        return self.suggester if self.config.suggest_model else None

    def close(self) -> None:
        """The front end is done: stop the suggestions' thread (its open connections are closed)."""
        if self._suggester is not None:
            self._suggester.close()

    # -- output ----------------------------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self.frontend.emit(event)

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None:
        from .agent.events import NoticeEvent  # pydantic: not at start-up

        self.emit(NoticeEvent(text=text, level=level))
