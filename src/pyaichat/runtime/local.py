"""The local runtime: the user's ``Session`` in this process, with the capabilities and the picture over it.

It is also what runs inside a Jupyter kernel, over the kernel's ``user_ns``: the kernel runtime sends it the
operations of ``kernel_link.OPERATIONS``, so an operation written here works in both places.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..session import Session, input_is_complete

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..capabilities.catalog import CapabilityResult
    from ..capabilities.toolbox import Toolbox
    from ..configuration.config import Config, Settings
    from ..persist.undo import Checkpoint
    from ..records import ExecResult, HistoryEntry, LastError
    from .completion import Completion


_toolbox: tuple[tuple[Any, ...], Toolbox] | None = None  # the registry's tools, and the set they describe


class LocalRuntime:
    """A ``Runtime`` over a ``Session``; its settings are the session's."""

    def __init__(
        self,
        session: Session,
        *,
        transform: Callable[[str], str] | None = None,
        where: str | None = None,
    ) -> None:
        self.session = session
        self._reported_error: object = None  # the last error the previous picture told about
        self._undo: Checkpoint | None = None  # the last approved proposal's, for /undo
        self._undo_after = 0  # the last input number before that proposal ran (its input comes next)
        # how proposed code becomes Python before a preview runs it (IPython's ``transform_cell``)
        self.transform = transform
        # one sentence the picture adds under its heading when the session is not simply this process's
        self.where = where
        # around every input that runs code here (``checkpoints``: one is taken before it, what the kernel
        # counted for it is kept): ``input_watch(number, source)`` is a context manager
        self.input_watch: Callable[[int, str], AbstractContextManager[None]] | None = None
        self.state_changed: Callable[[], None] | None = None  # the state changed outside an input

    @property
    def settings(self) -> Settings:
        """The session's settings."""
        return self.session.settings

    @property
    def config(self) -> Config:
        return self.session.settings.current()

    def run(self, source: str) -> ExecResult:
        watch = self.input_watch
        if watch is None:
            return self.session.run(source)
        with watch(self.session.next_number, source):
            return self.session.run(source)

    @property
    def history(self) -> Sequence[HistoryEntry]:
        return self.session.history

    @property
    def last_error(self) -> LastError | None:
        return self.session.last_error

    def complete(self, text: str, cursor: int) -> list[Completion]:
        from .completion import complete  # on the first TAB, not at start-up

        return complete(self.session.namespace, text, cursor)

    def is_complete(self, text: str) -> bool:
        return input_is_complete(text)

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        origin: str = "assistant",
        images: bool = False,
    ) -> CapabilityResult:
        from ..capabilities import call  # pydantic: with the first question, not at start-up

        return call(self.session, name, args, origin=origin, images=images)

    def picture(self) -> str:
        from ..capabilities.picture import session_picture  # with the first question, not at start-up

        text = session_picture(self.session, self.config, seen_error=self._reported_error)
        self._reported_error = self.session.last_error
        if self.where:
            head, _, rest = text.partition("\n")
            text = f"{head}\n{self.where}\n{rest}"
        return text

    def tools(self) -> Toolbox:
        global _toolbox
        from ..capabilities import all_capabilities, plugins  # pydantic: with the first question
        from ..capabilities.adapters import lookup as adapters
        from ..capabilities.toolbox import Toolbox

        capabilities = all_capabilities()
        added = tuple(f"{entry.module}  [{entry.source}]" for entry in adapters.PLUGIN_ADAPTERS.all())
        key = (tuple(map(id, capabilities)), (*plugins.errors, *adapters.problems), added)
        if _toolbox is None or _toolbox[0] != key:  # a schema takes pydantic a while: made once per set
            _toolbox = (key, Toolbox(tuple(cap.tool() for cap in capabilities), key[1], key[2]))
        return _toolbox[1]

    def sandbox_walls(self) -> list[str]:
        from ..capabilities.sandbox import walls_report  # with the first /tools

        return walls_report(self.config.sandbox_isolation)

    def audit_log(self, count: int) -> tuple[str, list[dict[str, Any]]]:
        from ..capabilities import audit  # with the first /audit

        return str(audit.log_path()), audit.read_last(count)

    def user_names(self) -> list[tuple[str, str]]:
        from .completion import user_names  # on the first TAB, not at start-up

        return user_names(self.session.namespace)

    def suggestion_facts(self, before: str, after: str = "") -> dict[str, list[str]]:
        from .facts import suggestion_facts  # with the first suggestion, not at start-up

        try:
            return suggestion_facts(self.session.namespace, self.session.history, self.config, before, after)
        except Exception:  # a suggestion without facts is still a suggestion
            return {"facts": [], "inputs": []}

    def describe(self) -> str | None:
        return None

    def status_lines(self) -> list[str]:
        return ["In this process."]

    def audit_key(self) -> object:
        return self.session  # what the capabilities' own records name

    def know_secrets(self) -> tuple[list[str], list[str]]:
        from ..capabilities.secret_values import refresh  # with the first file that lasts

        return refresh(self.session, self.config)

    def close(self) -> None:
        pass

    # -- proposals and the work that lasts (each loads its module with its first use) ----------------------
    def preview(self, source: str) -> dict[str, Any]:
        from ..capabilities.sandbox import preview_code  # with the first proposal

        return preview_code(self.config, self.session.namespace, source, self.transform).to_dict()

    def run_proposal(self, source: str) -> ExecResult:
        self.begin_proposal(source)
        try:
            return self.run(source)
        finally:
            self.end_proposal()

    # IPython runs the approved code itself (the user runs the cell it was put in): the extension calls
    # these two around that cell.
    def begin_proposal(self, source: str) -> None:
        """Approved code is about to run: remember what ``undo`` would put back."""
        from ..persist.undo import checkpoint  # with the first approved proposal

        self._undo = None  # the previous proposal's old objects are released now
        self._undo_after = self.last_input_number
        self._undo = checkpoint(self.session.namespace, source)

    def end_proposal(self) -> None:
        """It ran (or failed part-way): find what it created, rebound, deleted or changed in place."""
        from ..persist.undo import finish  # with the first approved proposal

        if self._undo is not None and self._undo.changes is None:
            finish(self.session.namespace, self._undo)

    def undo(self) -> tuple[bool, str]:
        from ..persist.undo import undo  # with the first /undo

        if self._undo is None:
            return False, "Nothing to undo: no approved proposal has run since the session started."
        done = undo(self.session.namespace, self._undo)
        if done.ok:  # the input it ran as is marked wherever inputs are listed (the picture, /history)
            ran = next((e for e in self.session.history if e.number > self._undo_after), None)
            if ran is not None:
                ran.undone = True
        return done.ok, done.text

    @property
    def last_input_number(self) -> int:
        history = self.session.history
        return history[-1].number if history else 0

    @property
    def keeps_inputs(self) -> bool:
        return self.session.numbered_here

    def adopt_history(self, entries: list[HistoryEntry]) -> bool:
        return self.session.adopt_history(entries)

    def save_variables(self, path: str | None, include_secrets: bool = False) -> str:
        from ..persist.snapshot import save_snapshot  # with the first /snapshot

        return save_snapshot(
            self.session.namespace, path, config=self.config, include_secrets=include_secrets
        ).text()

    def load_variables(self, path: str | None) -> str:
        from ..persist.snapshot import load_snapshot  # with the first /resume of variables

        try:
            return load_snapshot(path, self.session.namespace).text()
        finally:
            if self.state_changed is not None:
                self.state_changed()
