"""Commands every front end has: modes, questions, help, model and input history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..modes import Mode
from .table import closest, command, declared
from .wording import command as typed
from .wording import worded

if TYPE_CHECKING:
    from ..ports import Place
    from .host import CommandHost


NO_MODES = (
    "A notebook has no modes: a cell runs Python, and %ai <question> (or a %%ai cell) asks the assistant."
)
MODAL = ("repl", "ipython", "piped")  # the front ends with a Python mode and an Assistant mode
TERMINALS = ("repl", "ipython")  # the front ends that draw a prompt (keys, ghost text, a pager)


@command("py", "/py", "Switch to Python mode.", places=MODAL, elsewhere=NO_MODES)
def _py(ctrl: CommandHost, arg: str) -> None:
    ctrl.set_mode(Mode.PYTHON)
    ctrl.notice("Python mode.")


@command(
    "ai", "/ai", "Switch to Assistant mode (questions in plain words).", places=MODAL, elsewhere=NO_MODES
)
def _ai(ctrl: CommandHost, arg: str) -> None:
    ctrl.set_mode(Mode.ASSISTANT)
    ctrl.notice("Assistant mode: ask in plain words. /py or TAB on an empty line goes back.")


@command(
    "ask",
    "/ask <question>",
    "Ask the assistant one question without leaving the current mode.",
    places=MODAL,
    elsewhere="In a notebook, %ai <question> asks (or a %%ai cell): there is no mode to leave.",
)
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
    ("↑ / Ctrl-R", "earlier inputs / search them"),
    ("Ctrl-C", "clear the input, or stop what runs"),
    ("Ctrl-D", "exit (on an empty line)"),
]
SHORT_KEYS = (
    "Keys: TAB on an empty line switches Python ⇄ Assistant (Shift-TAB keeps the typed text) · Ctrl-C stops "
    "what runs · Ctrl-D exits."
)


@command(
    "help",
    "/help [keys | all | COMMAND]",
    "A few lines on keys and commands; keys: every key; all: what every command does; COMMAND: that one.",
)
def _help(ctrl: CommandHost, arg: str) -> None:
    from ..agent.events import PageEvent, PageSection  # compiled at import: with the first /help

    place: Place = getattr(ctrl.frontend, "place", "piped")
    here = [c for c in declared() if c.is_for(place)]  # all of them: /help was found by loading them
    wanted = arg.strip().lower().lstrip("/")
    if wanted == "keys":
        if place not in TERMINALS:
            ctrl.notice("Keys are the terminal prompt's; here, " + _asking(place))
            return
        ctrl.emit(PageEvent(sections=[PageSection(title="Keys:", rows=KEYS)]))
        return
    if wanted == "all":
        rows = [(typed(c.usage, place), c.help) for c in here]
        ctrl.emit(PageEvent(sections=[PageSection(title="Commands:", rows=rows)]))
        return
    if wanted:
        found = next((c for c in here if c.name == wanted), None)
        if found is None:
            guesses = " or ".join(typed(f"/{g}", place) for g in closest(wanted, [c.name for c in here]))
            said = f"No command /{wanted}" + (f"; did you mean {guesses}?" if guesses else ".")
            ctrl.notice(said, "warning")
            return
        ctrl.notice(f"{typed(found.usage, place)}: {found.help}")
        return
    names = " ".join(f"/{c.name}" for c in here)
    lines = [SHORT_KEYS if place in TERMINALS else _asking(place).capitalize()]
    after = " (after %ai)" if place in ("ipython", "jupyter") else ""
    lines.append(f"Commands{after}: {names}")
    more = "/help COMMAND says what one does (/help save); /help all: every command"
    more += "; /help keys: every key." if place in TERMINALS else "."
    lines.append(worded(more, place))
    ctrl.emit(PageEvent(sections=[PageSection(text="\n".join(lines))]))


def _asking(place: str) -> str:
    if place == "jupyter":
        return "%ai <question> asks the assistant (a %%ai cell for a longer one); commands go after %ai too."
    return "a line that starts with / is a command; /ai makes the lines after it questions, /py goes back."


@command(
    "more",
    "/more",
    "Show the last long output (/help all, /sent, /history…) again in a pager; q comes back.",
    places=TERMINALS,
    elsewhere="There is no pager here: the output above is all of it.",
)
def _more(ctrl: CommandHost, arg: str) -> None:
    last = ctrl.frontend.last_page
    if last is None:
        ctrl.notice("Nothing to show again: no long output yet.")
        return
    from dataclasses import replace  # with the first /more

    ctrl.emit(replace(last, pager=True))


@command("model", "/model [name]", "Show the model, or switch to another for the next question.")
def _model(ctrl: CommandHost, arg: str) -> None:
    if not arg:
        current = ctrl.config.model
        if current:
            ctrl.notice(f"Model: {current}, {_address(current, ctrl.config.api_base)}.")
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
    config = ctrl.config
    ctrl.settings.replace(config.for_model(arg))
    base = ctrl.config.api_base
    ctrl.notice(f"Model set to {arg} for the next question, {_address(arg, base)}.", level="success")
    dropped = []
    if config.api_base and base is None:
        dropped.append(f"the address {config.api_base}")
    if config.api_key is not None and ctrl.config.api_key is None:
        dropped.append("the api_key")
    if dropped:  # another provider's: sending there would fail (or hand the key to another provider)
        ctrl.notice(
            f"Not used for it: {' and '.join(dropped)}, set for {config.model} (another provider); "
            "--api-base, PYAICHAT_API_BASE or the config file set a base for a model."
        )


def _address(model: str, base: str | None) -> str:
    """Where ``model``'s requests go, in words: its base URL, or its provider's own address."""
    if base:
        return f"at {base}"
    from ..agent.suggest.route import DEFAULT_HOSTS  # the providers' own addresses (standard library)
    from ..configuration.config import provider_of

    provider = provider_of(model)
    host = DEFAULT_HOSTS.get(provider)
    named = provider or "OpenAI"
    return f"at {named}'s own address ({host})" if host else f"at {named}'s own address"


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
