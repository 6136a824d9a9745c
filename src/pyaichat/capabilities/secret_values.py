"""The session's secret values, found by walking its namespace, so that every outgoing text masks them by
what they are (``redact.set_known_values``): a secret is a value, not a name.

What is collected: whatever sits under a secret name (``redact.Masker.is_secret_name``) — a variable, a dict
key at any depth, a DataFrame column or Series, a row label, an object's attribute (read from its
``__dict__``, never through a property) — as text: strings, the text of bytes, numbers of six digits or more,
a ``pyaichat.configuration.secret.Secret``'s value; and every string value of a dict that mirrors the
environment (``dict(os.environ)``). A value shorter than ``redact.MIN_KNOWN`` characters is too likely to be
ordinary text to be masked everywhere; the roads that reach it by name are refused instead (``expression``,
the sandbox).

Bounded and cached: at most ``ITEMS`` items are looked at and ``MAX_VALUES`` values kept per session; a
secret column contributes its first and last ``FRAME_SAMPLE`` cells (the cells a display shows — the rest is
never handed out: ``expression`` reads such a frame in the walled child, which redacts the column). The walk
is redone when the session's generation changes (an input ran, an error was recorded, a name was added or
removed) or after ``TTL`` seconds, and costs ~0.1 ms for a frame of any length (``benchmarks/masking.py``).
No code of the session runs: no property, ``__getattr__``, ``__len__`` or ``__iter__`` of a user class.
"""

from __future__ import annotations

import threading
import time
import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from ..configuration.secret import Secret
from . import layout, structural
from . import library_metadata as meta
from .layout import is_environ
from .redact import MIN_KNOWN, masker_for, set_known_values

ITEMS = 20_000
MAX_VALUES = 256
FRAME_SAMPLE = 16
MAX_DEPTH = 32
TTL = 2.0
_PLAIN = structural.ids(int, float, str, bytes, bool, type(None), complex)
_TEXTS = structural.ids(str, bytes, int, float)
_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class _Walk:
    """One walk over a namespace, by structure only (``structural``, ``library_metadata``): builtin containers
    through their base type's own iteration, objects through their ``__dict__`` and slots, pandas' and
    numpy's data through where they store it — so a ``ChainMap`` is walked through its ``maps`` (its own
    ``__getitem__`` would reach a ``defaultdict``'s ``__missing__``), never its methods."""

    def __init__(self, is_secret_name: Callable[[str], bool]) -> None:
        self.is_secret = is_secret_name
        self.items = ITEMS
        self.found: dict[str, None] = {}
        self.environment: dict[str, None] = {}  # values of a copy of the environment: masked whole only

    def name(self, label: Any) -> bool:
        if type(label) is tuple:
            return any(self.name(part) for part in label[:8])
        return type(label) is str and len(label) < 200 and self.is_secret(label)

    def add(self, value: Any) -> None:
        text = _as_text(value)
        if text is not None and len(text) >= MIN_KNOWN and len(self.found) < MAX_VALUES:
            self.found.setdefault(text, None)

    def walk(self, value: Any, under: bool, depth: int = 0) -> None:
        self.items -= 1
        if self.items < 0 or depth > MAX_DEPTH or len(self.found) >= MAX_VALUES:
            return
        t = type(value)
        if structural.one_of(t, _TEXTS) or t is Secret:
            if under:
                self.add(value)
            return
        if any(structural.is_subclass(t, kind) for kind in _SKIP):
            return
        base = layout.builtin_base(t)
        if base is dict:
            self._mapping(value, under, depth)
        elif base is not None:
            for item in layout.builtin_items(value, base, limit=max(self.items, 0)):
                self.walk(item, under, depth + 1)
        elif layout.library(t) in ("pandas", "numpy"):
            try:
                self._library(value, under)
            except structural.NotStructural:
                pass  # a layout read by the library's own code: its secret columns are masked by name
        else:
            state = structural.instance_state(value)
            if state:
                for attr, inner in list(state.items())[:200]:
                    self.walk(inner, under or self.name(attr.rpartition(".")[2]), depth + 1)

    def _mapping(self, value: Any, under: bool, depth: int) -> None:
        environment = is_environ(value)
        for k, v in list(dict.items(value))[: max(self.items, 0)]:
            if environment:
                if type(v) is str and len(v) >= 8 and len(self.environment) < MAX_VALUES:
                    self.environment.setdefault(v, None)
                continue
            self.walk(v, under or self.name(k), depth + 1)

    def _library(self, value: Any, under: bool) -> None:
        kind = meta.kind(value)
        if kind == "DataFrame":
            labels = meta.index_labels(meta.metadata(value, "columns"), 2000, plain=False)
            for i, column in enumerate(labels):
                if under or self.name(column):
                    self._cells(meta.column_cells(value, i, FRAME_SAMPLE, FRAME_SAMPLE))
            self._rows(value)
        elif kind == "Series":
            if under or self.name(meta.metadata(value, "name")):
                self._cells(meta.column_cells(value, 0, FRAME_SAMPLE, FRAME_SAMPLE))
            else:
                self._rows(value)
        elif kind == "ndarray" and under and meta.metadata(value, "ndim") and _texts(value):
            flat = structural.library_field(value, "flat", type(value))
            edges = (flat[:FRAME_SAMPLE], flat[-FRAME_SAMPLE:])  # numpy's C: a few cells, no copy
            self._cells([cell for edge in edges for cell in structural.compiled_call(edge, "tolist")])

    def _cells(self, cells: list[Any]) -> None:
        for cell in cells:
            self.add(cell)

    def _rows(self, value: Any) -> None:
        index = meta.metadata(value, "index")
        if meta.axis_length(index) > 10_000:
            return
        labels = meta.index_labels(index, 10_000, plain=False)
        for position, label in enumerate(labels):
            if self.name(label):
                self._cells(meta.row_cells(value, position))


def _texts(array: Any) -> bool:
    """An array of strings, bytes or objects (numbers are not looked at)."""
    return meta.dtype_kind(meta.metadata(array, "dtype")) in ("U", "S", "O")


def _as_text(value: Any) -> str | None:
    t = type(value)
    if t is str:
        return value
    if t is bytes:
        return value.decode("utf-8", "replace")
    if t is int or t is float:
        return str(value) if t is float or value.bit_length() <= 256 else None
    if t is Secret:  # its one slot, read by the slot's own descriptor (never a method of the object)
        found = (structural.instance_state(value) or {}).get("Secret._value")
        return found if type(found) is str else None
    return None


def collect(
    namespace: Mapping[str, Any], is_secret_name: Callable[[str], bool]
) -> tuple[list[str], list[str]]:
    """The secret values in ``namespace`` (module docstring), bounded, and apart the values of copies of the
    environment (masked only whole: a path or a locale is ordinary text in pieces)."""
    walk = _Walk(is_secret_name)
    # The masker's memory of names, read directly: a namespace of 10,000 numbers is a loop of dict lookups.
    verdicts: dict[str, bool] = getattr(getattr(is_secret_name, "__self__", None), "_names", None) or {}
    for name, value in list(dict.items(namespace) if type(namespace) is dict else namespace.items()):
        if type(name) is not str:
            continue  # a key that is not a name: not hashed, not compared
        if structural.one_of(type(value), _PLAIN):  # a number or a string: something only under a secret name
            under = verdicts.get(name)
            if under is None:
                under = is_secret_name(name)
            if under:
                walk.add(value)
            continue
        if name[:2] != "__":
            walk.walk(value, is_secret_name(name))
    return list(walk.found), list(walk.environment)


# -- per session, cached per generation ----------------------------------------------------------------------
_lock = threading.Lock()
_by_session: weakref.WeakKeyDictionary[Any, tuple[Any, float, tuple[list[str], list[str]]]] = (
    weakref.WeakKeyDictionary()
)


def _generation(session: Any) -> Any:
    """Changes when the session's namespace may have: an input ran (history), an error was recorded, a name
    was added or removed."""
    history = getattr(session, "history", None) or ()
    last = history[-1] if history else None
    namespace = session.namespace
    return (id(namespace), len(namespace), len(history), id(last), id(getattr(session, "last_error", None)))


def refresh(session: Any, config: Any) -> tuple[list[str], list[str]]:
    """Bring the known secret values up to date with ``session`` (called before every capability call and
    picture); cheap when nothing changed. Returns the session's own: those found in its variables, and those
    of copies of the environment."""
    if getattr(session, "namespace", None) is None:
        return [], []
    stamp = _generation(session)
    now = time.monotonic()
    try:
        entry = _by_session.get(session)
    except TypeError:  # not weakly referenceable: walked every time
        entry = None
    if entry is not None and entry[0] == stamp and now - entry[1] < TTL:
        return entry[2]
    values = collect(session.namespace, masker_for(config).is_secret_name)
    with _lock:
        try:
            _by_session[session] = (stamp, now, values)
        except TypeError:
            pass
        union: dict[str, None] = dict.fromkeys(values[0])
        exact: dict[str, None] = dict.fromkeys(values[1])
        for _, _, (found, environment) in list(_by_session.values()):
            union.update(dict.fromkeys(found))
            exact.update(dict.fromkeys(environment))
        set_known_values(union, exact)
    return values
