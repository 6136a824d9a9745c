"""Bounded, type-aware descriptions of any value: what the assistant sees of the user's data.

Three promises hold for every value, however large, lazy or hostile:

* **Looking never runs anything.** Data-library values are described by their adapter (``adapters``), from
  metadata: a Dask frame is never computed, a LazyFrame never collected, a database never written. A third
  party's adapter that fails or overruns leaves the value to the generic description, with a short note.
* **Bounded cost and size.** ``one_line`` — the session picture and ``list_globals``, rebuilt for every
  question — calls nothing whose cost is unknown (no ``__len__`` written in Python, no property; a user
  ``__repr__`` only with a small budget). ``describe`` and ``type_details`` — ``get_repr``, ``get_type``,
  explicit requests — ask the object's own code once (its ``_repr_llm_``, or its ``__len__`` and
  ``__repr__`` together), bounded (``deadline.ask``); nothing else of a user class runs, and an object that
  overran once is not asked again in the session by any capability: the tool says so in one sentence.
* **Privacy levels** (``names`` < ``schema`` < ``sample`` < ``full``): ``names`` gives the type only;
  ``schema`` adds lengths, shapes, columns and dtypes but no value of any element, cell or string; ``sample``
  adds a few values; ``full`` larger bounded reprs.

No data library is imported here: a value can only be a DataFrame if the user already imported pandas.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from . import adapters, layout
from .adapters.numpy import is_dtype, is_ndarray
from .adapters.pandas import frame_columns, is_dataframe, is_index, is_series
from .bounded_repr import (
    Facts,
    Limits,
    attributes,
    brepr,
    has_custom_repr,
    is_environ,
    is_iterator,
    known_len,
    own_facts,
    signature_text,
    static,
)
from .deadline import (
    PICTURE_BUDGET,
    USER_CODE_BUDGET,
    NotAsked,
    Overtime,
    ask,
    failure,
    guarded,
    is_user_code,
    safe,
)
from .privacy import FULL, NAMES, PRIVACY_LEVELS, SAMPLE, SCHEMA, level
from .text import count, cut, type_name

__all__ = [
    "FULL",
    "NAMES",
    "PRIVACY_LEVELS",
    "SAMPLE",
    "SCHEMA",
    "Overtime",
    "cut",
    "describe",
    "frame_columns",
    "guarded",
    "is_dataframe",
    "is_dtype",
    "is_index",
    "is_iterator",
    "is_ndarray",
    "is_series",
    "is_user_code",
    "level",
    "one_line",
    "safe",
    "signature_text",
    "type_details",
    "type_name",
]

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType)


# -- one line ------------------------------------------------------------------------------------------------
def one_line(
    value: Any,
    privacy: str = "sample",
    width: int = 100,
    *,
    explicit: bool = False,
    facts: Facts | None = None,
) -> str:
    """A single line such as ``DataFrame 10,000,000×3: a int64, b object`` or ``list, 5 items: [1, 2, …]``.

    Built for the session picture: nothing of unknown cost runs unless ``explicit`` (a header of ``get_repr``:
    the length comes from ``facts``, the one ask of the object itself, else from asking its ``__len__``).
    """
    lvl = level(privacy)
    try:
        text = _one_line(value, lvl, not explicit, facts)
    except Exception as exc:  # a summary must never fail
        text = f"{type_name(value)} (summary failed: {type(exc).__name__})"
    return cut(" ".join(text.split()), width)


def _is(value: Any, kinds: type | tuple[type, ...]) -> bool:
    """``isinstance`` by the type alone: ``isinstance`` asks a failing object for its ``__class__``, which a
    user class may make a property."""
    return issubclass(type(value), kinds)


def _one_line(value: Any, lvl: int, picture: bool, facts: Facts | None = None) -> str:
    tname = type_name(value)
    if lvl <= NAMES:
        return tname
    if is_environ(value):
        return f"environment variables ({len(value)}, contents withheld)"
    if _is(value, type):
        return f"class {value.__qualname__}" + (
            f" (from {value.__module__})" if value.__module__ != "__main__" else ""
        )
    if value is None or _is(value, (bool, int, float, complex)):
        return tname if lvl == SCHEMA else f"{tname} {brepr(value, Limits(lvl, picture))}"
    if _is(value, (str, bytes, bytearray)):
        size = f"{len(value):,} {'chars' if _is(value, str) else 'bytes'}"
        if lvl == SCHEMA:
            return f"{tname}, {size}"
        return f"{tname}, {size}: {value[:60]!r}{'…' if len(value) > 60 else ''}"
    base = layout.builtin_base(type(value))
    if base is not None:  # read through the base type: a subclass's own __len__/__iter__ never runs
        noun = "key" if base is dict else "item"
        head = f"{tname}, {count(layout.builtin_len(value, base), noun)}"
        if lvl == SCHEMA:
            kinds = _element_types(value, base)
            return head + (f" of {kinds}" if kinds else "")
        return f"{head}: {brepr(value, Limits(SAMPLE, picture), 1)}"
    try:
        known = adapters.one_line(value, lvl, picture)
    except adapters.Degraded as failed:  # a third party's adapter: the generic line, and why
        return f"{_generic_line(value, lvl, picture, facts)} {failed.note}"
    return known if known is not None else _generic_line(value, lvl, picture, facts)


def _generic_line(value: Any, lvl: int, picture: bool, facts: Facts | None = None) -> str:
    """The line of a value no adapter describes."""
    tname = type_name(value)
    if _is(value, types.ModuleType):
        return f"module {value.__name__}"
    if _is(value, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        name = getattr(value, "__name__", "")
        return f"{type(value).__name__} {name} ({_gen_state(value)}, never consumed)"
    if _is(value, _FUNCTIONS):
        sig = signature_text(value)
        kind = "function" if _is(value, types.FunctionType) else tname
        return f"{kind} {sig or getattr(value, '__name__', '')}"
    if is_iterator(value):
        return f"{tname} (iterator, never consumed)"
    if callable(value) and not has_custom_repr(value):
        dynamic = static(type(value), "__getattr__") is not None  # a proxy: asking it may be a remote call
        budget = PICTURE_BUDGET if picture else USER_CODE_BUDGET
        sig = None if picture and dynamic else signature_text(value, budget)
        return f"{tname} callable" + (f" {sig}" if sig else "")
    n = known_len(value) if picture else (facts or own_facts(value, length=True, text=False)).length
    head = tname + (f", {n:,} items" if n is not None else "")
    if lvl == SCHEMA or not has_custom_repr(value):
        return head if has_custom_repr(value) else head + " object"
    return f"{head}: {brepr(value, Limits(SAMPLE, picture), 1)}"


def asks_itself(value: Any) -> bool:
    """Whether describing ``value`` asks its own code (``_generic_line``'s last case: an object of no builtin
    kind, with its own ``__repr__`` or a ``__len__`` written in Python)."""
    t = type(value)
    if issubclass(t, (type, bool, int, float, complex, str, bytes, bytearray, types.ModuleType, *_FUNCTIONS)):
        return False
    if value is None or layout.builtin_base(t) is not None:
        return False
    if issubclass(t, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)) or is_iterator(
        value
    ):
        return False
    return not (callable(value) and not has_custom_repr(value))


def _element_types(value: Any, base: type, peek: int = 5) -> str:
    """Types (not values) of the first few elements: safe at the ``schema`` level."""
    if base is dict:
        keys = sorted({type(k).__name__ for k in layout.builtin_keys(value, peek)})
        vals = sorted({type(v).__name__ for v in layout.builtin_items(value, dict, peek)})
        return f"{'|'.join(keys)} → {'|'.join(vals)}" if keys else ""
    kinds = sorted({type(v).__name__ for v in layout.builtin_items(value, base, peek)})
    return "|".join(kinds)


def _gen_state(value: Any) -> str:
    try:
        if isinstance(value, types.GeneratorType):
            return inspect.getgeneratorstate(value).removeprefix("GEN_").lower()
        if isinstance(value, types.CoroutineType):
            return inspect.getcoroutinestate(value).removeprefix("CORO_").lower()
    except Exception:
        pass
    return "unknown state"


# -- get_type ------------------------------------------------------------------------------------------------
def type_details(value: Any, privacy: str) -> list[str]:
    """The lines ``get_type`` adds after the class and MRO: an adapter's (shape, dtypes, device,
    partitions …), else the length of a sized object — its ``__len__``, when written in Python, asked once
    and bounded (``own_facts``); an object that overran before is not asked, and a line says so."""
    lvl = level(privacy)
    if lvl < SCHEMA:
        return []
    note: list[str] = []
    try:
        known = adapters.details(value, lvl)
    except adapters.Degraded as failed:
        known, note = None, [failed.note]
    except Exception as exc:
        return [f"(details failed: {type(exc).__name__})"]
    if known is not None:
        return known
    facts = own_facts(value, length=True, text=False)
    if facts.note:
        return [facts.note, *note]
    return ([f"length: {facts.length:,}"] if facts.length is not None else []) + note


# -- multi-line description ----------------------------------------------------------------------------------
def describe(value: Any, privacy: str = "sample", limit: int = 4000) -> str:
    """A bounded multi-line description: the view ``get_repr`` gives of a value."""
    lvl = level(privacy)
    try:
        text = _describe(value, lvl)
    except Exception as exc:
        text = f"<{type_name(value)}: description failed ({type(exc).__name__})>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(value: Any, lvl: int) -> str:
    if lvl <= NAMES:
        return f"<{type_name(value)}> (privacy level 'names': values are not shown)"
    if is_environ(value):
        return f"<environment variables ({len(value)}): their contents are never shown to the assistant>"
    if lvl >= SAMPLE:
        llm = _repr_llm(value)
        if llm is not None:
            return llm
    try:
        known = adapters.describe(value, lvl)
    except adapters.Degraded as failed:  # a third party's adapter: the generic description, and why
        facts = _facts(value, lvl)
        if facts is not None and facts.note:
            return f"{type_name(value)}: {facts.note}\n{failed.note}"
        header = cut(" ".join(_generic_line(value, SCHEMA, False, facts).split()), 200)  # not asked again
        return f"{_generic(value, lvl, header, facts)}\n{failed.note}"
    if known is not None:
        return known
    facts = _facts(value, lvl)
    if facts is not None and facts.note:
        return f"{type_name(value)}: {facts.note}"
    return _generic(value, lvl, facts=facts)


def _facts(value: Any, lvl: int) -> Facts | None:
    """The one ask of the object itself (its length and repr together), for an object that has its own."""
    if not asks_itself(value):
        return None
    want_text = lvl >= SAMPLE and has_custom_repr(value)
    return own_facts(value, length=True, text=want_text, width=Limits(lvl).other)


def _generic(value: Any, lvl: int, header: str | None = None, facts: Facts | None = None) -> str:
    """The description of a value no adapter describes: its header, its bounded repr, its attributes."""
    header = header or one_line(value, "schema", 200, explicit=True, facts=facts)
    if lvl == SCHEMA:
        attrs = attributes(value, lvl)
        return header + (f"\nattributes: {attrs}" if attrs else "")
    if _is(value, (str, bytes, bytearray)) or layout.builtin_base(type(value)) is not None:
        return f"{header}\n{brepr(value, Limits(lvl))}"
    body = brepr(value, Limits(lvl), facts=facts)
    attrs = "" if has_custom_repr(value) else attributes(value, lvl)
    return f"{header}\n{body}" + (f"\nattributes: {attrs}" if attrs else "")


def _repr_llm(value: Any) -> str | None:
    """The object's own ``_repr_llm_()`` (looked up on the type, so ``__getattr__`` is never triggered),
    asked once and bounded (``deadline.ask``)."""
    if static(type(value), "_repr_llm_") is None:
        return None
    try:
        text = ask(value, lambda: value._repr_llm_(), "_repr_llm_")
    except NotAsked as exc:
        return f"{type_name(value)}: {exc}"
    except (Exception, Overtime) as exc:
        return failure("_repr_llm_")(exc)
    return text if isinstance(text, str) else None
