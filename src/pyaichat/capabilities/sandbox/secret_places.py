"""Where the session's secrets sit, found without running any of its code: the walk behind ``scrub``.

Which values are secrets is the masker's notion (``redact``, fed by ``secret_values``): whatever sits under a
name that looks secret — a variable, a dict key at any depth, an attribute or slot, a closure variable, a
parameter with a default, a namedtuple field, a DataFrame column or row label, a key of a frame's ``attrs`` —
and, wherever it sits, a string or bytes that equals or holds a known secret value (the session's, the
environment's) or that looks like a credential, and an integer (a ``Decimal``, a numpy cell) equal to a known
secret number. Beyond strings and containers: a ``str`` or ``bytes`` subclass (its characters, copied by the
base's own slice), ``bytearray``, ``array.array`` and a memoryview's object, numpy text and integer cells,
pandas' Arrow-backed text (columns and indexes), an exception's ``args`` and chained errors, the mapping
behind a ``MappingProxyType`` (read from its memory), and a function's code constants (nested code too). The
walk only says where they are (``Places``); the child replaces them (``scrub``).

Breadth first from the session's variables (and the settings, and the variables handed to one run), so that
what sits near a name is found first; bounded: ``ITEMS`` objects, ``CELLS`` cells of object arrays (the first
and last ``SAMPLE`` of each), strings of up to ``MAX_TEXT`` characters asked of the masker (longer ones are
searched for the known values only, ``TEXT_BUDGET`` characters per walk; one beyond it is replaced whole).
What lies beyond the other bounds is not replaced; ``Places.cut`` says the walk stopped early.

No code of the session runs: containers are read through their base type's own methods (``dict.items``,
``list.__iter__``), an instance's attributes through ``PyObject_GenericGetDict`` and the slot descriptors of
its type's own dictionaries, types through ``type``'s own descriptors (a metaclass cannot intercept them),
never ``isinstance``, ``getattr`` or a property of a session object. Library objects are walked the same way
(an HTTP client's headers, an engine's URL), but not library modules, classes or a function's globals but
those of the person's own modules.
"""

from __future__ import annotations

import array as arrays
import ctypes
import functools
import gc
import os
import re
import sys
import types
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, cast

from .. import layout
from ..structural import ids, one_of, str_keys
from . import overwrite
from .modules import ModuleProxy
from .origin import is_user_file
from .placeholders import Hidden, Refused

ITEMS = 50_000  # objects looked at per walk, unless told otherwise
CELLS = 20_000  # cells of object arrays looked at per walk
SAMPLE = 64  # cells looked at from each end of one object array
MAX_TEXT = 10_000  # characters of a string the masker is asked about (longer: known values only)
MAX_LABELS = 10_000  # row labels of a frame looked at for secret names
MAX_COLUMNS = 2_000
TEXT_BUDGET = 64_000_000  # characters of long strings searched for the known values per walk (x values)
WHOLE: tuple[tuple[int, int], ...] = ()  # ``Places.texts``: the whole value, not spans of it
UNSEARCHED: tuple[tuple[int, int], ...] = ((-1, -1),)  # ``Checks._spans_of``: over the budget, hidden whole
_SKIPPED = (
    types.ModuleType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.BuiltinFunctionType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.MappingProxyType,
    type(Ellipsis),
    range,
    slice,
)
# code, not data, and the environment: found by identity along the MRO (``issubclass(t, os._Environ)`` asks
# ``ABCMeta``, which asks the ``__subclasscheck__`` of every subclass the session made)
_NOT_WALKED = ids(*_SKIPPED, os._Environ)
_OURS = ids(Hidden, Refused, ModuleProxy)  # the sandbox's stand-ins: nothing of the session's in them
_EXCEPTION_ARGS = BaseException.__dict__[
    "args"
].__get__  # an exception's ``args``, however its class reads them
_EXCEPTION_LINKS = [BaseException.__dict__[name].__get__ for name in ("__cause__", "__context__")]
# ``type``'s own descriptors: a metaclass's ``__getattribute__`` or property cannot stand in for them
_TYPE_DICT = type.__dict__["__dict__"].__get__
_TYPE_MRO = type.__dict__["__mro__"].__get__
_TYPE_MODULE = type.__dict__["__module__"].__get__
_TYPE_FLAGS = type.__dict__["__flags__"].__get__
# called with ``py_object(obj)`` made by hand: ctypes' conversion of an argument asks ``isinstance``, which
# reads the object's ``__class__`` (a property of the session's would run)
_GENERIC_DICT = ctypes.pythonapi.PyObject_GenericGetDict
_GENERIC_DICT.restype = ctypes.py_object
_HEAP = 1 << 9  # Py_TPFLAGS_HEAPTYPE


class Setter:
    """How the child replaces one reference: ``Setter.DICT`` and the others name a function of ``scrub``;
    kept as small ints so that the walk makes no closure per item."""

    DICT, LIST, TUPLE, DEQUE, CELL, DEFAULT, SLOT, TYPE, ARRAY_CELL, CODE = range(10)


@dataclass
class Places:
    """What the walk found: ``texts`` to overwrite in place (the object, and the character spans — ``WHOLE``
    for all of it), ``writes`` — ``(setter, container, key, placeholder)`` — to replace by reference, and
    ``data``: ``(kind, target, where)`` of array or frame data to blank (``scrub``)."""

    texts: dict[int, tuple[str | bytes, tuple[tuple[int, int], ...]]] = field(default_factory=dict)
    writes: list[tuple[int, Any, Any, Any]] = field(default_factory=list)
    data: list[tuple[str, Any, Any]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)  # objects walked (a later walk of more roots skips them)
    left: int = 0  # secrets found where nothing can replace them (a set member, a key of an odd type)
    cut: bool = False  # the walk ran out of its budget
    looked: int = 0  # objects the walk looked at

    def __len__(self) -> int:
        return len(self.texts) + len(self.writes) + len(self.data)


@dataclass
class Checks:
    """The masker's notion of a secret, asked in the walk's terms and remembered per string (a session's
    strings are asked again at every call).

    A verdict is kept under the string's ``(id, length, hash)`` — never the string itself, which would keep
    a deleted value (a secret, or 400 MB) alive in the session's process; an exact ``str`` or ``bytes`` caches
    its own hash, so asking again costs nothing. A string over ``MAX_TEXT`` characters is searched for each
    known value with ``find``, within ``text_budget`` characters per walk (``new_walk``); one that does not
    fit is not passed but replaced whole in the child (``UNSEARCHED``: cannot tell means hide), and asked
    again by a later walk."""

    is_secret_name: Callable[[str], bool]
    mask_text: Callable[[str], str]
    may_mask: Callable[[str], bool]
    known: tuple[str, ...]  # the session's known secret values, longest first

    def __post_init__(self) -> None:
        self._verdicts: dict[tuple[int, int, int], tuple[tuple[int, int], ...] | None] = {}
        self._values = [v for v in self.known if v]
        self._encoded = [v.encode("utf-8", "surrogatepass") for v in self._values]
        self.known_ints = frozenset(int(v) for v in self._values if v.isdigit() and len(v) < 40)
        self.text_budget = TEXT_BUDGET
        self.unsearched = 0  # long strings of this walk replaced whole: not searched within the budget

    def new_walk(self) -> None:
        """A new walk's budget for searching long strings."""
        self.text_budget = TEXT_BUDGET
        self.unsearched = 0

    def charge(self, cost: int) -> bool:
        """Whether a search of ``cost`` characters fits in this walk's budget (then it is spent)."""
        if cost > self.text_budget:
            self.unsearched += 1
            return False
        self.text_budget -= cost
        return True

    def name(self, label: Any) -> bool:
        if type(label) is tuple:
            return any(self.name(part) for part in label[:8])
        return type(label) is str and len(label) < 200 and self.is_secret_name(label)

    def spans(self, value: str | bytes) -> tuple[tuple[int, int], ...] | None:
        """The character spans of ``value`` (an exact ``str`` or ``bytes``: its hash is its type's) that
        hold a secret (``WHOLE`` for all of it), or None."""
        verdicts = self._verdicts
        key = (id(value), len(value), hash(value))
        try:
            return verdicts[key]
        except KeyError:
            pass
        found = self._spans_of(value)
        if found is UNSEARCHED:
            return WHOLE  # not remembered: a later walk with budget left searches it
        if len(verdicts) >= 200_000:
            verdicts.clear()
        verdicts[key] = found
        return found

    def spans_once(self, value: str | bytes | bytearray) -> tuple[tuple[int, int], ...] | None:
        """As ``spans``, not remembered: for a copy the walk made, or a buffer that can change."""
        found = self._spans_of(value)
        return WHOLE if found is UNSEARCHED else found

    def _spans_of(self, value: str | bytes | bytearray) -> tuple[tuple[int, int], ...] | None:
        if len(value) > MAX_TEXT:
            return self._searched(value)
        if type(value) is not str:
            data = cast(bytes, value)  # or a bytearray
            if data.isascii():  # at most ``MAX_TEXT`` bytes: the decoded copy is small
                return self._spans_of(data.decode("ascii"))
            return self._searched(data)
        text = value
        if len(text) < 6 or not self.may_mask(text):
            return None
        masked = self.mask_text(text)
        if masked == text:
            return None
        return _masked_spans(text, masked)

    def _searched(self, value: str | bytes | bytearray) -> tuple[tuple[int, int], ...] | None:
        """The spans of the known values in ``value``, found with ``find`` (no copy of ``value``), or
        ``UNSEARCHED`` where the walk's budget does not cover it."""
        needles: list[Any] = self._values if type(value) is str else self._encoded
        if not needles:
            return None
        if not self.charge(len(value) * len(needles)):
            return UNSEARCHED
        spans: list[tuple[int, int]] = []
        for needle in needles:
            at = value.find(needle)
            while at >= 0:
                spans.append((at, at + len(needle)))
                at = value.find(needle, at + len(needle))
        return _merged(spans)


_LABEL = re.compile(r"<redacted[^<>]*>")  # what ``mask_text`` puts in place of what it masks


def _masked_spans(text: str, masked: str) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` that ``masked`` replaced with labels, in linear time (a diff is quadratic: a
    string of many tokens froze the REPL). ``masked`` is ``text``'s kept pieces with a label between each
    two; each kept piece is placed as early as it can be (from the left) and as late as it can be (from
    the right), and every character between a piece's earliest end and the next one's latest start counts
    as replaced: the true spans lie inside, whatever a piece repeats. Cannot tell: all of it."""
    pieces = _LABEL.split(masked)
    first, last = pieces[0], pieces[-1]
    stop = len(text) - len(last)
    if len(pieces) < 2 or len(first) > stop or not text.startswith(first) or not text.endswith(last):
        return WHOLE
    middle = pieces[1:-1]
    earliest: list[int] = []
    at = len(first)
    for piece in middle:
        found = text.find(piece, at, stop)
        if found < 0:
            return WHOLE
        earliest.append(found + len(piece))
        at = found + len(piece)
    latest: list[int] = []
    at = stop
    for piece in reversed(middle):
        found = text.rfind(piece, len(first), at)
        if found < 0:
            return WHOLE
        latest.append(found)
        at = found
    latest.reverse()
    ends, starts = [len(first), *earliest], [*latest, stop]
    found_spans = _merged([(a, b) for a, b in zip(ends, starts, strict=True) if b > a])
    if found_spans is None or found_spans == ((0, len(text)),):
        return WHOLE
    return found_spans


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...] | None:
    if not spans:
        return None
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def type_dict(cls: type) -> Mapping[str, Any]:
    """``cls.__dict__`` as ``type`` itself reads it."""
    return _TYPE_DICT(cls)


def lookup(cls: type, name: str) -> Any:
    """``name`` in the dictionaries of ``cls``'s MRO, as ``type`` itself reads them (``None``: not there)."""
    for klass in _TYPE_MRO(cls):
        found = _TYPE_DICT(klass).get(name)
        if found is not None:
            return found
    return None


def instance_dict(obj: Any) -> dict[str, Any] | None:
    """``obj``'s own ``__dict__``, whatever its class says ``__dict__`` is (``None``: it has none)."""
    try:
        found = _GENERIC_DICT(ctypes.py_object(obj), None)
    except (AttributeError, TypeError, SystemError):
        return None
    return found if type(found) is dict else None


@functools.lru_cache(maxsize=4096)
def _persons_module(name: str) -> bool:
    """Whether the module ``name`` is the person's own (``__main__``, or a file outside the libraries)."""
    if name == "__main__":
        return True
    module = sys.modules.get(name)
    file = vars(module).get("__file__") if type(module) is types.ModuleType else None
    return type(file) is str and is_user_file(file)


_slots_of: dict[int, tuple[type, tuple[tuple[str, Any, bool], ...]]] = {}


def _slots(t: type) -> tuple[tuple[str, Any, bool], ...]:
    """The slot descriptors of ``t`` and its bases, from their own dictionaries, and whether each can be
    written (a Python class's slot can; a C type's member may be read-only). Kept per type, by identity: a
    metaclass's ``__hash__`` is not asked."""
    known = _slots_of.get(id(t))
    if known is not None and known[0] is t:
        return known[1]
    found = tuple(
        (name, descriptor, "__slots__" in _TYPE_DICT(klass))  # a C type's member may be read-only
        for klass in _TYPE_MRO(t)
        if klass is not object
        for name, descriptor in list(_TYPE_DICT(klass).items())
        if type(descriptor) is types.MemberDescriptorType and type(name) is str and name[:2] != "__"
    )
    if len(_slots_of) > 4096:
        _slots_of.clear()
    _slots_of[id(t)] = (t, found)
    return found


def _persons_class(cls: type) -> bool:
    if not _TYPE_FLAGS(cls) & _HEAP:
        return False
    module = _TYPE_MODULE(cls)
    return type(module) is str and _persons_module(module)


class _Walk:
    def __init__(
        self, checks: Checks, places: Places, namespace_id: int, skip: tuple[set[int], ...], budget: int
    ) -> None:
        self.checks = checks
        self.places = places
        self.skip = skip
        self.items = budget
        self.cells = CELLS
        self.queue: deque[tuple[Any, bool, int]] = deque()
        self.namespace_id = namespace_id
        self.numpy: Any = sys.modules.get("numpy")
        self.decimal: Any = getattr(sys.modules.get("decimal"), "Decimal", None)
        self.ndarray = getattr(self.numpy, "ndarray", None)

    # -- the queue -------------------------------------------------------------------------------------------
    def run(self) -> None:
        queue = self.queue
        while queue:
            if self.items <= 0:
                self.places.cut = True
                seen = self.places.seen  # not looked at: a later walk (of one run's variables) may
                for _, _, key in queue:
                    seen.discard(key)
                return
            obj, under, _ = queue.popleft()
            try:
                self._visit(obj, under)
            except (RuntimeError, ValueError, TypeError, AttributeError, IndexError, KeyError):
                continue  # changed while read (another thread), or a layout we do not know: not walked

    def enqueue(self, obj: Any, under: bool) -> None:
        key = id(obj)
        seen = self.places.seen
        if key in seen or (self.skip and any(key in done for done in self.skip)):
            if not under:
                return
            key = -key - 1  # walked as a plain value: walked again under a secret name, once
            if key in seen or (self.skip and any(key in done for done in self.skip)):
                return
        seen.add(key)
        self.queue.append((obj, under, key))

    # -- one value in a place ------------------------------------------------------------------------------
    def child(
        self, value: Any, under: bool, setter: int | None, container: Any, key: Any, deep: bool = True
    ) -> None:
        """``value``, held by ``container`` at ``key`` (replaceable through ``setter`` unless it is None).
        ``deep`` False: ``container`` is an object's state, and what sits under a secret name is only its own
        values and containers — an object it holds is walked as any other (a client under ``auth`` does
        not make every string of the library behind it a secret)."""
        t = type(value)
        self.items -= 1
        if t is str or t is bytes:
            self.text(value, under, setter, container, key)
        elif t is int:
            if (under and value) or value in self.checks.known_ints:
                self.replace(setter, container, key, 0)
        elif t is float or t is complex:
            if under and value:
                self.replace(setter, container, key, t(0))
        elif t is bool or value is None:
            return
        elif t is not type and (issubclass(t, str) or issubclass(t, bytes)):
            self.text_subclass(value, t, under, setter, container, key)
        elif t is self.decimal:  # a known number as a ``Decimal`` (one of 40 digits at most: no huge ``int``)
            integral = value.is_finite() and value.adjusted() < 40 and value == value.to_integral_value()
            if under or (integral and int(value) in self.checks.known_ints):
                self.replace(setter, container, key, t(0))
        else:
            self.enqueue(value, under and (deep or _is_data(t)))

    def text_subclass(
        self, value: Any, t: type, under: bool, setter: int | None, container: Any, key: Any
    ) -> None:
        """A ``str`` or ``bytes`` of a subclass: its characters read through the base's own slice (an exact
        copy: none of the subclass's code runs), replaced where it is held by a placeholder of the base
        type; its attributes walked as any object's."""
        whole = slice(None)
        text: str | bytes = (
            str.__getitem__(value, whole) if issubclass(t, str) else bytes.__getitem__(value, whole)
        )
        spans = WHOLE if under else (self.checks.spans_once(text) if text else None)
        if spans is not None:
            self.replace(setter, container, key, _spanned(text, spans))
        self.enqueue(value, under)

    def text(self, value: str | bytes, under: bool, setter: int | None, container: Any, key: Any) -> None:
        if not value:
            return
        spans = WHOLE if under else self.checks.spans(value)
        if spans is None:
            return
        if overwrite.writable(value):
            texts = self.places.texts
            known = texts.get(id(value))
            if known is not None and known[1] != spans:
                spans = WHOLE if not known[1] or not spans else _merged([*known[1], *spans]) or WHOLE
            texts[id(value)] = (value, spans)
            return
        self.replace(setter, container, key, _spanned(value, spans))

    def replace(self, setter: int | None, container: Any, key: Any, placeholder: Any) -> None:
        if setter is None:
            self.places.left += 1
        else:
            self.places.writes.append((setter, container, key, placeholder))

    # -- one object ------------------------------------------------------------------------------------------
    def _visit(self, obj: Any, under: bool) -> None:
        t = type(obj)
        if issubclass(t, dict):
            environ = layout.is_environ(obj)
            if environ and t is dict:  # a copy of the environment: its names are hidden too
                self.places.data.append(("environ", obj, None))
            self.mapping(obj, under or environ, named=True)
        elif t is list or t is tuple or t is set or t is frozenset or t is deque:
            self.sequence(obj, t, under)
        elif issubclass(t, type):
            if _persons_class(obj):
                self.class_dict(obj, under)
        elif t is types.FunctionType or t is types.MethodType:
            self.function(obj, under)
        elif t is functools.partial:
            self.child(obj.func, under, None, None, None)
            self.sequence(obj.args, tuple, under)
            self.mapping(obj.keywords, under, named=True)
        elif t is types.ModuleType:
            name = vars(obj).get("__name__")
            if type(name) is str and _persons_module(name):
                self.mapping(vars(obj), under, named=True, dunders=False)
        elif t is types.MappingProxyType:
            inner = _proxied(obj)
            if inner is not None:  # the mapping it shows: written there, read through the proxy
                self.enqueue(inner, under)
        elif t is bytearray or t is arrays.array or t is memoryview:
            self.buffer(obj, t, under)
        elif not _NOT_WALKED.isdisjoint(map(id, _TYPE_MRO(t))) or one_of(t, _OURS):
            return  # code, not data; the environment, which the child empties (``isolation``); ours
        elif self.ndarray is not None and issubclass(t, self.ndarray):
            self.array(obj, under)
        elif layout.library(t) == "pandas":
            self.pandas(obj, t, under)
        else:
            base = layout.builtin_base(t)
            if base is not None:  # a subclass of a builtin container: its items, then its attributes
                self.sequence(obj, base, under, fields=lookup(t, "_fields") if base is tuple else None)
            elif issubclass(t, str) or issubclass(t, bytes):  # a text subclass met as a root
                self.text_subclass(obj, t, under, None, None, None)
                self.instance(obj, t, under)
                return
            if issubclass(t, BaseException):  # what ``str(err)`` shows, and the errors it chains to
                self.sequence(_EXCEPTION_ARGS(obj), tuple, under)
                for link in _EXCEPTION_LINKS:
                    linked = link(obj)
                    if linked is not None:
                        self.enqueue(linked, under)
            self.instance(obj, t, under)

    def mapping(self, d: Any, under: bool, named: bool, dunders: bool = True, deep: bool = True) -> None:
        """A dict (any subclass: read through ``dict``'s own methods); its keys are names when ``named``;
        ``deep``: see ``child``."""
        checks = self.checks
        namespace = id(d) == self.namespace_id
        for k, v in list(islice(dict.items(d), max(self.items, 0))):
            tk = type(k)
            if tk is str:
                if not dunders and k[:2] == "__":
                    continue
                if namespace and k[:2] == "__" and k[-2:] == "__":
                    continue  # the REPL's own plumbing (``__builtins__``)
                self.text(k, False, None, None, None)  # a key can be a secret, but is not replaced
            elif tk is bytes:
                self.text(k, False, None, None, None)
            secret = named and tk is str and checks.name(k)
            setter = Setter.DICT if tk is str or tk is bytes or tk is int else None
            if secret and (v is None or (type(v) is str and not v)):
                continue
            self.child(v, under or secret, setter, d, k, deep or secret)

    def sequence(self, seq: Any, base: type, under: bool, fields: Any = None) -> None:
        setters: dict[type, int] = {list: Setter.LIST, tuple: Setter.TUPLE, deque: Setter.DEQUE}
        setter = setters.get(base)
        names = fields if type(fields) is tuple else ()
        items = layout.builtin_items(seq, base, limit=max(self.items, 0))
        checks = self.checks
        for i, item in enumerate(items):
            named = i < len(names) and checks.name(names[i])
            self.child(item, under or named, setter, seq, i)

    def instance(self, obj: Any, t: type, under: bool) -> None:
        own = instance_dict(obj)
        if own is not None:
            self.mapping(own, under, named=True, deep=False)
        checks = self.checks
        for name, descriptor, writable in _slots(t):
            try:
                value = descriptor.__get__(obj, t)
            except AttributeError:  # an empty slot
                continue
            secret = checks.name(name)
            setter = Setter.SLOT if writable else None
            self.child(value, under or secret, setter, descriptor, obj, deep=secret)

    def class_dict(self, cls: type, under: bool) -> None:
        """A class of the person's: its attributes (``API_KEY = "…"`` in the class body)."""
        checks = self.checks
        for name, value in list(_TYPE_DICT(cls).items()):
            if type(name) is str and name[:2] != "__":
                self.child(value, under or checks.name(name), Setter.TYPE, cls, name)

    def function(self, func: Any, under: bool) -> None:
        if type(func) is types.MethodType:
            self.enqueue(func.__self__, under)
            self.enqueue(func.__func__, under)
            return
        code, checks = func.__code__, self.checks
        for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=False):
            try:
                value = cell.cell_contents
            except ValueError:  # not filled yet
                continue
            self.child(value, under or checks.name(name), Setter.CELL, cell, None)
        defaults = func.__defaults__ or ()
        names = code.co_varnames[code.co_argcount - len(defaults) : code.co_argcount]
        for i, (name, value) in enumerate(zip(names, defaults, strict=False)):
            self.child(value, under or checks.name(name), Setter.DEFAULT, func, i)
        if func.__kwdefaults__:
            self.mapping(func.__kwdefaults__, under, named=True)
        constants = self.constants(code)
        if constants is not None:  # a literal in the function's code: the child runs a copy without it
            self.replace(Setter.CODE, func, None, constants)
        own = instance_dict(func)
        if own:
            self.mapping(own, under, named=True)
        home = func.__globals__
        name = home.get("__name__")
        persons = id(home) != self.namespace_id and type(name) is str and _persons_module(name)
        if persons and id(home) not in self.places.seen:  # the person's module: what its functions read
            self.places.seen.add(id(home))
            self.mapping(home, under, named=True, dunders=False)

    def constants(self, code: types.CodeType, depth: int = 0) -> types.CodeType | None:
        """A copy of ``code`` whose constants that hold a secret — and those of the code nested in it (a
        generator, a lambda, an inner function) — are placeholders; None when none does."""
        changed, out = False, []
        checks = self.checks
        for constant in code.co_consts:
            t = type(constant)
            if (t is str or t is bytes) and constant:
                spans = checks.spans(constant)
                if spans is not None:
                    constant, changed = _spanned(constant, spans), True
            elif t is int and constant in checks.known_ints:
                constant, changed = 0, True
            elif t is types.CodeType and depth < 16:
                inner = self.constants(constant, depth + 1)
                if inner is not None:
                    constant, changed = inner, True
            elif (t is tuple or t is frozenset) and depth < 16:
                items = [
                    _spanned(c, s)
                    if (type(c) in (str, bytes) and c and (s := checks.spans(c)) is not None)
                    else c
                    for c in constant
                ]
                if any(a is not b for a, b in zip(items, constant, strict=True)):
                    constant, changed = t(items), True
            out.append(constant)
        return code.replace(co_consts=tuple(out)) if changed else None

    def buffer(self, obj: Any, t: type, under: bool) -> None:
        """A ``bytearray``, an ``array.array`` or a memoryview's object: cells that hold a secret are
        overwritten in the child (characters and bytes by the placeholder, known numbers by ``0``)."""
        if t is memoryview:
            self.child(obj.obj, under, None, None, None)
            return
        code = obj.typecode if t is arrays.array else "B"
        if t is bytearray or code in "uwbB":
            text = obj if t is bytearray else obj.tounicode() if code in "uw" else obj.tobytes()
            spans = WHOLE if under else (self.checks.spans_once(text) if len(text) else None)
        elif under:
            spans = WHOLE
        else:
            ints = self.checks.known_ints
            spans = None
            if ints and len(obj) and code not in "fd" and self.checks.charge(len(obj)):
                spans = _merged([(i, i + 1) for i, v in enumerate(obj) if v in ints])
        if spans is not None:
            self.places.data.append(("buffer", obj, spans))

    # -- numpy and pandas ------------------------------------------------------------------------------------
    def array(self, arr: Any, under: bool) -> None:
        np = self.numpy
        dtype = np.ndarray.dtype.__get__(arr)
        names = dtype.names
        if names:
            secret = [n for n in names if under or self.checks.name(n)]
            if secret:
                self.places.data.append(("fields", arr, tuple(secret)))
            return
        if under:
            self.places.data.append(("array", arr, None))
        elif dtype.kind == "O":
            self.cells_of(arr)
        elif type(arr) is np.ndarray and (
            dtype.kind in "US" or (dtype.kind in "iu" and self.checks.known_ints)
        ):
            self.plain_cells(arr, dtype)

    def plain_cells(self, arr: Any, dtype: Any) -> None:
        """An exact ndarray of text or integers: its cells that hold a known value (all searched, within the
        walk's budget) or, for text, look like a credential (the first and last ``SAMPLE``); beyond the budget
        the whole array is blanked in the child."""
        np, checks = self.numpy, self.checks
        size = int(arr.size)
        if not size:
            return
        flat = arr.reshape(-1)
        hits: set[int] = set()
        if dtype.kind in "US":
            width = dtype.itemsize // (4 if dtype.kind == "U" else 1)
            needles = checks._values if dtype.kind == "U" else checks._encoded
            if needles and not checks.charge(size * width * len(needles)):
                self.places.data.append(("array", arr, None))
                return
            for needle in needles:
                if len(needle) <= width:
                    hits.update(np.flatnonzero(np.strings.find(flat, needle) >= 0).tolist())
            positions = range(size) if size <= 2 * SAMPLE else [*range(SAMPLE), *range(size - SAMPLE, size)]
            cells = flat[list(positions)].tolist()
            hits.update(
                p for p, cell in zip(positions, cells, strict=True) if cell and checks.spans_once(cell)
            )
        else:
            info = np.iinfo(dtype)
            ints = [i for i in checks.known_ints if info.min <= i <= info.max]
            if not ints:
                return
            if not checks.charge(size * len(ints)):
                self.places.data.append(("array", arr, None))
                return
            hits.update(np.flatnonzero(np.isin(flat, ints)).tolist())
        if hits:
            self.places.data.append(("cells", arr, tuple(sorted(hits))))

    def cells_of(self, arr: Any) -> None:
        """The first and last ``SAMPLE`` cells of an object array, as values in their places."""
        np = self.numpy
        size = int(np.ndarray.size.__get__(arr))
        if not size or self.cells <= 0:
            return
        shape = np.ndarray.shape.__get__(arr)
        positions = range(size) if size <= 2 * SAMPLE else [*range(SAMPLE), *range(size - SAMPLE, size)]
        self.cells -= len(positions)
        get = np.ndarray.__getitem__
        for flat in positions:
            where = np.unravel_index(flat, shape) if len(shape) != 1 else flat
            self.child(get(arr, where), False, Setter.ARRAY_CELL, arr, where)

    def pandas(self, obj: Any, t: type, under: bool) -> None:
        own = instance_dict(obj) or {}
        if not str_keys(own):  # looking ``_mgr`` up would compare it with the session's odd key
            own = {}
        mgr = own.get("_mgr")
        if mgr is not None and layout.library(type(mgr)) != "pandas":
            mgr = None  # the session's object under pandas' name: walked as state, never asked its ``axes``
        attrs = own.get("_attrs")
        if type(attrs) is dict and attrs:
            self.mapping(attrs, under, named=True)
        if mgr is None:  # an Index, an extension array, a GroupBy…: its parts, then its attributes
            if "_pa_array" in own:
                self.arrow(obj, under)
                return
            data = own.get("_data")
            if data is not None and id(data) not in self.places.seen and self.arrow(data, under):
                self.places.seen.add(id(data))  # an Index over Arrow text: its lookups are cached too
                self.places.data.append(("cache", obj, None))
            if layout.pandas_parts(obj) is not None:
                for part in layout.pandas_parts(obj) or ():
                    self.enqueue(part, under)
            else:
                self.instance(obj, t, under)
            return
        checks = self.checks
        axes = mgr.axes
        series = len(axes) == 1
        if series:
            secret_columns = [0] if under or checks.name(own.get("_name")) else []
        else:
            labels = axes[0][:MAX_COLUMNS].tolist()
            secret_columns = [i for i, label in enumerate(labels) if under or checks.name(label)]
            self.enqueue(axes[0], False)
        index = axes[-1]
        secret_rows: list[int] = []
        if not under and index.dtype.kind in "OUT" and len(index) <= MAX_LABELS:
            secret_rows = [i for i, label in enumerate(index.tolist()) if checks.name(label)]
        self.enqueue(index, False)
        if secret_columns or secret_rows:
            self.places.data.append(("frame", obj, (tuple(secret_columns), tuple(secret_rows))))
        if len(secret_columns) == (1 if series else len(axes[0])) and not secret_rows:
            return  # all of it is blanked: nothing else to look for
        for block in mgr.blocks:
            values = block.values
            if self.ndarray is not None and type(values) is self.ndarray and values.dtype.kind == "O":
                self.cells_of(values)
            elif self.ndarray is not None and type(values) is not self.ndarray:
                self.arrow(values, False)

    def arrow(self, values: Any, under: bool) -> bool:
        """An Arrow-backed text array (pandas 3's default ``str`` columns and indexes): rows that hold a known
        value (searched in Arrow, within the walk's budget: beyond it, all of it) or look like a credential
        (the first and last ``SAMPLE``) are replaced in the child. Whether it had any."""
        pa = sys.modules.get("pyarrow")
        chunked: Any = (instance_dict(values) or {}).get("_pa_array")
        if pa is None or type(chunked) is not pa.ChunkedArray:
            return False
        if not (pa.types.is_string(chunked.type) or pa.types.is_large_string(chunked.type)):
            return False
        checks, length = self.checks, len(chunked)
        if under or (checks._values and not checks.charge(int(chunked.nbytes) * len(checks._values))):
            self.places.data.append(("arrow", values, None))
            return True
        rows: set[int] = set()
        if checks._values:
            import pyarrow.compute as pc

            for needle in checks._values:
                found = pc.fill_null(pc.match_substring(chunked, needle), False)
                rows.update(self.numpy.flatnonzero(found.to_numpy()).tolist())
        head = chunked.slice(0, SAMPLE).to_pylist()
        tail_at = max(length - SAMPLE, len(head))
        tail = chunked.slice(tail_at).to_pylist()
        for at, cells in ((0, head), (tail_at, tail)):
            rows.update(
                at + i for i, cell in enumerate(cells) if type(cell) is str and checks.spans_once(cell)
            )
        if rows:
            self.places.data.append(("arrow", values, tuple(sorted(rows))))
        return bool(rows)


def _proxy_offset() -> int | None:
    """Where a ``MappingProxyType`` keeps the mapping it shows (read off a probe), or None."""
    probe: dict[str, int] = {}
    proxy = types.MappingProxyType(probe)
    for at in range(2 * overwrite.PTR, 4 * overwrite.PTR, overwrite.PTR):
        if ctypes.c_void_p.from_address(id(proxy) + at).value == id(probe):
            return at
    return None


_PROXY_AT = _proxy_offset()


def _proxied(proxy: Any) -> Any:
    """The mapping behind ``proxy``, read from its memory: the proxy's ``copy``, ``items`` or ``[]`` would
    call the mapping's own methods. None where the layout is not known (then it is not walked)."""
    if _PROXY_AT is None:
        return None
    address = ctypes.c_void_p.from_address(id(proxy) + _PROXY_AT).value
    return ctypes.cast(address, ctypes.py_object).value if address else None


def _is_data(t: type) -> bool:
    """A builtin container, an array or a frame: what it holds under a secret name is secret all through."""
    return layout.builtin_base(t) is not None or layout.library(t) in ("numpy", "pandas")


def _spanned(value: str | bytes, spans: tuple[tuple[int, int], ...]) -> str | bytes:
    """A new ``value`` of the same type and length with ``spans`` (``WHOLE``: all of it) filled in."""
    if not spans:
        return overwrite.placeholder(value)
    if type(value) is bytes:
        out = bytearray(value)
        for start, end in spans:
            out[start:end] = overwrite.fill(end - start).encode("ascii")
        return bytes(out)
    text: str = value  # type: ignore[assignment]  # bytes returned above: mypy does not narrow on type() is
    for start, end in spans:
        text = text[:start] + overwrite.fill(end - start) + text[end:]
    return text


def find(
    roots: Iterable[tuple[Any, bool]],
    checks: Checks,
    namespace: Any = None,
    skip: tuple[set[int], ...] = (),
    budget: int = ITEMS,
) -> Places:
    """Where the secrets reachable from ``roots`` — ``(object, under a secret name)`` — sit (``Places``),
    looking at ``budget`` objects at most; ``namespace``: the session's, whose keys are its variables;
    ``skip``: the objects earlier walks looked at."""
    places = Places()
    walk = _Walk(checks, places, id(namespace) if namespace is not None else 0, skip, budget)
    collecting = gc.isenabled()
    gc.disable()  # the walk allocates little that lives; a collection of a large heap would cost more than it
    try:
        for obj, under in roots:
            if id(obj) == walk.namespace_id or type(obj) is dict:
                places.seen.add(id(obj))
                walk.mapping(obj, under, named=True)
            else:
                walk.child(obj, under, None, None, None)
        walk.run()
    finally:
        if collecting:
            gc.enable()
    places.looked = budget - max(walk.items, 0)
    return places
