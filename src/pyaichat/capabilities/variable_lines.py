"""One line per variable for the session picture and ``list_globals``, with no code of the session's run in
its process.

A variable that is described by structure alone (``summary_here.here``: plain values, numpy's and pandas'
own objects by their metadata, modules, library functions and classes) gets its line here. One whose line
needs its own code — a ``__repr__`` or ``__len__`` the session wrote, a library object read by its
library's code, a third party's adapter — is asked in the walled child: one fork for all of a picture's asks,
within ``ASK_BUDGET`` (``sandbox.ask_in_child``). When no walled child can run, or it does not answer in
time, or privacy is below ``sample`` (no repr is shown there), the line is made from the type alone (type,
module and the size a builtin base type counts: ``summary_here.metadata_line``). An object whose own code
overran its budget in the child is not asked again in this session (``deadline.remember_overrun``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from .adapters.lookup import entry_for
from .bounded_repr import has_custom_repr
from .deadline import PICTURE_BUDGET, not_asked, remember_overrun
from .privacy import SAMPLE, SCHEMA, level
from .structural import collector_paused
from .summary import one_line
from .summary_here import here, metadata_line
from .text import cut

ASK_BUDGET = 0.08  # seconds for the automatic picture's asks, from the walled child's start (the fork of a
# large session takes 20-40 ms more, longer on busy cores: ``sandbox.FORK_ALLOWANCE`` bounds it)

SKIPPED = "its own code skipped: it was too slow before"

__all__ = ["ASK_BUDGET", "line_here", "variable_lines"]


def variable_lines(
    namespace: Mapping[str, Any],
    names: Sequence[str],
    privacy: str,
    width: int,
    setting: str,
    budget: float | None = None,
) -> dict[str, str]:
    """``{name: line}`` for ``names`` of ``namespace`` (module docstring); ``setting`` is the sandbox's
    isolation setting, which decides whether a walled child can ask, and ``budget`` the seconds its asks may
    take in all (the picture's ``ASK_BUDGET`` unless given)."""
    lvl = level(privacy)
    lines: dict[str, str] = {}
    asked: list[tuple[str, Any]] = []
    with collector_paused():
        for name in names:
            value = namespace.get(name)
            if not _worth_asking(value, lvl) or here(value, "type", lvl):
                lines[name] = line_here(value, privacy, width)
            elif not_asked(value) is not None:  # its own code overran before: said, from its type
                lines[name] = f"{_from_type(value, lvl, width)} ({SKIPPED})"
            else:
                asked.append((name, value))
    if asked:
        from .sandbox import ask_in_child  # the fork's machinery: with the first picture that asks

        asks: list[Callable[[], str]] = [partial(one_line, value, privacy, width) for _, value in asked]
        within = ASK_BUDGET if budget is None else budget
        answers = ask_in_child(setting, asks, within, PICTURE_BUDGET) or [None] * len(asked)
        for (name, value), answer in zip(asked, answers, strict=True):
            if answer is not None and "took too long" in answer:
                remember_overrun(value, "__repr__", PICTURE_BUDGET)
            lines[name] = answer if answer is not None else _from_type(value, lvl, width)
    return {name: lines[name] for name in names}


def line_here(value: Any, privacy: str, width: int) -> str:
    """``value``'s line made in this process: from structure (``summary_here.here``), else from its type
    alone — for what may not fork (a suggestion's facts, an exception's locals)."""
    lvl = level(privacy)
    with collector_paused():
        if here(value, "type", lvl):
            return one_line(value, privacy, width)
        return _from_type(value, lvl, width)


def _worth_asking(value: Any, lvl: int) -> bool:
    """Its line would say more than its type: an adapter describes it (from ``schema`` up), or (from
    ``sample`` up) its own ``__repr__`` does, or it is a callable whose signature is code to print."""
    if lvl < SCHEMA:
        return False
    if entry_for(value) is not None or callable(value):
        return True
    return lvl >= SAMPLE and has_custom_repr(value)


def _from_type(value: Any, lvl: int, width: int) -> str:
    return cut(metadata_line(value, lvl), width)
