"""The walled child never holds a secret: before it evaluates anything, it replaces — in its own copy — every
secret it can reach with a placeholder of the same type.

Then no transformation carries one out — reversed, hex, joined, ``ord`` per character, encoded, compared
(``pw[0] == "a"``), ``"…" in repr(cfg)``, returned by the person's function that closes over it — because
what the child computes never involved it. Masking the output by value stays as a second line.

Where the secrets are is found in the parent, just before ``fork`` (``secret_places``: a bounded walk that
runs no session code, remembered while the session does not change), and written in the child first thing,
behind the walls:

* a ``str`` or ``bytes`` is overwritten in place (``overwrite``): ``<redacted>`` and stars, of the same length
  (a span of it where only a piece is a secret: ``"my key is sk-…"``). Every reference to that object — a
  tuple, a frozen dataclass, an object column, a closure, a library's own copy — then reads the placeholder;
* anything else is replaced where it is held — a dict entry, a list or tuple item, an attribute or slot, a
  closure cell, a default, a class attribute: ``0`` for a number, the placeholder text for an interned or
  short string; what is replaced is kept alive, so nothing of the session is freed and no ``__del__`` runs;
* a function whose code holds a secret literal runs a copy of its code with placeholder constants; a
  ``bytearray``'s or an ``array.array``'s cells, numpy text or integer cells and Arrow text rows that hold
  one are overwritten where they live (an Index's cached lookups forgotten); a long string the walk could
  not search within its budget is overwritten whole;
* array and frame data under a secret name is blanked where it lives: a secret column's cells (numpy
  blocks zeroed or pointed at ``<redacted>``, an Arrow column replaced by ``<redacted>`` cells, or nulls of
  its type), the cells of a row with a secret label, a structured array's secret fields;
* the environment is emptied (``isolation``: ``os.environ``, the C library's and the interpreter's own copy),
  and a dict copy of it keeps only its size: its values replaced, its names ``<redacted N>``.

``scrubbed(job, places)`` is the one call site: ``ForkedChild.execute`` wraps the job of every read that runs
in the child (``eval_expr``'s child level, the ``get_*`` tools describing there, ``run_python``). The preview
of a proposal is not scrubbed (``preview``): it shows the person what their own code would do, on their real
values. If a replacement fails the job does not run: one sentence says so.
"""

from __future__ import annotations

import sys
import time
import types
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from ..redact import forget_values, known_values
from . import overwrite
from .secret_places import Checks, Places, Setter, find, instance_dict, type_dict

SESSION_ITEMS = 50_000  # objects the walk of the whole session looks at
VARIABLE_ITEMS = 200_000  # objects looked at in one run's own variables, where the session's walk stopped

REDACTED = "<redacted>"  # what an object cell of a secret column points to in the child
TTL = 2.0  # seconds a walk is reused while the session's stamp stays the same (another thread may change it)

_applied = False
_kept: list[Any] = []  # in the child: what was replaced, kept alive until the child ends
_last: tuple[tuple[Any, ...], float, Places, tuple[Any, ...], dict[int, tuple[Any, Places]]] | None = None
_checks: tuple[tuple[Any, ...], Checks] | None = None


def applied() -> bool:
    """Whether this process is a child that replaced something of the session's (a reading tool's watch
    then takes its fingerprints again: the replacements are not the tool's doing)."""
    return _applied


# -- in the parent -------------------------------------------------------------------------------------------
def checks_for(is_secret_name: Callable[[str], bool], masker: Any) -> Checks:
    """The masker's checks for the walk, made again when the masker or the known values change — compared by
    content (they are set again after every input, equal most times), so that the verdicts on the session's
    strings are kept."""
    global _checks
    known = known_values()
    environment = tuple(masker.environment_values) if masker is not None else ()
    key = (id(masker), known, environment, is_secret_name)
    if _checks is not None and _checks[0] == key:
        return _checks[1]
    if masker is None:  # recognising secrets by name and by the known values only

        def mask_text(text: str) -> str:
            return text

        checks = Checks(is_secret_name, mask_text, lambda text: False, known)
    else:
        values = tuple(sorted({*known, *environment}, key=len, reverse=True))
        checks = Checks(is_secret_name, masker.mask_text, masker.may_mask, values)
    _checks = (key, checks)
    return checks


def plan(
    namespace: Any,
    is_secret_name: Callable[[str], bool],
    masker: Any,
    stamp: Hashable = None,
    roots: Iterable[Any] = (),
    view: Any = None,
) -> Places:
    """Where the secrets of ``namespace`` (and of ``roots``: the settings) sit — by the names
    ``is_secret_name`` calls secret and what ``masker`` (a ``redact.Masker``) masks — found now, in this
    process: the walk is reused for ``TTL`` seconds while ``stamp`` (the session's generation) stays the
    same. ``view``: the variables one run is handed (some are copies the guards made), walked on top of it
    each time; where the session's walk stopped at its budget, the run's own variables are walked in full
    (up to ``VARIABLE_ITEMS``), and that is remembered too."""
    global _last
    checks = checks_for(is_secret_name, masker)
    checks.new_walk()
    roots = tuple(roots)
    key = (id(namespace), stamp, id(checks), *map(id, roots))
    now = time.monotonic()
    cached = _last
    if stamp is not None and cached is not None and cached[0] == key and now - cached[1] < TTL:
        places, variables = cached[2], cached[4]
    else:
        # the known values themselves, wherever the masker keeps them, are overwritten too
        values = (known_values(), tuple(masker.environment_values) if masker is not None else ())
        starts = [(namespace, False), *((root, False) for root in roots), (values, True)]
        places, variables = find(starts, checks, namespace, budget=SESSION_ITEMS), {}
        _last = (key, now, places, (namespace, *roots), variables)  # the roots kept: their ids stay theirs
    if view is None:
        return places
    parts = [places]
    if places.cut:
        for name in list(view):
            own = dict.get(namespace, name) if type(namespace) is dict else None
            if own is None or id(own) in places.seen:
                continue
            walked = variables.get(id(own))
            if walked is None or walked[0] is not own:
                found = find([(own, checks.name(name))], checks, skip=(places.seen,), budget=VARIABLE_ITEMS)
                walked = variables[id(own)] = (own, found)
            parts.append(walked[1])
    parts.append(find([(view, False)], checks, skip=tuple(p.seen for p in parts)))
    parts = [p for p in parts if len(p)]
    if len(parts) <= 1:
        return parts[0] if parts else places
    return Places(
        {k: v for p in parts for k, v in p.texts.items()},
        [w for p in parts for w in p.writes],
        [d for p in parts for d in p.data],
        left=sum(p.left for p in parts),
        cut=any(p.cut for p in parts),
    )


def forget() -> None:
    """Drop the remembered walk (tests, and a session that ends)."""
    global _last
    _last = None


# -- in the child --------------------------------------------------------------------------------------------
def scrubbed(job: Callable[[], dict[str, Any]], places: Places) -> Callable[[], dict[str, Any]]:
    """``job``, run in the child after ``apply(places)``; not run at all if a replacement failed."""

    def run() -> dict[str, Any]:
        failed = apply(places)
        if failed:
            return {"ok": False, "error": failed, "text": "", "truncated": False}
        return job()

    return run


def apply(places: Places) -> str | None:
    """Write every replacement of ``places`` into this process's objects (meant for a forked child only).
    Returns why the run must not go on, or None."""
    global _applied
    _applied = _applied or bool(len(places))
    forget_values()  # what the masker knew is overwritten below: placeholders are no secrets to mask here
    failed = 0
    for value, spans in places.texts.values():
        if not overwrite.overwrite(value, list(spans) or None):
            failed += 1
    for setter, container, key, placeholder in places.writes:
        try:
            _kept.append(_SETTERS[setter](container, key, placeholder))
        except Exception:  # a container another thread changed, a layout we do not know
            failed += 1
    for kind, target, where in places.data:
        try:
            _BLANKS[kind](target, where)
        except Exception:
            failed += 1
    if failed:
        return (
            f"the sandbox could not hide {failed} secret value(s) it found in its copy of the session, so "
            "nothing ran"
        )
    return None


def _set_dict(d: dict[Any, Any], key: Any, value: Any) -> Any:
    old = dict.__getitem__(d, key)
    dict.__setitem__(d, key, value)
    return old


def _set_list(seq: list[Any], index: int, value: Any) -> Any:
    old = list.__getitem__(seq, index)
    list.__setitem__(seq, index, value)
    return old


def _set_tuple(seq: tuple[Any, ...], index: int, value: Any) -> Any:
    old = tuple.__getitem__(seq, index)
    if not overwrite.set_tuple_item(seq, index, value):
        raise TypeError("a tuple's layout is not known here")
    return old


def _set_deque(seq: deque[Any], index: int, value: Any) -> Any:
    old = deque.__getitem__(seq, index)
    deque.__setitem__(seq, index, value)
    return old


def _set_cell(cell: types.CellType, _: Any, value: Any) -> Any:
    old = cell.cell_contents
    cell.cell_contents = value
    return old


def _set_default(func: types.FunctionType, index: int, value: Any) -> Any:
    old = func.__defaults__ or ()
    func.__defaults__ = (*old[:index], value, *old[index + 1 :])
    return old


def _set_slot(descriptor: Any, obj: Any, value: Any) -> Any:
    old = descriptor.__get__(obj, type(obj))
    descriptor.__set__(obj, value)
    return old


def _set_type(cls: type, name: str, value: Any) -> Any:
    old = type_dict(cls)[name]
    type.__setattr__(cls, name, value)
    return old


def _set_array_cell(arr: Any, where: Any, value: Any) -> Any:
    """One cell of an object array (read-only or not: a pandas view is), pointed at ``value``; the old cell
    is never released."""
    old = sys.modules["numpy"].ndarray.__getitem__(arr, where)
    if _read_only_mapping(arr) or not overwrite.add_references(value, 1):
        raise TypeError("the cell cannot be written here")
    _writable_alias(arr, f"<u{overwrite.PTR}")[where] = id(value)
    return old


def _set_code(func: types.FunctionType, _: Any, code: types.CodeType) -> Any:
    old = func.__code__
    func.__code__ = code
    return old


_SETTERS: dict[int, Callable[[Any, Any, Any], Any]] = {
    Setter.DICT: _set_dict,
    Setter.LIST: _set_list,
    Setter.TUPLE: _set_tuple,
    Setter.DEQUE: _set_deque,
    Setter.CELL: _set_cell,
    Setter.DEFAULT: _set_default,
    Setter.SLOT: _set_slot,
    Setter.TYPE: _set_type,
    Setter.ARRAY_CELL: _set_array_cell,
    Setter.CODE: _set_code,
}


# -- array and frame data ------------------------------------------------------------------------------------
def _writable_alias(arr: Any, typestr: str | None = None) -> Any:
    """An array over ``arr``'s own memory that can be written whatever its flags say (a read-only view of the
    child's private copy), typed ``typestr`` (``<u8`` to write an object array's pointers)."""
    np = sys.modules["numpy"]
    interface = dict(np.ndarray.__array_interface__.__get__(arr))
    interface["data"] = (interface["data"][0], False)
    if typestr is not None:
        interface["typestr"] = typestr
        interface.pop("descr", None)
    return np.asarray(types.SimpleNamespace(__array_interface__=interface))


def blank_array(arr: Any) -> None:
    """Every cell of ``arr`` (any view) made the placeholder of its type: ``<redacted>`` for an object cell,
    stars for text, zero for numbers, NaT for dates."""
    np = sys.modules["numpy"]
    if not int(np.ndarray.size.__get__(arr)):
        return
    dtype = np.ndarray.dtype.__get__(arr)
    if _read_only_mapping(arr):
        raise ValueError("the array lives in memory mapped read-only")
    kind = dtype.kind
    if kind == "O":
        pointers = _writable_alias(arr, f"<u{overwrite.PTR}")
        if not overwrite.add_references(REDACTED, int(pointers.size)):
            raise TypeError("reference counts cannot be written here")
        pointers[...] = id(REDACTED)  # the old cells are never released: none of them is freed
        return
    alias = _writable_alias(arr)
    if kind == "U":
        alias[...] = "*" * max(dtype.itemsize // 4, 1)
    elif kind == "S":
        alias[...] = b"*" * max(dtype.itemsize, 1)
    elif kind in "mM":
        alias[...] = np.array("NaT", dtype)
    elif kind in "biufc":
        alias[...] = 0
    else:
        raise TypeError(f"cells of dtype {dtype} cannot be blanked")


def _read_only_mapping(arr: Any) -> bool:
    """Whether ``arr``'s memory is a file mapped read-only (a write there would kill the child)."""
    mmap = sys.modules.get("mmap")
    base = arr
    for _ in range(32):
        base = getattr(base, "base", None)
        if base is None or mmap is None:
            return False
        if type(base) is mmap.mmap:
            if base.closed:
                return True
            with memoryview(base) as view:
                return view.readonly
    return False


def _blank_fields(arr: Any, names: tuple[str, ...]) -> None:
    np = sys.modules["numpy"]
    for name in names:
        blank_array(np.ndarray.__getitem__(arr, name))


def _blank_whole(arr: Any, _: Any) -> None:
    blank_array(arr)


def _blank_frame(frame: Any, where: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    """A frame's (or series') secret columns, and its cells in rows with a secret label, blanked in the
    blocks that hold them (every frame sharing a block sees it)."""
    columns, rows = set(where[0]), list(where[1])
    mgr = (instance_dict(frame) or {})["_mgr"]
    series = len(mgr.axes) == 1
    np = sys.modules["numpy"]
    for block in mgr.blocks:
        values = block.values
        locs = [0] if series else block.mgr_locs.as_array.tolist()
        two_d = type(values) is np.ndarray and values.ndim == 2
        for j, column in enumerate(locs):
            part = values[j] if two_d else values
            if column in columns:
                _blank_column(part, None)
            elif rows:
                _blank_column(part, rows)


def _blank_column(values: Any, rows: list[int] | None) -> None:
    """One column's data (an ndarray or an extension array): all of it, or the cells of ``rows``."""
    np = sys.modules["numpy"]
    if issubclass(type(values), np.ndarray):
        for part in [values] if rows is None else [values[row : row + 1] for row in rows]:
            blank_array(part)
        return
    own = instance_dict(values) or {}
    if "_pa_array" in own:  # Arrow-backed: a column of nulls of the same type in its place
        own["_pa_array"] = _arrow_blank(own["_pa_array"], rows)
        if type(own.get("_cache")) is dict:
            own["_cache"].clear()
        return
    if type(own.get("_dtype")).__name__ == "CategoricalDtype":  # codes -1: a missing value, no category
        codes = _writable_alias(own["_ndarray"])
        for row in range(len(codes)) if rows is None else rows:
            codes[row] = -1
        return
    parts = [own[name] for name in ("_ndarray", "_data") if name in own]  # datetimes, masked numbers…
    if not parts:
        raise TypeError(f"a {type(values).__name__} column cannot be blanked")
    for part in parts:
        _blank_column(part, rows)


def _arrow_blank(chunked: Any, rows: list[int] | None) -> Any:
    """An Arrow column of the same type and length: ``<redacted>`` for text, nulls for anything else (all of
    it, or at ``rows``)."""
    pa = sys.modules["pyarrow"]
    kind, length = chunked.type, len(chunked)
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if rows is None:
        whole = _arrow_text(pa, kind, length) if text else pa.nulls(length, kind)
        return pa.chunked_array([whole], type=kind)
    hidden, placeholder = set(rows), REDACTED if text else None
    cells = [placeholder if i in hidden else v for i, v in enumerate(chunked.to_pylist())]
    return pa.chunked_array([pa.array(cells, kind)], type=kind)


def _arrow_text(pa: Any, kind: Any, length: int) -> Any:
    """``length`` cells of ``<redacted>`` built from their buffers (a Python list of ten million would take
    seconds)."""
    np = sys.modules["numpy"]
    step = len(REDACTED)
    wide = pa.types.is_large_string(kind)
    if not wide and step * length >= 2**31:
        return pa.nulls(length, kind)
    offsets = np.arange(0, step * (length + 1), step, dtype=np.int64 if wide else np.int32)
    data = REDACTED.encode("ascii") * length
    return pa.Array.from_buffers(kind, length, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _blank_environ(d: dict[Any, Any], _: Any) -> None:
    """A copy of the environment keeps its size, not its names: each entry under ``<redacted N>`` (its value
    was replaced already); what it held is kept alive."""
    items = list(dict.items(d))
    _kept.append(items)
    dict.clear(d)
    for i, (_, value) in enumerate(items):
        dict.__setitem__(d, f"{REDACTED[:-1]} {i}>", value)


def _blank_buffer(buffer: Any, spans: tuple[tuple[int, int], ...]) -> None:
    """The spans of a ``bytearray`` or an ``array.array`` (``WHOLE``: all of it) overwritten in place: the
    placeholder for characters and bytes, zeros for numbers."""
    import array

    code = buffer.typecode if type(buffer) is array.array else ""
    for start, end in spans or ((0, len(buffer)),):
        text = overwrite.fill(end - start)
        if not code:
            buffer[start:end] = text.encode("ascii")
        elif code in "uw":
            buffer[start:end] = array.array(code, text)
        elif code in "bB":
            buffer[start:end] = array.array(code, text.encode("ascii"))
        else:
            buffer[start:end] = array.array(code, [0] * (end - start))


def _blank_cells(arr: Any, cells: tuple[int, ...]) -> None:
    """Cells of a text or integer array (flat positions) made stars or zero, in the array's own memory."""
    np = sys.modules["numpy"]
    if _read_only_mapping(arr):
        raise ValueError("the array lives in memory mapped read-only")
    alias = _writable_alias(arr)
    dtype, shape = alias.dtype, alias.shape
    value: Any = 0
    if dtype.kind == "U":
        value = "*" * max(dtype.itemsize // 4, 1)
    elif dtype.kind == "S":
        value = b"*" * max(dtype.itemsize, 1)
    for cell in cells:
        alias[np.unravel_index(cell, shape)] = value


def _blank_arrow(values: Any, rows: tuple[int, ...] | None) -> None:
    _blank_column(values, list(rows) if rows is not None else None)


def _clear_cache(index: Any, _: Any) -> None:
    """An Index's cached lookups (its engine, its values) forgotten: made again from the replaced data."""
    cache = (instance_dict(index) or {}).get("_cache")
    if type(cache) is dict:
        cache.clear()


_BLANKS: dict[str, Callable[[Any, Any], None]] = {
    "buffer": _blank_buffer,
    "cells": _blank_cells,
    "arrow": _blank_arrow,
    "cache": _clear_cache,
    "environ": _blank_environ,
    "array": _blank_whole,
    "fields": _blank_fields,
    "frame": _blank_frame,
}
