"""The ``%ai`` line magic and ``%%ai`` cell magic.

Both hand the question to the shared ``Controller``; ``--model M`` and ``--max-steps N`` before the question
apply to that question only. A line starting with ``/`` is a slash command (``%ai /clear``, ``%ai /model x``).
Problems the user can fix (no model, a bad option, a broken config) are ``UsageError``s: IPython prints them
as one line, without a traceback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

USAGE = "Usage: %ai [--model M] [--max-steps N] <question>, or a %%ai cell whose body is the question."
_OPTION = re.compile(r"--(?P<name>[A-Za-z][\w-]*)(?:=(?P<value>\S+))?")
_OPTIONS = {"model": "model", "max-steps": "max_steps", "max_steps": "max_steps"}


@dataclass
class Request:
    """A parsed ``%ai`` invocation: per-question config overrides and the question (or slash command)."""

    overrides: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def parse(line: str, cell: str | None = None) -> Request:
    """Split leading ``--option value`` pairs off ``line``; the rest (and the cell body) is the question."""
    request = Request()
    rest = line.strip()
    while rest.startswith("--"):
        head, rest = _split(rest)
        if head == "--":  # end of options: the question itself starts with "--"
            break
        match = _OPTION.fullmatch(head)
        key = _OPTIONS.get(match["name"]) if match else None
        if match is None or key is None:
            raise UsageError(f"Unknown option {head}: %ai accepts --model M and --max-steps N.")
        value = match["value"]
        if value is None:
            value, rest = _split(rest)
            if not value:
                raise UsageError(f"Option --{match['name']} needs a value.")
        request.overrides[key] = _convert(key, value)
    body = cell.strip() if cell else ""
    request.text = f"{rest}\n{body}".strip() if rest else body
    return request


def _split(text: str) -> tuple[str, str]:
    parts = text.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _convert(key: str, value: str) -> Any:
    if key != "max_steps":
        return value
    try:
        steps = int(value)
    except ValueError:
        steps = 0
    if not 1 <= steps <= 100:
        raise UsageError(f"--max-steps must be a whole number from 1 to 100 (got {value!r}).")
    return steps


class Answerer(Protocol):
    """What the magics hand a request to (the extension). A protocol, so this module does not import
    ``extension`` (which imports this one): no ``extension ↔ magics`` cycle."""

    def answer(self, request: Request) -> None: ...


@magics_class
class AIMagics(Magics):
    """Registers ``%ai`` / ``%%ai``; the work is done by the extension's shared core."""

    def __init__(self, shell: Any, extension: Answerer) -> None:
        super().__init__(shell)
        self.extension = extension

    @no_var_expand  # a question is text: "{a, b}" or "$5" must reach the model as typed
    @line_cell_magic
    def ai(self, line: str, cell: str | None = None) -> None:
        """Ask pyaichat's assistant about your live session (it can look, never change).

        %ai why is df empty?
        %ai --model gpt-4o-mini --max-steps 4 what is in config?
        %ai /clear          (slash commands: /help, /model, /history, /trace, /sent, ...)

        %%ai [--model M] [--max-steps N]
        a longer question, over several lines

        Proposed code is put into your next input (never run by itself).
        """
        request = parse(line, cell)
        if not request.text:
            raise UsageError(USAGE)
        self.extension.answer(request)
