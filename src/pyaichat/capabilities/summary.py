"""Bounded, type-aware descriptions of any value: what the assistant sees of the user's data.

Three promises hold for every value, however large or hostile:

* **Bounded cost and size.** Nothing builds a huge string first: strings are sliced before ``repr``,
  containers are walked item by item up to a few items, DataFrames show ``head``/``tail`` only, arrays use
  numpy's own edge-item summarisation, and unknown large sized objects are described by type and length alone.
* **Nothing changes.** Iterators and generators are never advanced; attributes are read with
  ``inspect.getattr_static`` where a dynamic ``__getattr__`` could create things; no method is called except
  ``__repr__``/``__len__``/``_repr_llm_`` on the user's objects, and those run under a deadline
  (``guarded``) and survive raising.
* **Privacy levels** (``names`` < ``schema`` < ``sample`` < ``full``): ``names`` gives the type only;
  ``schema`` adds lengths, shapes, columns and dtypes but no value of any element, cell or string; ``sample``
  adds a few values; ``full`` larger bounded reprs.

pandas and numpy are never imported here: a value can only be a DataFrame if the user already imported pandas,
so the checks look the modules up in ``sys.modules``.
"""

from __future__ import annotations

import inspect
import itertools
import os
import sys
import sysconfig
import threading
import time
import types
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from .redact import REDACTED, is_secret_name

T = TypeVar("T")
PRIVACY_LEVELS = ("names", "schema", "sample", "full")
_USER_CODE_BUDGET = 0.5  # seconds one user __repr__/__len__/_repr_llm_ may take
# Modules whose objects have reprs that summarise themselves (they may be shown even when large).
_SELF_SUMMARISING = ("polars", "torch", "xarray", "scipy", "pyarrow", "jax", "tensorflow", "dask", "sympy")
_LARGE = 10_000


def level(privacy: str) -> int:
    """Numeric privacy level; unknown values are treated as the strictest."""
    try:
        return PRIVACY_LEVELS.index(privacy)
    except ValueError:
        return 0


NAMES, SCHEMA, SAMPLE, FULL = range(4)


# -- running the user's code under a deadline ----------------------------------------------------------------
class Overtime(BaseException):
    """Raised inside a user's ``__repr__``/``__len__`` that ran past its budget."""


_local = threading.local()
_LIBRARY_ROOTS: tuple[str, ...] = ()


def guarded(func: Callable[[], T], budget: float = _USER_CODE_BUDGET) -> T:
    """Run ``func`` (which may call the user's Python code) and abort it once ``budget`` seconds have passed.

    A trace function checks the clock on every Python line, so a ``__repr__`` that loops forever is stopped
    without leaving a thread behind. Code stuck inside C (``time.sleep``) is bounded by ``call``'s own
    deadline.
    """
    outer = getattr(_local, "deadline", None)
    deadline = time.perf_counter() + budget
    if outer is not None:
        deadline = min(deadline, outer)

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if time.perf_counter() > deadline:
            raise Overtime
        if event != "call":
            return tracer
        if _is_user_code(frame.f_code.co_filename):
            frame.f_trace_opcodes = True  # ``while True: pass`` makes no line events on Python 3.10
            return tracer
        return None  # library code: checked on each call only, which keeps pandas and friends fast

    previous = sys.gettrace()
    _local.deadline = deadline
    sys.settrace(tracer)
    try:
        return func()
    finally:
        sys.settrace(previous)
        _local.deadline = outer


_user_code: dict[str, bool] = {}


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    # pyaichat itself counts as library code, also when installed in editable mode.
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return tuple(sorted(r for r in roots if r))


def _is_user_code(filename: str) -> bool:
    """True for code typed at the prompt or in the user's own files (traced line by line)."""
    global _LIBRARY_ROOTS
    if not _LIBRARY_ROOTS:
        _LIBRARY_ROOTS = _library_roots() or ("\0",)
    known = _user_code.get(filename)
    if known is None:
        library = filename.startswith(_LIBRARY_ROOTS) or filename.startswith("<frozen")
        known = _user_code[filename] = not library
    return known


def safe(func: Callable[[], T], fallback: Callable[[BaseException], T]) -> T:
    """``guarded(func)``, turning any failure (or overtime) into ``fallback(exc)``."""
    try:
        return guarded(func)
    except (Exception, Overtime) as exc:
        return fallback(exc)


def _failure(what: str) -> Callable[[BaseException], str]:
    def describe_failure(exc: BaseException) -> str:
        if isinstance(exc, Overtime):
            return f"<{what} took too long>"
        return f"<{what} raised {type(exc).__name__}>"

    return describe_failure


# -- small helpers -------------------------------------------------------------------------------------------
def type_name(value: Any) -> str:
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    if module in ("builtins", "__main__", ""):
        return name
    return f"{module.split('.')[0]}.{name}"


def cut(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _pandas() -> Any:
    return sys.modules.get("pandas")


def _numpy() -> Any:
    return sys.modules.get("numpy")


def _is_instance(value: Any, module: Any, *names: str) -> bool:
    if module is None:
        return False
    classes = tuple(c for c in (getattr(module, n, None) for n in names) if isinstance(c, type))
    return bool(classes) and isinstance(value, classes)


def is_dataframe(value: Any) -> bool:
    return _is_instance(value, _pandas(), "DataFrame")


def is_series(value: Any) -> bool:
    return _is_instance(value, _pandas(), "Series")


def is_index(value: Any) -> bool:
    return _is_instance(value, _pandas(), "Index")


def is_ndarray(value: Any) -> bool:
    return _is_instance(value, _numpy(), "ndarray")


def is_dtype(value: Any) -> bool:
    """A numpy dtype: ``len()`` of one counts its record fields (0 for ``float64``), not items."""
    return _is_instance(value, _numpy(), "dtype")


def is_environ(value: Any) -> bool:
    """``os.environ``, ``os.environb`` or a dict copy of the environment: only their size is ever shown."""
    if isinstance(value, os._Environ):
        return True
    if type(value) is not dict or len(value) < 3:
        return False
    sample = list(itertools.islice(value.items(), 5))
    return all(isinstance(k, str) and isinstance(v, str) and os.environ.get(k) == v for k, v in sample)


def _static(obj: Any, name: str) -> Any:
    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        return None


def has_custom_repr(value: Any) -> bool:
    return type(value).__repr__ is not object.__repr__


def _from_self_summarising(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") or ""
    return module.split(".")[0] in _SELF_SUMMARISING


def safe_len(value: Any) -> int | None:
    """``len(value)`` for sized objects, ``None`` when unsized, failing or too slow (never iterates)."""
    if not hasattr(type(value), "__len__"):
        return None
    try:
        n = guarded(lambda: len(value))
    except (Exception, Overtime):
        return None
    return n if isinstance(n, int) else None


def _is_iterator(value: Any) -> bool:
    cls = type(value)
    return hasattr(cls, "__next__") and hasattr(cls, "__iter__")


def signature_text(obj: Any) -> str | None:
    """``name(params)`` of a callable (``__signature__``/``__wrapped__`` may be user code: guarded)."""
    try:
        return guarded(lambda: _signature_text(obj))
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


def _gen_state(value: Any) -> str:
    try:
        if isinstance(value, types.GeneratorType):
            return inspect.getgeneratorstate(value).removeprefix("GEN_").lower()
        if isinstance(value, types.CoroutineType):
            return inspect.getcoroutinestate(value).removeprefix("CORO_").lower()
    except Exception:
        pass
    return "unknown state"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


# -- bounded repr --------------------------------------------------------------------------------------------
class _Limits:
    """How much of a value ``_brepr`` may show, by privacy level."""

    def __init__(self, privacy_level: int) -> None:
        full = privacy_level >= FULL
        self.items = 20 if full else 6  # items per container (top level)
        self.depth = 4 if full else 3
        self.string = 400 if full else 80
        self.other = 400 if full else 120


def _brepr(value: Any, lim: _Limits, depth: int = 0) -> str:
    """A bounded repr (sample/full levels only): reprlib-like, with secret-named keys and attributes
    masked."""
    if is_environ(value):
        return "<environment variables: contents withheld>"
    if value is None or isinstance(value, (bool, float, complex)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 256:
            return f"<int with about {int(value.bit_length() * 0.30103):,} digits>"
        return repr(value)
    if isinstance(value, (str, bytes, bytearray)):
        limit = lim.string if depth else lim.string * 4
        if len(value) <= limit:
            return repr(value)
        return repr(value[:limit]) + f"…(+{len(value) - limit:,} more)"
    if depth >= lim.depth:
        return _short_header(value)
    n_items = max(lim.items // (depth + 1), 2)
    if isinstance(value, dict):
        parts = []
        for k, v in itertools.islice(value.items(), n_items):
            shown = REDACTED if isinstance(k, str) and is_secret_name(k) else _brepr(v, lim, depth + 1)
            parts.append(f"{_brepr(k, lim, depth + 1)}: {shown}")
        body = "{" + ", ".join(parts) + _more(len(value) - len(parts)) + "}"
        return body if type(value) is dict else f"{type(value).__name__}({body})"
    if isinstance(value, (list, tuple, set, frozenset, deque)):
        items = [_brepr(v, lim, depth + 1) for v in itertools.islice(value, n_items)]
        rest = _more(len(value) - len(items))
        if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # namedtuple: keep field names
            pairs = [f"{f}={i}" for f, i in zip(type(value)._fields, items, strict=False)]
            return f"{type(value).__name__}({', '.join(pairs)}{rest})"
        if isinstance(value, (list, deque)):
            body = "[" + ", ".join(items) + rest + "]"
        elif isinstance(value, tuple):
            body = "(" + ", ".join(items) + ("," if len(value) == 1 else "") + rest + ")"
        elif not value:
            body = "set()" if isinstance(value, set) else f"{type(value).__name__}()"
            return body
        else:
            body = "{" + ", ".join(items) + rest + "}"
        exact = type(value) in (list, tuple, set)
        return body if exact else f"{type(value).__name__}({body})"
    if is_dataframe(value) or is_series(value) or is_ndarray(value) or is_index(value):
        return "<" + one_line(value, "schema", 80) + ">"
    if _is_iterator(value) or isinstance(value, (types.GeneratorType, types.CoroutineType)):
        return f"<{type_name(value)} (iterator, not consumed)>"
    n = safe_len(value)
    if n is not None and n > _LARGE and not _from_self_summarising(value):
        return f"<{type_name(value)} with {n:,} items>"
    if not has_custom_repr(value):
        return f"<{type_name(value)} object>"
    return cut(safe(lambda: repr(value), _failure(f"repr of {type_name(value)}")), lim.other)


def _more(n: int) -> str:
    return f", … {n:,} more" if n > 0 else ""


def _short_header(value: Any) -> str:
    n = safe_len(value) if isinstance(value, (list, tuple, dict, set, frozenset, deque)) else None
    return f"<{type_name(value)}" + (f", {n:,} items>" if n is not None else ">")


# -- one line ------------------------------------------------------------------------------------------------
def one_line(value: Any, privacy: str = "sample", width: int = 100) -> str:
    """A single line such as ``DataFrame 10,000,000×3: a int64, b object`` or ``list, 5 items: [1, 2, …]``."""
    lvl = level(privacy)
    try:
        text = _one_line(value, lvl)
    except Exception as exc:  # a summary must never fail
        text = f"{type_name(value)} (summary failed: {type(exc).__name__})"
    return cut(" ".join(text.split()), width)


def _one_line(value: Any, lvl: int) -> str:
    tname = type_name(value)
    if lvl <= NAMES:
        return tname
    if is_environ(value):
        return f"environment variables ({len(value)}, contents withheld)"
    if is_dataframe(value):
        rows, cols = value.shape
        columns = ", ".join(f"{c} {t}" for c, t in itertools.islice(value.dtypes.items(), 8))
        more = f", … {cols - 8} more" if cols > 8 else ""
        return f"DataFrame {rows:,}×{cols}: {columns}{more}"
    if is_series(value):
        name = f" {value.name!r}" if value.name is not None and lvl > NAMES else ""
        return f"Series{name}, {len(value):,} values, dtype {value.dtype}"
    if is_ndarray(value):
        return f"ndarray shape {value.shape}, dtype {value.dtype}"
    if is_index(value):
        return f"{tname}, {len(value):,} entries, dtype {value.dtype}"
    if isinstance(value, type):
        return f"class {value.__qualname__}" + (
            f" (from {value.__module__})" if value.__module__ != "__main__" else ""
        )
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        name = getattr(value, "__name__", "")
        return f"{type(value).__name__} {name} ({_gen_state(value)}, never consumed)"
    if callable(value) and isinstance(
        value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType)
    ):
        sig = signature_text(value)
        kind = "function" if isinstance(value, types.FunctionType) else tname
        return f"{kind} {sig or getattr(value, '__name__', '')}"
    if value is None or isinstance(value, (bool, int, float, complex)):
        return tname if lvl == SCHEMA else f"{tname} {_brepr(value, _Limits(lvl))}"
    if isinstance(value, (str, bytes, bytearray)):
        size = f"{len(value):,} {'chars' if isinstance(value, str) else 'bytes'}"
        if lvl == SCHEMA:
            return f"{tname}, {size}"
        return f"{tname}, {size}: {value[:60]!r}{'…' if len(value) > 60 else ''}"
    if isinstance(value, (list, tuple, dict, set, frozenset, deque)):
        noun = "key" if isinstance(value, dict) else "item"
        head = f"{tname}, {_count(len(value), noun)}"
        if lvl == SCHEMA:
            kinds = _element_types(value)
            return head + (f" of {kinds}" if kinds else "")
        return f"{head}: {_brepr(value, _Limits(SAMPLE), 1)}"
    if _is_iterator(value):
        return f"{tname} (iterator, never consumed)"
    if callable(value) and not has_custom_repr(value):
        sig = signature_text(value)
        return f"{tname} callable" + (f" {sig}" if sig else "")
    n = None if is_dtype(value) else safe_len(value)
    head = tname + (f", {n:,} items" if n is not None else "")
    if lvl == SCHEMA or not has_custom_repr(value):
        return head if has_custom_repr(value) else head + " object"
    return f"{head}: {_brepr(value, _Limits(SAMPLE), 1)}"


def _element_types(value: Any, peek: int = 5) -> str:
    """Types (not values) of the first few elements: safe at the ``schema`` level."""
    if isinstance(value, dict):
        keys = sorted({type(k).__name__ for k in itertools.islice(value.keys(), peek)})
        vals = sorted({type(v).__name__ for v in itertools.islice(value.values(), peek)})
        return f"{'|'.join(keys)} → {'|'.join(vals)}" if keys else ""
    kinds = sorted({type(v).__name__ for v in itertools.islice(value, peek)})
    return "|".join(kinds)


# -- multi-line description ----------------------------------------------------------------------------------
def describe(value: Any, privacy: str = "sample", limit: int = 4000) -> str:
    """A bounded multi-line description: the view ``get_repr`` gives of a value."""
    lvl = level(privacy)
    try:
        text = _describe(value, lvl, limit)
    except Exception as exc:
        text = f"<{type_name(value)}: description failed ({type(exc).__name__})>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(value: Any, lvl: int, limit: int) -> str:
    if lvl <= NAMES:
        return f"<{type_name(value)}> (privacy level 'names': values are not shown)"
    if is_environ(value):
        return f"<environment variables ({len(value)}): their contents are never shown to the assistant>"
    if lvl >= SAMPLE:
        llm = _repr_llm(value)
        if llm is not None:
            return llm
    if is_dataframe(value):
        return _describe_frame(value, lvl)
    if is_series(value):
        return _describe_series(value, lvl)
    if is_ndarray(value):
        return _describe_array(value, lvl)
    header = one_line(value, "schema", 200)
    if lvl == SCHEMA:
        attrs = _attributes(value, lvl)
        return header + (f"\nattributes: {attrs}" if attrs else "")
    if isinstance(value, (str, bytes, bytearray, list, tuple, dict, set, frozenset, deque)):
        return f"{header}\n{_brepr(value, _Limits(lvl))}"
    body = _brepr(value, _Limits(lvl))
    attrs = "" if has_custom_repr(value) else _attributes(value, lvl)
    return f"{header}\n{body}" + (f"\nattributes: {attrs}" if attrs else "")


def _repr_llm(value: Any) -> str | None:
    """The object's own ``_repr_llm_()`` (looked up on the type, so ``__getattr__`` is never triggered)."""
    method = _static(type(value), "_repr_llm_")
    if method is None:
        return None
    text = safe(lambda: value._repr_llm_(), _failure("_repr_llm_"))
    return text if isinstance(text, str) else None


def _attributes(value: Any, lvl: int, limit: int = 12) -> str:
    """Instance attributes from ``__dict__`` (read statically): types at ``schema``, short values above."""
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except Exception:
        return ""
    if not isinstance(attrs, dict):
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
            parts.append(f"{name}={_brepr(attr, _Limits(lvl), 2)}")
    return ", ".join(parts)


def _frame_columns(df: Any, max_cols: int) -> str:
    lines = [f"  {col!s}: {dtype}" for col, dtype in itertools.islice(df.dtypes.items(), max_cols)]
    if df.shape[1] > max_cols:
        lines.append(f"  … {df.shape[1] - max_cols:,} more columns")
    return "\n".join(lines)


def _masked_table(part: Any) -> Any:
    """A copy of a few rows with the values of secret-named columns replaced."""
    secret = [c for c in part.columns if isinstance(c, str) and is_secret_name(c)]
    if not secret:
        return part
    part = part.copy()
    for col in secret:
        part[col] = REDACTED
    return part


def _has_objects(dtypes: Any) -> bool:
    return any(getattr(dtype, "kind", "") == "O" for dtype in dtypes)


def _describe_frame(df: Any, lvl: int) -> str:
    if lvl >= SAMPLE and _has_objects(df.dtypes):  # object cells run their own __repr__: guard them
        fallback = _failure("repr of a DataFrame cell")
        return safe(
            lambda: _describe_frame_unguarded(df, lvl),
            lambda exc: _describe_frame_unguarded(df, SCHEMA) + f"\nrows not shown: {fallback(exc)}",
        )
    return _describe_frame_unguarded(df, lvl)


def _describe_frame_unguarded(df: Any, lvl: int) -> str:
    rows, cols = df.shape
    full = lvl >= FULL
    out = [
        f"DataFrame: {rows:,} rows × {cols:,} columns",
        "columns (dtype):",
        _frame_columns(df, 60 if full else 30),
    ]
    out.append(f"index: {type(df.index).__name__}, dtype {df.index.dtype}")
    if lvl >= SAMPLE and rows and cols:
        head, tail = (10, 5) if full else (5, 3)
        opts = {"max_cols": 20 if full else 12, "max_colwidth": 40 if full else 25, "show_dimensions": False}
        if rows <= head + tail:
            out += ["rows:", _masked_table(df).to_string(**opts)]
        else:
            out += [f"first {head} rows:", _masked_table(df.head(head)).to_string(**opts)]
            out += [f"last {tail} rows:", _masked_table(df.tail(tail)).to_string(**opts)]
    return "\n".join(out)


def _describe_series(s: Any, lvl: int) -> str:
    if lvl >= SAMPLE and _has_objects([s.dtype]):
        fallback = _failure("repr of a Series value")
        return safe(
            lambda: _describe_series_unguarded(s, lvl),
            lambda exc: _describe_series_unguarded(s, SCHEMA) + f"\nvalues not shown: {fallback(exc)}",
        )
    return _describe_series_unguarded(s, lvl)


def _describe_series_unguarded(s: Any, lvl: int) -> str:
    out = [f"Series {s.name!r}: {len(s):,} values, dtype {s.dtype}, index {type(s.index).__name__}"]
    if lvl >= SAMPLE and len(s):
        head, tail = (10, 5) if lvl >= FULL else (5, 3)
        if isinstance(s.name, str) and is_secret_name(s.name):
            out.append(f"values: {REDACTED}")
        elif len(s) <= head + tail:
            out.append(s.to_string(max_rows=head + tail))
        else:
            out += [f"first {head}:", s.head(head).to_string(), f"last {tail}:", s.tail(tail).to_string()]
    return "\n".join(out)


def _describe_array(a: Any, lvl: int) -> str:
    out = [f"ndarray: shape {a.shape}, dtype {a.dtype}, {a.size:,} elements"]
    if lvl >= SAMPLE and a.size:
        np = _numpy()
        edge = 4 if lvl >= FULL else 3
        text = np.array2string(a, threshold=2 * edge * max(a.ndim, 1), edgeitems=edge, max_line_width=100)
        out.append(text if len(text) < 3000 else text[:3000] + "…")
    return "\n".join(out)
