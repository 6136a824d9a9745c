"""Running the user's code (a ``__repr__``, a property, a ``_repr_llm_``) under a deadline, safely.

``guarded`` stops runaway *user* code from inside: a trace function checks the clock on every line of code
typed at the prompt or in the user's own files and raises ``Overtime`` there. It never raises inside library
code (the standard library, site-packages, pyaichat itself): an exception injected between a library's
``lock.acquire()`` and its ``try`` leaves the lock or its thread pool broken for good — with Dask's threaded
scheduler that is ``RuntimeError: release unlocked lock`` from ``queue.get``. Library calls are left to
finish; the caller's own deadline (``workers.within``: ``invoke.run_with_deadline`` for a capability,
``bounded`` here for the session picture) abandons them instead.

``bounded`` runs a call in a helper thread under ``guarded`` and gives up waiting at its budget, so even code
stuck in C or in a library cannot hold up the caller.

``ask`` is how every capability runs an object's own code (its ``__len__``, ``__repr__``, ``_repr_llm_``, a
property, ``__dir__``): once per look, through ``bounded`` — a ``__len__`` that is a slow remote call is
abandoned at its budget instead of holding the tool until its deadline —, and never again in this session for
an object that overran once, whichever capability asks (``NotAsked`` says so in one sentence). The session
picture asks with a small budget (``PICTURE_BUDGET``), an explicit request (``get_type``, ``get_repr``) with
``USER_CODE_BUDGET``. Since the session's process reads by structure only (``structural``), these run in the
walled child (``sandbox``), where the object's code may run on a copy; what overran there is remembered
here (``remember_overrun``), so the next ask is not even forked for.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from ..workers import Abandoned, within

T = TypeVar("T")
USER_CODE_BUDGET = 0.5  # seconds one user __repr__/__len__/_repr_llm_ may take on explicit request
PICTURE_BUDGET = 0.025  # seconds one user __repr__ may take in the automatic session picture


class Overtime(BaseException):
    """Raised inside the user's own code that ran past its budget (never inside a library's)."""


_local = threading.local()


def guarded(func: Callable[[], T], budget: float = USER_CODE_BUDGET) -> T:
    """Run ``func`` (which may call the user's Python code) and stop the user's code once ``budget`` seconds
    have passed, by raising ``Overtime`` in a frame of the user's code.

    Only the user's frames are traced (line by line, and opcode by opcode, since ``while True: pass`` makes
    no line events on Python 3.10); library frames are not traced at all, which keeps pandas and friends fast
    and means an exception is never injected into a library's critical section.
    """
    outer = getattr(_local, "deadline", None)
    deadline = time.perf_counter() + budget
    if outer is not None:
        deadline = min(deadline, outer)

    def in_user_frame(frame: Any, event: str, arg: Any) -> Any:
        if time.perf_counter() > deadline:
            raise Overtime
        return in_user_frame

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        if not is_user_code(frame.f_code.co_filename):
            return None  # a library frame: never traced, never interrupted
        frame.f_trace_opcodes = True
        if time.perf_counter() > deadline:
            raise Overtime
        return in_user_frame

    previous = sys.gettrace()
    _local.deadline = deadline
    sys.settrace(on_call)
    try:
        return func()
    finally:
        sys.settrace(previous)
        _local.deadline = outer


def safe(
    func: Callable[[], T], fallback: Callable[[BaseException], T], budget: float = USER_CODE_BUDGET
) -> T:
    """``guarded(func)``, turning any failure (or overtime) into ``fallback(exc)``."""
    try:
        return guarded(func, budget)
    except (Exception, Overtime) as exc:
        return fallback(exc)


def failure(what: str) -> Callable[[BaseException], str]:
    """A fallback for ``safe`` that says what failed, in a few words."""

    def describe_failure(exc: BaseException) -> str:
        if isinstance(exc, Overtime):
            return f"<{what} took too long>"
        return f"<{what} raised {type(exc).__name__}>"

    return describe_failure


# -- whose code is it ----------------------------------------------------------------------------------------
_user_code: dict[str, bool] = {}
_LIBRARY_ROOTS: tuple[str, ...] = ()


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    # pyaichat itself counts as library code, also when installed in editable mode.
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return tuple(sorted(r for r in roots if r))


def is_user_code(filename: str) -> bool:
    """True for code typed at the prompt or in the user's own files (traced line by line)."""
    global _LIBRARY_ROOTS
    if not _LIBRARY_ROOTS:
        _LIBRARY_ROOTS = _library_roots() or ("\0",)
    known = _user_code.get(filename)
    if known is None:
        library = filename.startswith(_LIBRARY_ROOTS) or filename.startswith("<frozen")
        known = _user_code[filename] = not library
    return known


# -- a call that cannot hold up its caller -------------------------------------------------------------------
def bounded(func: Callable[[], T], budget: float = PICTURE_BUDGET) -> T:
    """``func()`` under ``guarded`` in a worker thread; ``Overtime`` if it has not finished after ``budget``
    seconds (the worker is abandoned and ends when the call does: nothing is interrupted inside a library)."""
    try:
        return within(lambda: guarded(func, budget), budget + 0.005)
    except Abandoned:
        raise Overtime from None


# -- the one bounded ask, and objects that overran once ------------------------------------------------------
class NotAsked(Exception):
    """The object's own code overran its budget before in this session, so it is not asked again."""

    def __init__(self, value: Any, what: str, budget: float) -> None:
        self.what, self.budget = what, budget
        super().__init__(
            f"{type(value).__qualname__}'s own code is not asked again: its {what} took longer than "
            f"{budget:g} s earlier in this session."
        )


def ask(value: Any, func: Callable[[], T], what: str, budget: float = USER_CODE_BUDGET) -> T:
    """``func()``, which runs ``value``'s own code (``what``: ``__len__``, ``__repr__``, ``.prop``), under
    ``bounded``; ``Overtime`` at ``budget``, and ``value`` is then remembered: asked again, by any capability,
    it raises ``NotAsked``."""
    found = _overran_entry(value)
    if found is not None:
        raise NotAsked(value, found[2], found[3])
    try:
        return bounded(func, budget)
    except Overtime:
        remember_overrun(value, what, budget)
        raise


# (id of the object, the attribute or None for the object's own describing code) → (type, weak ref, what, s)
_overran: dict[tuple[int, str | None], tuple[type, Any, str, float]] = {}
_OVERRAN_MAX = 4096


def not_asked(value: Any, attribute: str | None = None) -> NotAsked | None:
    """The sentence for ``value`` when its own code overran before in this session (else ``None``); given
    ``attribute``, when reading that attribute of it did (a property that never returns)."""
    found = _overran_entry(value, attribute)
    return None if found is None else NotAsked(value, found[2], found[3])


def _overran_entry(value: Any, attribute: str | None = None) -> tuple[type, Any, str, float] | None:
    key = (id(value), attribute)
    entry = _overran.get(key)
    if entry is None:
        return None
    cls, ref = entry[0], entry[1]
    if type(value) is not cls or (ref is not None and ref() is not value):
        del _overran[key]  # another object now has that id
        return None
    return entry


def remember_overrun(
    value: Any, what: str = "__repr__", budget: float = PICTURE_BUDGET, attribute: str | None = None
) -> None:
    """Remember ``value`` (weakly where it allows weak references, else by id and type); given
    ``attribute``, only that attribute's reading is not asked again."""
    if len(_overran) >= _OVERRAN_MAX:
        _overran.clear()
    try:
        ref: Any = weakref.ref(value)
    except TypeError:
        ref = None
    _overran[(id(value), attribute)] = (type(value), ref, what, budget)
