"""Sentences worded for the front end that shows them: a command as it is typed there, a place as it is there.

Every sentence pyaichat says is written once, for the terminal REPL (``/receipts``, "/undo cannot take this
back", "waiting in your next input"). In IPython and Jupyter a command is typed after ``%ai`` (``%ai
/receipts``), and in a notebook a proposal's code is a new cell below, not the next input. Each front end
declares where it runs (``FrontEnd.place``); ``worded`` rewrites a sentence for it, so that no sentence is
written twice and none names a key or a command the person cannot use where they are.

Only pyaichat's own sentences go through it (notices, errors, notes, the receipts' line, the preview's
lines), never the model's answer or code, where ``/save`` may be a path or a division.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .table import DECLARED

if TYPE_CHECKING:
    from ..ports import Place

# Where a slash command is typed after something: IPython's magic.
PREFIX: dict[str, str] = {"ipython": "%ai ", "jupyter": "%ai "}
# Terminal phrases a notebook says otherwise.
_NOTEBOOK = (
    ("waiting in your next input", "in a new cell below"),
    ("in your next input", "in a new cell below"),
    ("into your next input", "into a new cell below"),
)
_cache: dict[tuple[str, ...], re.Pattern[str]] = {}


def command(text: str, place: Place) -> str:
    """``/receipts`` as it is typed at ``place`` (``%ai /receipts`` in IPython and Jupyter)."""
    return PREFIX.get(place, "") + text


def worded(text: str, place: Place, *, commands: bool = True) -> str:
    """``text`` (one of pyaichat's sentences) as ``place`` says it: its commands typed as they are there
    (unless ``commands`` is false: an answer, which may quote a path) and, in a notebook, its places named as
    they are there."""
    prefix = PREFIX.get(place, "")
    if not text or (not prefix and place != "jupyter"):
        return text
    if commands and prefix and "/" in text:
        text = _commands().sub(lambda m: m.group(1) + prefix + m.group(2), text)
    if place == "jupyter":
        for terminal, notebook in _NOTEBOOK:
            text = text.replace(terminal, notebook)
    return text


def _commands() -> re.Pattern[str]:
    """A slash command named in a sentence: ``/undo`` after a space, a bracket or a quote (not a path's
    ``/x/undo``, not ``%ai /undo`` already), and not followed by more of a path or a word. The commands are
    the registry's: a front end that words sentences loads it first (``commands.all_commands()``)."""
    known = tuple(sorted(DECLARED, key=len, reverse=True))
    pattern = _cache.get(known)
    if pattern is None:
        alternatives = "|".join(re.escape(name) for name in known)
        pattern = re.compile(rf"(?<!%ai)(^|[\s(\[\"'`“‘])(/(?:{alternatives}))(?![\w/-]|\.\w)")
        _cache[known] = pattern
    return pattern
