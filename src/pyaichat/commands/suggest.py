"""``/suggest``: ghost-text suggestions in Python mode — what they use, choose their model, turn them off."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.suggest import PAUSE
from ..agent.suggest.route import destination, route_for
from .table import command

if TYPE_CHECKING:
    from .host import CommandHost

OFF = (
    "Suggestions are off. /suggest MODEL turns them on — a small, fast model is best, e.g. "
    "ollama/qwen2.5-coder:1.5b — and what you then type in Python mode is sent to it (the toolbar says "
    "where)."
)


@command(
    "suggest",
    "/suggest [MODEL|off]",
    "Show the suggestions' model, choose one, or turn them off.",
    places=("repl", "ipython", "piped"),
    elsewhere="Ghost-text suggestions are for a terminal prompt (pyaichat's or IPython's), not a notebook.",
)
def _suggest(ctrl: CommandHost, arg: str) -> None:
    if not arg:
        ctrl.notice(status(ctrl))
        return
    if arg.lower() == "off":
        ctrl.settings.replace(suggest_model=None)
        ctrl.suggester.cancel()
        ctrl.suggester.stop_helper()  # its memory back now, not when it idles out
        ctrl.notice("Suggestions are off; nothing you type is sent.", level="success")
        return
    problem = ctrl.suggester.check(arg)  # as /model checks: nothing goes to a model litellm cannot place
    if problem:
        now = ctrl.config.suggest_model
        ctrl.notice(f"{problem} Suggestions stay {'with ' + now if now else 'off'}.", level="warning")
        return
    ctrl.settings.replace(suggest_model=arg)
    where = _where(ctrl)
    ctrl.notice(f"Suggestions on: {arg} ({where}) gets what you type in Python mode.", level="success")


def _where(ctrl: CommandHost) -> str:
    host, local = destination(ctrl.config)
    return f"at {host}, this machine" if local else f"at {host}: what you type leaves this machine"


def status(ctrl: CommandHost) -> str:
    config = ctrl.config
    if not config.suggest_model:
        return OFF
    engine = ctrl.suggester
    s = engine.stats
    kind = "chat" if config.suggest_model in engine.chat_only else route_for(config).kind
    protocol = "fill-in-the-middle" if kind == "fim" else "a short chat prompt"
    lines = [
        f"Suggestions: {config.suggest_model} ({_where(ctrl)}), {protocol}, after a {PAUSE:g} s pause.",
        f"{s.requests} request(s): {s.answered} answered, {s.delivered} shown, {s.cancelled} cancelled as "
        f"you typed on, {s.failed} failed; {s.prompt_tokens:,} prompt + {s.completion_tokens:,} completion "
        "tokens.",
    ]
    helper = engine.helper_line()
    if helper:
        lines.append(helper)
    if engine.stopped_by:
        lines.append(f"Stopped: {engine.stopped_by} Fix it, then /suggest {config.suggest_model} again.")
    elif s.last_failure:
        lines.append(f"Last failure: {s.last_failure}")
    if not ctrl.frontend.interactive:
        lines.append("(Suggestions show only at an interactive prompt.)")
    return "\n".join(lines)
