"""Asking a value's adapter: ours directly, a third party's bounded in time, size and type.

The built-in adapters are part of pyaichat and keep to the protocol by construction (their tests fingerprint
the data and time every adapter); they are called directly, on the caller's thread. A third party's adapter
is code we have not read: it runs in a worker thread under a deadline — the session picture's for
``one_line`` (``guard.PICTURE_BUDGET``), the user code's for ``details``/``describe`` — and its answer must be
text (lines for ``details``) and is cut to size. One that raises, overruns or answers anything else raises
``Degraded`` here: the summary then gives the value the generic description every other object gets, with
``Degraded.note`` (a few words) after it. A value it was too slow for is not asked again, and each problem
is also listed once by ``/tools``. Masking and the output limit apply afterwards to every answer alike.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from ..deadline import PICTURE_BUDGET, USER_CODE_BUDGET, Overtime, bounded
from .lookup import AdapterEntry, entry_for, report
from .protocol import DatabaseAdapter

T = TypeVar("T")
LINE_CHARS = 300  # one line of a third party's answer
MAX_LINES = 60  # lines of its details
TEXT_CHARS = 8000  # its describe (the caller cuts to its own limit after)


class Degraded(Exception):
    """A third-party adapter could not describe this value; ``note`` says why, for the generic text."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def one_line(value: Any, lvl: int, picture: bool = True) -> str | None:
    """The adapter's one line, or ``None`` when no adapter knows the value. ``picture``: for the automatic
    session picture (a third party's adapter then has the picture's small budget)."""
    budget = PICTURE_BUDGET if picture else USER_CODE_BUDGET
    return _asked(value, lambda adapter: adapter.one_line(value, lvl), budget, _line)


def details(value: Any, lvl: int) -> list[str] | None:
    """The lines ``get_type`` adds, or ``None``."""
    return _asked(value, lambda adapter: adapter.details(value, lvl), USER_CODE_BUDGET, _lines)


def describe(value: Any, lvl: int) -> str | None:
    """What ``get_repr`` shows, or ``None``."""
    return _asked(value, lambda adapter: adapter.describe(value, lvl), USER_CODE_BUDGET, _text)


def _asked(value: Any, ask: Callable[[Any], Any], budget: float, check: Callable[[Any], T]) -> T | None:
    """``ask`` of the adapter that knows ``value`` (``None``: none does): ours directly, a third party's
    bounded by ``budget`` and its answer read by ``check``."""
    entry = entry_for(value)
    if entry is None:
        return None
    adapter = _adapter(entry)
    if entry.builtin:
        return ask(adapter)
    return _bounded(entry, value, lambda: ask(adapter), budget, check)


def database_for(value: Any) -> DatabaseAdapter | None:
    """The database adapter that can read ``value`` (a connection or engine), or ``None``."""
    entry = entry_for(value)
    adapter = entry.adapter() if entry is not None else None
    if not isinstance(adapter, DatabaseAdapter):
        return None
    try:
        return adapter if adapter.is_database(value) else None
    except Exception:
        if entry is not None and entry.builtin:
            raise
        return None


# -- a third party's adapter ---------------------------------------------------------------------------------
def _adapter(entry: AdapterEntry) -> Any:
    adapter = entry.adapter()
    if adapter is None:  # a plugin that could not be loaded (``problems`` says why)
        raise Degraded(_note(entry, "could not be loaded"))
    return adapter


def _bounded(
    entry: AdapterEntry, value: Any, ask: Callable[[], Any], budget: float, check: Callable[[Any], T]
) -> T | None:
    if _slow.seen(value):
        raise Degraded(_note(entry, "was too slow for it before"))
    try:
        answer = bounded(ask, budget)
    except Overtime:
        _slow.add(value)
        _problem(entry, f"took over {budget * 1000:g} ms on a {_type(value)}")
        raise Degraded(_note(entry, "took too long")) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # its failure is the adapter's, never the caller's
        _problem(entry, f"raised {type(exc).__name__} on a {_type(value)}")
        raise Degraded(_note(entry, f"raised {type(exc).__name__}")) from None
    if answer is None:
        return None
    try:
        return check(answer)
    except TypeError as exc:
        _problem(entry, f"answered {exc} on a {_type(value)}")
        raise Degraded(_note(entry, f"answered {exc}")) from None


def _line(answer: Any) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"{type(answer).__name__}, not text")
    return answer[:LINE_CHARS]


def _lines(answer: Any) -> list[str]:
    if not isinstance(answer, list) or not all(isinstance(line, str) for line in answer):
        raise TypeError(f"{type(answer).__name__}, not a list of lines")
    return [line[:LINE_CHARS] for line in answer[:MAX_LINES]]


def _text(answer: Any) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"{type(answer).__name__}, not text")
    return answer[:TEXT_CHARS]


def _note(entry: AdapterEntry, what: str) -> str:
    return f"[{entry.source.removeprefix('plugin ')} adapter {what}; generic summary]"


def _problem(entry: AdapterEntry, what: str) -> None:
    report(f"The adapter for {entry.module} ({entry.source}) {what}; such values are described generically.")


def _type(value: Any) -> str:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}"


class _Remembered:
    """Values a third-party adapter overran on: not asked again in this session (weakly held where the
    value allows it, else by id and type)."""

    MAX = 4096

    def __init__(self) -> None:
        self._seen: dict[int, tuple[type, Any]] = {}

    def seen(self, value: Any) -> bool:
        entry = self._seen.get(id(value))
        if entry is None:
            return False
        cls, ref = entry
        if type(value) is not cls or (ref is not None and ref() is not value):
            del self._seen[id(value)]  # another object now has that id
            return False
        return True

    def add(self, value: Any) -> None:
        if len(self._seen) >= self.MAX:
            self._seen.clear()
        try:
            ref: Any = weakref.ref(value)
        except TypeError:
            ref = None
        self._seen[id(value)] = (type(value), ref)


_slow = _Remembered()
