"""What continues across a jump: taken from the live session's memory (the authority on it while it lives),
pickled, sent through the supervisor, and put into the session that takes over.

Going back to a checkpoint restores the session's *state* — its variables, what they hold, its modules — but
not its *story*: the conversation, the numbered inputs (the undone ones marked), the journal ``/save`` reads,
the prompt's history, the model and mode the person chose, the session's cost, the last ``/snapshot``. Those
come from the session being left (``gather``), not from the copy's memory of an earlier moment, and are put
into the one resumed (``apply``). After a crash there is no session to take them from: the newest copy took
them when it was taken, the supervisor keeps what changed since (the live session hands it over between
inputs: ``keeper``), and adds the input that crashed.

Each part is pickled on its own: one that cannot be (a result holding something unpicklable) is left out,
and the resumed session keeps its own copy's version of that part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..agent.assistant import Assistant
    from ..agent.suggest import Suggester
    from ..configuration.config import Settings
    from ..journal import Journal
    from ..mcpserve.gate import SessionGate
    from ..modes import Mode
    from ..ports import FrontEnd, Serving
    from ..proposals import Proposals
    from ..records import HistoryEntry
    from ..resume_file import ResumeFile
    from ..runtime import Runtime


class Parts(Protocol):
    """What of the session continues (the controller has all of it)."""

    runtime: Runtime
    assistant: Assistant
    journal: Journal
    proposals: Proposals
    resume_file: ResumeFile
    settings: Settings
    mode: Mode
    gate: SessionGate
    frontend: FrontEnd

    @property
    def suggester(self) -> Suggester: ...

    @property
    def suggester_if_any(self) -> Suggester | None: ...

    def set_mode(self, mode: Mode) -> None: ...

    def notice(self, text: str, level: Literal["info", "warning", "success"] = "info") -> None: ...

    def mcp(self, *, create: bool) -> Serving | None: ...


class PromptHistory(Protocol):
    """The front end's prompt: its in-memory history of typed lines (newest first), and the keys the person
    typed ahead that it has read and not yet used (they belong to whichever session takes over)."""

    def lines(self) -> list[str]: ...

    def replace(self, lines: list[str]) -> None: ...

    def typed(self) -> Any: ...

    def retype(self, keys: Any) -> None: ...


def gather(ctrl: Parts, prompt: PromptHistory | None, extra: dict[str, Any], *, typed: bool = True) -> bytes:
    """The story of the session as it is now, pickled (see the module's docstring); ``extra``: the
    checkpoints' own (the input records, what a jump undoes). ``typed``: with the keys typed ahead (for the
    session that takes over now; not for one that would after a crash, later)."""
    import pickle  # with the first jump

    session = getattr(ctrl.runtime, "session", None)
    assistant = ctrl.assistant
    config = ctrl.settings.current()
    suggester = ctrl.suggester_if_any
    parts: dict[str, Any] = {
        "history": list(session.history) if session is not None else None,
        "counter": getattr(session, "_counter", None),
        "memory": assistant._memory,
        "last": assistant.last,
        "questions": assistant.questions,
        "requests": assistant.requests,
        "totals": assistant._totals,
        "notes": list(assistant.notes),
        "journal": (list(ctrl.journal.turns), list(ctrl.journal.approved)),
        "mode": ctrl.mode.value,
        "settings": {"model": config.model, "suggest_model": config.suggest_model},
        "snapshot": ctrl.resume_file.snapshot,
        "prompt": prompt.lines() if prompt is not None else None,
        "typed": prompt.typed() if prompt is not None and typed else None,
        "suggest_stats": suggester.stats if suggester is not None else None,
        "question_hinted": getattr(ctrl, "_question_hinted", False),
        **extra,
    }
    kept = {}
    for key, value in parts.items():
        try:
            kept[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # that part stays as the resumed session's own copy has it
            continue
    return pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> dict[str, Any]:
    """The parts of a ``gather``ed blob (``{}`` for none); a part that cannot be loaded is left out."""
    if not blob:
        return {}
    import pickle  # with the first jump

    found = {}
    for key, data in pickle.loads(blob).items():
        try:
            found[key] = pickle.loads(data)
        except Exception:
            continue
    return found


def apply(
    ctrl: Parts,
    prompt: PromptHistory | None,
    parts: dict[str, Any],
    *,
    mode_of: Callable[[str], Mode],
) -> None:
    """Put the carried ``parts`` into this session (the one resumed)."""
    session = getattr(ctrl.runtime, "session", None)
    if session is not None and parts.get("history") is not None:
        session.history[:] = parts["history"]
        if isinstance(parts.get("counter"), int):
            session._counter = parts["counter"]
    assistant = ctrl.assistant
    if "memory" in parts:
        assistant._memory = parts["memory"]
    for name in ("last", "questions", "requests"):
        if name in parts:
            setattr(assistant, name, parts[name])
    if "totals" in parts:
        assistant._totals = parts["totals"]
    if "notes" in parts:
        assistant.notes[:] = parts["notes"]
    if "journal" in parts:
        turns, approved = parts["journal"]
        ctrl.journal.turns[:] = turns
        ctrl.journal.approved[:] = approved
    if "settings" in parts:
        current = ctrl.settings.current()
        wanted = {k: v for k, v in parts["settings"].items() if getattr(current, k) != v}
        if wanted:
            try:
                ctrl.settings.replace(**wanted)
            except Exception:  # a setting it cannot take stays as it is
                pass
    if "mode" in parts:
        try:
            ctrl.set_mode(mode_of(parts["mode"]))
        except Exception:
            pass
    if "snapshot" in parts:
        ctrl.resume_file.snapshot = parts["snapshot"]
    if prompt is not None and parts.get("prompt") is not None:
        prompt.replace(parts["prompt"])
    if prompt is not None and parts.get("typed"):
        prompt.retype(parts["typed"])
    if parts.get("suggest_stats") is not None:
        ctrl.suggester.stats = parts["suggest_stats"]
    if "question_hinted" in parts:
        ctrl._question_hinted = parts["question_hinted"]  # type: ignore[attr-defined]  # the controller's own


def mark(history: Iterable[HistoryEntry], numbers: set[int], *, undone: bool) -> None:
    """Mark (or unmark) the inputs ``numbers`` as undone, wherever inputs are listed."""
    for entry in history:
        if entry.number in numbers:
            entry.undone = undone
