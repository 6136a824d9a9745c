"""Commands every front end has: modes, questions, help, model and input history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..modes import Mode
from .registry import command, declared

if TYPE_CHECKING:
    from .host import CommandHost


@command("py", "/py", "Switch to Python mode.")
def _py(ctrl: CommandHost, arg: str) -> None:
    ctrl.set_mode(Mode.PYTHON)
    ctrl.notice("Python mode.")


@command("ai", "/ai", "Switch to Assistant mode (questions in plain words).")
def _ai(ctrl: CommandHost, arg: str) -> None:
    ctrl.set_mode(Mode.ASSISTANT)
    ctrl.notice("Assistant mode: ask in plain words. /py or TAB on an empty line goes back.")


@command("ask", "/ask <question>", "Ask the assistant one question without leaving the current mode.")
def _ask(ctrl: CommandHost, arg: str) -> None:
    if not arg:
        ctrl.notice("Usage: /ask <question>", level="warning")
        return
    ctrl.ask(arg)


KEYS = [
    ("TAB (empty line)", "switch Python ⇄ Assistant mode"),
    ("Shift-TAB", "switch mode and keep the typed text"),
    ("TAB", "complete names, attributes and keys; indent at line start"),
    ("Enter", "run when complete; Alt-Enter always inserts a newline"),
    ("→ or End", "take the dimmed suggestion after the cursor (/suggest); Alt-→ one word of it"),
    ("Ctrl-R", "search history"),
    ("Ctrl-C", "clear the input, or stop what runs"),
    ("Ctrl-D", "exit (on an empty line)"),
]


@command("help", "/help", "Show keys and commands.")
def _help(ctrl: CommandHost, arg: str) -> None:
    from ..agent.events import PageEvent, PageSection  # compiled at import: with the first /help

    sections = [PageSection(title="Commands:", rows=[(c.usage, c.help) for c in declared()])]
    if ctrl.frontend.interactive:
        sections.append(PageSection(title="Keys:", rows=KEYS))
    ctrl.emit(PageEvent(sections=sections))


@command("model", "/model [name]", "Show the model, or switch to another for the next question.")
def _model(ctrl: CommandHost, arg: str) -> None:
    if not arg:
        current = ctrl.config.model
        if current:
            ctrl.notice(f"Model: {current}" + (f" at {ctrl.config.api_base}" if ctrl.config.api_base else ""))
        else:
            ctrl.notice(
                "No model is configured. Use /model <name>, --model, PYAICHAT_MODEL or the config file.",
                level="warning",
            )
        return
    problem = _model_problem(arg)
    if problem:
        now = ctrl.config.model
        ctrl.notice(f"{problem} The model stays {now or 'unset'}.", level="warning")
        return
    ctrl.settings.replace(model=arg)
    ctrl.notice(f"Model set to {arg} for the next question.", level="success")


def _model_problem(model: str) -> str | None:
    """Why litellm cannot place ``model`` (the sentence its first question would end with), asked of the
    litellm the assistant loads anyway for that question; ``None`` when it can, or cannot be asked."""
    from ..agent.llm import load_litellm  # the assistant's own litellm: with /model NAME
    from ..agent.llm.errors import model_problem

    try:
        lib = load_litellm()
    except Exception:  # no litellm: the question will say so
        return None
    return model_problem(lib, model)


@command(
    "history",
    "/history [n]",
    "Show the last n inputs (default 20) with short output summaries; approved proposals are marked.",
)
def _history(ctrl: CommandHost, arg: str) -> None:
    try:
        count = int(arg) if arg else 20
    except ValueError:
        ctrl.notice("Usage: /history [n] — n is a number of entries.", level="warning")
        return
    entries = list(ctrl.runtime.history)[-count:] if count > 0 else []
    if not entries:
        ctrl.notice("No inputs yet.")
        return
    from ..records import input_mark  # with the first input

    # approved proposals ran as inputs: say whose they were, and which /undo took back
    proposed = {p.input_number: p for p in ctrl.journal.approved if p.input_number is not None}
    lines = []
    for e in entries:
        first, *more = e.source.strip().splitlines() or [""]
        proposal = proposed.get(e.number)
        by = _proposer(proposal.proposed_by) if proposal is not None else None
        src = first + (f"  (+{len(more)} lines)" if more else "") + input_mark(e, by)
        mark = "" if e.ok else "✗ "
        lines.append(f"[{e.number}] {src}" + (f"\n      → {mark}{e.summary}" if e.summary else ""))
    from ..agent.events import PageEvent, PageSection  # compiled at import: with the first /history

    ctrl.emit(PageEvent(sections=[PageSection(text="\n".join(lines))]))  # long lines go on under their indent


def _proposer(source: str) -> str:
    return "the assistant" if source == "assistant" else source
