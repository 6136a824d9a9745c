"""The session picture: a bounded view of a live session — its variables, latest inputs and last error —
rebuilt for every question and sent with it.

Bounded by construction: at most ``MAX_VARS`` variables are summarised, each in one line
(``variable_lines``: from structure in this process, or asked in one walled child, never running the
session's own code here), the rest are only counted, so its size and cost do not grow with the data.
It reads the session the way the capabilities do (masking secret-looking names), which is why it lives here:
the local runtime builds it in this process, the kernel helper inside a kernel.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..records import input_mark
from .adapters.matplotlib import open_figures_line
from .introspect import user_names
from .privacy import SAMPLE, level
from .redact import mask_known, masker_for
from .secret_values import refresh as refresh_secret_values
from .variable_lines import variable_lines

if TYPE_CHECKING:
    from ..configuration.config import Config
    from ..session import Session

MAX_VARS = 40
RECENT_INPUTS = 5
_LINE = 110
_IDENT = re.compile(r"[A-Za-z_]\w*")


def session_picture(
    session: Session, config: Config, max_vars: int = MAX_VARS, *, seen_error: object = None
) -> str:
    """Variables (those used in the latest inputs first), the last few inputs and the last error; an error
    that is not ``seen_error`` (the one the previous picture showed) is marked as new."""
    refresh_secret_values(session, config)  # the values the masker masks wherever they show
    names = user_names(session.namespace)
    lines = ["## Session (live; rebuilt for this question)", f"Variables ({len(names):,}):"]
    if not names:
        lines.append("  (none yet)")
    shown = _ordered_names(session, names)[:max_vars]
    is_secret = masker_for(config).is_secret_name
    described = variable_lines(
        session.namespace,
        [n for n in shown if not is_secret(n)],
        config.privacy,
        _LINE,
        config.sandbox_isolation,
    )
    for name in shown:
        if is_secret(name):
            lines.append(f"  {name}: <redacted: secret-looking name>")
        else:
            lines.append(f"  {name}: {described[name]}")
    if len(names) > len(shown):
        lines.append(f"  … and {len(names) - len(shown):,} more (list_globals shows them)")
    figures = open_figures_line(session.namespace)
    if figures:
        lines.append(figures)

    # Text cut short is masked first: a credential cut in half no longer looks like one, and its first
    # characters would leave with the picture.
    mask = masker_for(config).mask_text
    values = level(config.privacy) >= SAMPLE  # below: no output, no error message (they quote values)
    recent = session.history[-RECENT_INPUTS:]
    if recent:
        lines.append("Recent inputs:")
        for entry in recent:
            first, *more = entry.source.strip().splitlines() or [""]
            src = _short(mask(first), 90) + (f"  (+{len(more)} lines)" if more else "")
            summary = _short(mask(entry.summary), 90) if entry.summary else ""
            outcome = ("✗ " if not entry.ok else "") + summary if summary else ""
            if not values:
                outcome = "" if entry.ok else "✗"
            arrow = f"  → {outcome}" if outcome else ""
            lines.append(f"  [{entry.number}] {src}{arrow}{input_mark(entry)}")
    lines.extend(_error_lines(session, mask, seen_error, values=values))
    # The whole picture once more, by the session's secret values: one that a variable's summary or an error
    # quotes is masked here, in the session's own process, where they are known (a kernel's picture reaches
    # the terminal without them; the rest of the masking is done again on the way to the model).
    return mask_known("\n".join(lines))


def _short(text: str, limit: int = _LINE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ordered_names(session: Session, names: list[str]) -> list[str]:
    """Names used in the latest inputs first, then the most recently defined ones."""
    present = set(names)
    first: list[str] = []
    for entry in reversed(session.history[-RECENT_INPUTS * 2 :]):
        for ident in _IDENT.findall(entry.source):
            if ident in present and ident not in first:
                first.append(ident)
    seen = set(first)
    return first + [n for n in reversed(names) if n not in seen]


def _error_lines(
    session: Session, mask: Callable[[str], str], seen_error: object = None, *, values: bool = True
) -> list[str]:
    """The last error; below privacy level ``sample`` (``values`` false) its message, which quotes values,
    is withheld, as ``get_last_exception`` withholds it."""
    err = session.last_error
    if err is None:
        return []
    where = f"input [{err.input_number}]" if err.input_number else ""
    if seen_error is not None and err is not seen_error:
        where += ", new since the previous question" if where else "new since the previous question"
    where = f" ({where})" if where else ""
    headline = err.headline() if values or not err.message else f"{err.type_name}: (message withheld)"
    lines = [f"Last error{where}: {_short(mask(headline), 300)}"]
    if err.segment:
        lines.append(f"  failing expression: {_short(mask(err.segment), 200)}")
    if err.source and len(err.source) < 1200:
        src = "\n".join("    " + line for line in err.source.strip().splitlines()[:12])
        lines.append("  input:\n" + src)
    frames = err.frames[-4:]
    if frames:
        lines.append("  innermost frames:")
        for fr in frames:
            where = f"{_short(_module_path(fr.filename), 60)}:{fr.lineno} in {fr.name}"
            lines.append(f"    {where}: {_short(mask(fr.line), 80)}")
    return lines


def _module_path(filename: str) -> str:
    """A library frame's file from its package on (``pandas/core/frame.py``): the model needs no more, and
    the install path (often with the user's name in it) is not its business."""
    for marker in ("site-packages/", "dist-packages/"):
        at = filename.rfind(marker)
        if at >= 0:
            return filename[at + len(marker) :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and filename.startswith(home + os.sep):
        return "~" + filename[len(home) :]
    return filename
