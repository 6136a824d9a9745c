"""Commands for work that lasts: go back (/undo, /redo, /checkpoints), save the session as a notebook, a
script or a transcript (/save), keep its variables (/snapshot) and bring a session back (/resume)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from ..errors import PyAIChatError
from .table import command

if TYPE_CHECKING:
    from .host import CommandHost


@command(
    "undo",
    "/undo [N]",
    "Undo the last input (N: the last N), whoever ran it; in IPython or a kernel, the last approved "
    "proposal.",
)
def _undo(ctrl: CommandHost, arg: str) -> None:
    words = arg.split()
    if len(words) > 1 or (words and not (words[0].isdigit() and int(words[0]) > 0)):
        ctrl.notice("Usage: /undo [N] (N: how many inputs to go back, 1 or more)", level="warning")
        return
    count = int(words[0]) if words else 1
    if ctrl.checkpoints is not None:
        ctrl.checkpoints.undo(count)
        return
    if count > 1:
        ctrl.notice(
            f"/undo takes back the last approved proposal only. {ctrl.checkpoints_why}", level="warning"
        )
        return
    try:
        ok, text = ctrl.proposals.undo()  # the journal and the assistant learn of it there
    except PyAIChatError as exc:  # a kernel without pyaichat's helper, or a dead one
        ctrl.notice(f"Cannot undo: {exc}", level="warning")
        return
    ctrl.notice(f"{text} ({ctrl.checkpoints_why})", level="success" if ok else "warning")


@command("redo", "/redo", "Return to where you were before /undo, while nothing new has run.")
def _redo(ctrl: CommandHost, arg: str) -> None:
    if ctrl.checkpoints is not None:
        ctrl.checkpoints.redo()
        return
    ctrl.notice(
        f"Nothing to redo: /redo follows a checkpoint's /undo. {ctrl.checkpoints_why}", level="warning"
    )


@command(
    "checkpoints", "/checkpoints", "What /undo can take back: each input, what it changed, what it cannot."
)
def _checkpoints(ctrl: CommandHost, arg: str) -> None:
    if ctrl.checkpoints is not None:
        ctrl.notice(ctrl.checkpoints.report())
        return
    ctrl.notice(
        f"{ctrl.checkpoints_why} /undo puts back the names the last approved proposal created, rebound or "
        "deleted (not what it changed in place)."
    )


@command(
    "save",
    "/save <file>",
    "Save the session: .ipynb a runnable notebook, .py a percent-format script, .md the conversation.",
)
def _save(ctrl: CommandHost, arg: str) -> None:
    from ..persist import PersistError  # with the first /save
    from ..persist.notebook import export  # with the first /save

    if not arg:
        ctrl.notice("Usage: /save <file.ipynb | file.py | file.md>", level="warning")
        return
    if _loads_nbformat(arg):
        ctrl.notice(f"Writing {arg.strip()}: the first notebook loads nbformat, a few seconds…")
    journal = ctrl.journal
    ctrl.runtime.know_secrets()  # the session's secret values masked wherever they appear in the file
    try:
        report = export(arg, ctrl.runtime.history, journal.turns, journal.approved, config=ctrl.config)
    except PersistError as exc:
        ctrl.notice(str(exc), level="warning")
        return
    except ImportError as exc:
        from ..extras import install_command  # only to say how

        missing = exc.name or "nbformat"
        ctrl.notice(
            f"Saving a notebook needs {missing}: {install_command('persist')} (or use .py or .md).",
            level="warning",
        )
        return
    ctrl.notice(report.text(), level="success")


def _loads_nbformat(arg: str) -> bool:
    """Whether this /save is a notebook's that first imports nbformat (its JSON-schema validator: 2–3 s that
    were silent)."""
    import importlib.util  # with /save only
    import sys

    if not arg.strip().lower().endswith(".ipynb") or "nbformat" in sys.modules:
        return False
    return importlib.util.find_spec("nbformat") is not None


@command(
    "snapshot",
    "/snapshot [--include-secrets] [file]",
    "Save the session's variables (default: in the state directory; secret-named ones only if asked).",
)
def _snapshot(ctrl: CommandHost, arg: str) -> None:
    words = _words(ctrl, arg)
    if words is None:
        return
    include_secrets = "--include-secrets" in words
    rest = [w for w in words if w != "--include-secrets"]
    if len(rest) > 1 or any(w.startswith("--") for w in rest):
        ctrl.notice("Usage: /snapshot [--include-secrets] [file]", level="warning")
        return
    path = rest[0] if rest else None
    try:
        text = ctrl.runtime.save_variables(path, include_secrets=include_secrets)
    except PyAIChatError as exc:
        ctrl.notice(str(exc), level="warning")
        return
    except ImportError as exc:
        from ..extras import install_command  # only to say how

        needed = exc.name or "cloudpickle"
        ctrl.notice(f"Snapshots need {needed}: {install_command('persist')}.", level="warning")
        return
    ctrl.resume_file.snapshot_taken(path or "")  # "": the runtime's default file
    ctrl.notice(text, level="success")


@command(
    "resume",
    "/resume [file]",
    "Bring back the last session's conversation and inputs, and the variables of a snapshot file (default: "
    "the last session's own last /snapshot).",
)
def _resume(ctrl: CommandHost, arg: str) -> None:
    words = _words(ctrl, arg)
    if words is None:
        return
    if len(words) > 1:
        ctrl.notice("Usage: /resume [file]", level="warning")
        return
    ctrl.resume_file.resume(words[0] if words else None)


def _words(ctrl: CommandHost, arg: str) -> list[str] | None:
    try:
        return shlex.split(arg)
    except ValueError as exc:
        ctrl.notice(f"Cannot read the arguments: {exc}.", level="warning")
        return None
