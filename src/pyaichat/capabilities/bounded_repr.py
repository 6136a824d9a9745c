"""Bounded reprs of plain values, and the small helpers every summary uses.

Nothing builds a huge string first: strings are sliced before ``repr``, containers are walked item by item up
to a few items, large sized objects are described by type and length alone. Values a data-library adapter
knows are shown by that adapter's one line, never by their own ``repr`` (a lazy frame's repr may compute).

Every call into an object's own code goes through ``deadline.ask``: bounded, never again in this session for
an object that overran once, whichever capability asks. Builtin containers (subclasses too) are read through
their base type (``layout``): their count and items cost nothing and run none of a subclass's code. Two modes,
chosen by ``Limits.picture``:

* the **session picture** (``list_globals`` and the picture rebuilt for every question) calls nothing whose
  cost is unknown: ``len`` only where it is implemented in C, a user ``__repr__`` only with a small budget;
* an **explicit request** (``get_type``, ``get_repr``) asks the object itself once (``own_facts``: its
  ``__len__`` written in Python and its ``__repr__``, together, under ``USER_CODE_BUDGET``); what it holds
  (a container's items) is shown as the picture would.
"""

from __future__ import annotations

import inspect
import itertools
import types
from collections import deque
from typing import Any, NamedTuple

from . import adapters, layout, structural
from .deadline import PICTURE_BUDGET, USER_CODE_BUDGET, NotAsked, Overtime, ask, failure, guarded
from .layout import is_environ
from .privacy import FULL, SCHEMA
from .redact import REDACTED, is_secret_name
from .structural import MISSING
from .text import cut, type_name

LARGE = 10_000


# -- small helpers -------------------------------------------------------------------------------------------
_OBJECT_REPR = object.__dict__["__repr__"]


def has_custom_repr(value: Any) -> bool:
    return structural.lookup(type(value), "__repr__") is not _OBJECT_REPR


def is_iterator(value: Any) -> bool:
    cls = type(value)
    return (
        structural.lookup(cls, "__next__") is not MISSING
        and structural.lookup(cls, "__iter__") is not MISSING
    )


def static(cls: type, name: str) -> Any:
    """``cls.name`` found in the class's own namespaces along its MRO, without running a metaclass's code
    (``None`` when absent)."""
    found = structural.lookup(cls, name)
    return None if found is MISSING else found


def known_len(value: Any) -> int | None:
    """``len(value)`` where it costs nothing and runs none of the user's code: a builtin container's count
    through its base type (a subclass's own ``__len__`` is not called), or a ``__len__`` implemented in C. A
    ``__len__`` written in Python may be a remote call or a whole computation, so it is never called here."""
    base = layout.builtin_base(type(value))
    if base is not None:
        return layout.builtin_len(value, base)
    method = static(type(value), "__len__")
    if not isinstance(method, (types.WrapperDescriptorType, types.MethodDescriptorType)):
        return None
    try:
        n = len(value)
    except Exception:
        return None
    return n if isinstance(n, int) else None


def _python_len(value: Any) -> bool:
    """The object has a ``__len__`` written in Python (its own code: asked, never just called)."""
    return isinstance(static(type(value), "__len__"), types.FunctionType)


class Facts(NamedTuple):
    """What one ask of an object's own code found (``own_facts``): its length and repr, or why not."""

    length: int | None
    text: str | None  # its repr, cut, or a short ``<…>`` saying why there is none
    note: str | None = None  # one sentence: it is not asked again in this session


def own_facts(
    value: Any, *, length: bool, text: bool, width: int = 400, budget: float = USER_CODE_BUDGET
) -> Facts:
    """The one bounded ask of ``value``'s own code for an explicit request: its length (when only a
    ``__len__`` written in Python knows it) and its ``__repr__`` (with ``text``), computed together under
    ``deadline.ask``; an object that overran before is not asked, and ``note`` says so."""
    n = known_len(value)
    ask_len = length and n is None and _python_len(value) and not is_iterator(value)
    if not (ask_len or text):
        return Facts(n, None)
    what = " and ".join(w for w, on in (("__len__", ask_len), ("__repr__", text)) if on)
    describe = failure(f"repr of {type_name(value)}")

    def both() -> tuple[int | None, str | None]:
        got = n
        if ask_len:
            try:
                found = len(value)
                got = found if isinstance(found, int) else None
            except Exception:
                got = None
        shown = None
        if text:
            try:
                found_text = repr(value)
                shown = cut(found_text if isinstance(found_text, str) else str(type(found_text)), width)
            except Exception as exc:
                shown = describe(exc)
        return got, shown

    try:
        got, shown = ask(value, both, what, budget)
    except NotAsked as exc:
        return Facts(n, None, str(exc))
    except Overtime:
        note = (
            f"its {what} took too long (over {budget:g} s) and was abandoned; "
            f"{type(value).__qualname__}'s own code is not asked again in this session."
        )
        return Facts(n, None, note[:1].upper() + note[1:])
    except Exception as exc:
        return Facts(n, describe(exc) if text else None)
    return Facts(got, shown)


def signature_text(obj: Any, budget: float = USER_CODE_BUDGET) -> str | None:
    """``name(params)`` of a callable. A function's or a class's is read under ``guarded``; a callable
    object's may run its own code (``__signature__``, ``__getattr__``), so it is asked (``deadline.ask``)."""
    try:
        if issubclass(type(obj), (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
            return guarded(lambda: _signature_text(obj))
        return ask(obj, lambda: _signature_text(obj), "signature", budget)
    except (Exception, Overtime):
        return None


def _signature_text(obj: Any) -> str | None:
    """From ``inspect.signature``, else the first line of a builtin's docstring (numpy ufuncs)."""
    name = getattr(obj, "__name__", None) or type(obj).__name__
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        pass
    except Exception:
        return None
    doc = getattr(obj, "__doc__", None)
    if isinstance(doc, str):
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        if (first.startswith(f"{name}(") and first.endswith(")")) or (
            "->" in first and first.startswith(name)
        ):
            return first
    return None


def user_repr(value: Any, picture: bool, width: int) -> str:
    """``repr(value)`` of an object with its own ``__repr__``, asked (``deadline.ask``): in the picture with a
    small budget, else with ``USER_CODE_BUDGET``; an object that overran once is not asked again."""
    what = f"repr of {type_name(value)}"
    try:
        text = ask(value, lambda: repr(value), "__repr__", PICTURE_BUDGET if picture else USER_CODE_BUDGET)
    except NotAsked:
        return f"<{what} skipped: it was too slow before>"
    except (Overtime, Exception) as exc:
        return failure(what)(exc)
    return cut(text if isinstance(text, str) else str(type(text)), width)


# -- bounded repr --------------------------------------------------------------------------------------------
class Limits:
    """How much of a value ``brepr`` may show, by privacy level, and whether it is for the session picture."""

    def __init__(self, privacy_level: int, picture: bool = False) -> None:
        full = privacy_level >= FULL
        self.level = privacy_level
        self.picture = picture
        self.items = 20 if full else 6  # items per container (top level)
        self.depth = 4 if full else 3
        self.string = 400 if full else 80
        self.other = 400 if full else 120


def brepr(value: Any, lim: Limits, depth: int = 0, facts: Facts | None = None) -> str:
    """A bounded repr (sample/full levels only): reprlib-like, with secret-named keys and attributes
    masked. ``facts``: what the one ask of the object itself found (an explicit request's top level); what a
    container holds is shown as the picture would."""
    t = type(value)
    if is_environ(value):
        return "<environment variables: contents withheld>"
    if value is None or issubclass(t, (bool, float, complex)):
        return repr(value)
    if issubclass(t, int):
        if value.bit_length() > 256:
            return f"<int with about {int(value.bit_length() * 0.30103):,} digits>"
        return repr(value)
    if issubclass(t, (str, bytes, bytearray)):
        limit = lim.string if depth else lim.string * 4
        if len(value) <= limit:
            return repr(value)
        return repr(value[:limit]) + f"…(+{len(value) - limit:,} more)"
    if depth >= lim.depth:
        return short_header(value)
    named = _named(value)
    if named is not None:
        return named
    if layout.builtin_base(t) is not None:
        return _container(value, lim, depth)
    try:  # a data library's own summary, never its repr
        known = adapters.one_line(value, max(lim.level, SCHEMA), lim.picture)
    except adapters.Degraded:  # a third party's adapter failed: the generic repr below
        known = None
    if known is not None:
        return "<" + cut(" ".join(known.split()), 80) + ">"
    if is_iterator(value) or issubclass(t, (types.GeneratorType, types.CoroutineType)):
        return f"<{type_name(value)} (iterator, not consumed)>"
    if facts is None and not (lim.picture or depth):
        facts = own_facts(value, length=True, text=has_custom_repr(value), width=lim.other)
    if facts is not None and facts.note:
        return f"<{type_name(value)}: {facts.note}>"
    n = facts.length if facts is not None else known_len(value)
    if n is not None and n > LARGE:
        return f"<{type_name(value)} with {n:,} items>"
    if not has_custom_repr(value):
        return f"<{type_name(value)} object>"
    if facts is not None and facts.text is not None:
        return facts.text
    return user_repr(value, True, lim.other)


_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)


def _named(value: Any) -> str | None:
    """A function, class or module by its name, read through the types' own fields (``<function area>``,
    ``<class 'pandas.DataFrame'>``): their ``repr`` is the name and an address, never worth asking."""
    t = type(value)
    if not issubclass(t, _CODE):
        return None
    if issubclass(t, type):
        module = structural.module_of(value)
        name = structural.qualname_of(value)
        return f"<class '{name}'>" if module in ("builtins", "") else f"<class '{module}.{name}'>"
    if t is types.ModuleType:
        module_name = structural.module_namespace(value).get("__name__")
        return f"<module {module_name!r}>" if type(module_name) is str else "<module>"
    found: Any
    try:
        found = structural.attribute(value, "__qualname__" if t is types.FunctionType else "__name__")
    except (structural.NotStructural, structural.NoAttribute):
        found = None
    kind = "function" if t is types.FunctionType else "bound method" if t is types.MethodType else "built-in"
    return f"<{kind} {found}>" if type(found) is str else f"<{kind}>"


def _container(value: Any, lim: Limits, depth: int) -> str:
    """A builtin container (or a subclass), read through its base type: none of a subclass's code runs."""
    t = type(value)
    name = structural.name_of(t)  # through ``type``'s own descriptor: a metaclass runs nothing
    base = layout.builtin_base(t)
    assert base is not None
    size = layout.builtin_len(value, base)
    n_items = max(lim.items // (depth + 1), 2)
    if base is dict:
        parts = []
        keys = layout.builtin_keys(value, n_items)
        for k, v in zip(keys, layout.builtin_items(value, dict, n_items), strict=False):
            shown = REDACTED if type(k) is str and is_secret_name(k) else brepr(v, lim, depth + 1)
            parts.append(f"{brepr(k, lim, depth + 1)}: {shown}")
        body = "{" + ", ".join(parts) + _more(size - len(parts)) + "}"
        return body if t is dict else f"{name}({body})"
    items = [brepr(v, lim, depth + 1) for v in layout.builtin_items(value, base, n_items)]
    rest = _more(size - len(items))
    fields = structural.lookup(t, "_fields") if base is tuple else MISSING
    if type(fields) is tuple and all(type(f) is str for f in fields):  # namedtuple: keep field names
        pairs = [f"{f}={i}" for f, i in zip(fields, items, strict=False)]
        return f"{name}({', '.join(pairs)}{rest})"
    if base is list or base is deque:
        body = "[" + ", ".join(items) + rest + "]"
    elif base is tuple:
        body = "(" + ", ".join(items) + ("," if size == 1 else "") + rest + ")"
    elif not size:
        return "set()" if t is set else f"{name}()"
    else:
        body = "{" + ", ".join(items) + rest + "}"
    exact = t in (list, tuple, set)
    return body if exact else f"{name}({body})"


def _more(n: int) -> str:
    return f", … {n:,} more" if n > 0 else ""


def short_header(value: Any) -> str:
    n = known_len(value) if layout.builtin_base(type(value)) is not None else None
    return f"<{type_name(value)}" + (f", {n:,} items>" if n is not None else ">")


def attributes(value: Any, lvl: int, limit: int = 12) -> str:
    """Instance attributes from ``__dict__`` (read statically): types at ``schema``, short values above."""
    attrs = structural.instance_state(value, slots=False)
    if not attrs:
        return ""
    parts = []
    for name, attr in itertools.islice(
        ((k, v) for k, v in attrs.items() if not str(k).startswith("_")), limit
    ):
        if lvl == SCHEMA:
            parts.append(f"{name}: {type_name(attr)}")
        elif is_secret_name(str(name)):
            parts.append(f"{name}={REDACTED}")
        else:
            parts.append(f"{name}={brepr(attr, Limits(lvl), 2)}")
    return ", ".join(parts)
