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

``no_user_code`` is the other way round: a block in which no code the session wrote may start at all
(``expression``'s in-process levels). Every frame of the user's code is stopped before its first line
(``UserCodeNeeded``), in this thread and in the helper threads ``bounded`` starts for it, and the block says
afterwards whether that happened, so its caller can throw the result away and read in the walled child.

``ask`` is how every capability runs an object's own code (its ``__len__``, ``__repr__``, ``_repr_llm_``, a
property, ``__dir__``): once per look, through ``bounded`` — a ``__len__`` that is a slow remote call is
abandoned at its budget instead of holding the tool until its deadline —, and never again in this session for
an object that overran once, whichever capability asks (``NotAsked`` says so in one sentence). The session
picture asks with a small budget (``PICTURE_BUDGET``), an explicit request (``get_type``, ``get_repr``) with
``USER_CODE_BUDGET``.
"""

from __future__ import annotations

import gc
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


class UserCodeNeeded(BaseException):
    """Raised at the first line of the session's own code inside a ``no_user_code`` block (a
    ``BaseException``: a library's ``except Exception`` must not carry on as if the call had returned)."""


_local = threading.local()


class NoUserCode:
    """A block (``with no_user_code() as block:``) in which no Python code the session wrote runs where the
    block looks (``block.run(func, …)``, and every ``guarded``/``ask``/``bounded`` call inside it): its first
    frame raises ``UserCodeNeeded`` before its first line — a property, ``__getattr__``, ``__eq__``,
    ``__hash__``, ``__array__``, ``__index__``, ``__repr__``, a generator's body, an accessor or extension
    dtype of the user's. ``tripped`` says whether that happened (a library may have swallowed the exception).
    The cyclic collector is off for the block, so no finaliser or weakref callback of the session's garbage
    runs in it. A class, not a generator-based context manager: it wraps every in-process ``eval_expr``."""

    __slots__ = ("_collecting", "_outer", "tripped")

    def __init__(self) -> None:
        self.tripped = False

    def stop(self, frame: Any) -> bool:
        """True (and tripped) when ``frame`` is the session's own code, which must not start here. A
        finaliser (``__del__``) is let run: the collector chose its moment, not the reader."""
        code = frame.f_code
        if not is_user_code(code.co_filename) or code.co_name == "__del__":
            return False
        if code.co_filename[:1] == "<" and _generated_by_library(frame):
            return False
        self.tripped = True
        return True

    def tracer(self, frame: Any, event: str, arg: Any) -> Any:
        if self.stop(frame):
            raise UserCodeNeeded
        return None  # nothing inside a library frame is traced

    def run(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)`` — an operation on the session's objects — under the tracer. Only such
        operations are traced: the reader's own steps between them would cost a traced call each."""
        previous = sys.gettrace()
        sys.settrace(self.tracer)
        try:
            return func(*args, **kwargs)
        finally:
            sys.settrace(previous)

    def __enter__(self) -> NoUserCode:
        self._outer = getattr(_local, "no_user", None)
        self._collecting = gc.isenabled()
        _local.no_user = self
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        _local.no_user = self._outer
        if self._collecting:
            gc.enable()
        if self._outer is not None and self.tripped:
            self._outer.tripped = True


no_user_code = NoUserCode


def _generated_by_library(frame: Any) -> bool:
    """Code compiled from a string by a library for its own types (a namedtuple's ``__new__``, a dataclass's
    ``__init__`` in a library module), told by the module whose globals it runs in."""
    name = frame.f_globals.get("__name__")
    if not isinstance(name, str) or name == "__main__":
        return False
    if name.startswith("namedtuple_"):
        return True
    file = getattr(sys.modules.get(name), "__file__", None)
    return isinstance(file, str) and not is_user_code(file)


def guarded(func: Callable[[], T], budget: float = USER_CODE_BUDGET) -> T:
    """Run ``func`` (which may call the user's Python code) and stop the user's code once ``budget`` seconds
    have passed, by raising ``Overtime`` in a frame of the user's code.

    Only the user's frames are traced (line by line, and opcode by opcode, since ``while True: pass`` makes
    no line events on Python 3.10); library frames are not traced at all, which keeps pandas and friends fast
    and means an exception is never injected into a library's critical section.
    """
    no_user = getattr(_local, "no_user", None)
    if no_user is not None:  # inside ``no_user_code``: the user's code does not run at all
        previous = sys.gettrace()
        sys.settrace(no_user.tracer)
        try:
            return func()
        finally:
            sys.settrace(previous)
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
    no_user = getattr(_local, "no_user", None)

    def job() -> T:
        _local.no_user = no_user  # a ``no_user_code`` block reaches into its helper thread
        try:
            return guarded(func, budget)
        finally:
            _local.no_user = None

    try:
        return within(job, budget + 0.005)
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
