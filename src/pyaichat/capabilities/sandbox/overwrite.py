"""Writing over an object's own memory, in the forked child only: a string's characters, a bytes object's
bytes, a tuple's item, the pointers of an object array.

Why in place: a secret string is referenced from places no walk finds all of — a tuple, a frozen object, a
code constant, a cell of an object column, a library's own copy of a setting. Overwriting the object itself
changes every reference to it at once, for the price of one write. Replacing a reference (``scrub``) is the
way where this is not possible.

CPython keeps no public way to write an existing string, so the layout is read off probe objects made here
when the module loads (the offsets of the hash, of the state bits and of the characters of each kind; of a
bytes object's data and a tuple's items; where the reference count is), and every write checks the object it
writes against that layout. Where a probe does not find what it looks for — another interpreter, a debug or
free-threaded build, a layout we do not know — ``LAYOUT`` is ``None`` and nothing is written in place.

What a write keeps: the length, and the kind of the characters (a string that needs two bytes per character
is filled with a two-byte character), so that the interpreter's invariants hold. The cached hash is
forgotten: the next ``hash()`` is the placeholder's (a hash kept would be a guessing oracle: compare
``hash(pw)`` with ``hash(guess)``). An interned string is never written (``sys.intern``'s table and every
attribute named like it share the object; ``scrub`` replaces its references instead), nor one shorter than
``MIN_LENGTH`` (the interpreter shares single characters and the empty string).

Nothing here is ever called in the session's process: the writes are meant for the child's copy, which ends
with the run.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
from dataclasses import dataclass
from typing import Any

MIN_LENGTH = 2  # shorter strings and bytes are shared by the interpreter (one character, the empty one)
PTR = ctypes.sizeof(ctypes.c_void_p)
_KIND_FILL = {1: "*", 2: "\u2022", 4: "\U0001f512"}  # per bytes-per-character: "*", "•", "🔒"
_LATIN1_FILL = "\u00b7"  # "·": one byte per character, not ASCII
_LABEL = "<redacted>"
_CHUNK = 1 << 16  # characters written at once by ``_repeat``
_ZEROED = 1 << 20  # bytes of filler over which whole pages are mapped as zeros instead (``_repeat``)


@dataclass(frozen=True)
class Layout:
    """Where things are in this interpreter's objects (byte offsets from the object's address)."""

    str_hash: int
    str_state: int
    ascii_data: int  # the characters of a compact ASCII string
    compact_data: int  # the characters of a compact non-ASCII string
    utf8: int  # a compact non-ASCII string's cached UTF-8 pointer, followed back by its length
    bytes_hash: int | None  # None: bytes do not cache their hash here
    bytes_data: int
    tuple_items: int
    refcount: bool  # the reference count is a plain ``Py_ssize_t`` at offset 0


def _find(obj: Any, expected: bytes, span: int = 256) -> int | None:
    raw = ctypes.string_at(id(obj), span)
    at = raw.find(expected)
    return at if at >= 0 else None


def _word(address: int, kind: Any = ctypes.c_ssize_t) -> int:
    return int(kind.from_address(address).value or 0)  # a NULL pointer reads as None


def _probe() -> Layout | None:
    """The layout, read off fresh objects and checked both ways; ``None`` where anything is unexpected."""
    if sys.implementation.name != "cpython" or getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return None
    try:
        tail = "Q7z" * 8
        ascii_probe = "".join(["pq", tail])
        probes = {
            k: "".join([first, "q", tail]) for k, first in ((1, "\u00e9"), (2, "\u0100"), (4, "\U0001f600"))
        }
        codecs = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}
        ascii_data = _find(ascii_probe, ascii_probe.encode("ascii"))
        datas = {k: _find(s, s.encode(codecs[k])) for k, s in probes.items()}
        if ascii_data is None or None in datas.values() or len(set(datas.values())) != 1:
            return None
        compact_data = datas[1]
        assert compact_data is not None
        str_hash = 2 * PTR + 8  # ob_refcnt, ob_type, length
        expected = hash(ascii_probe)
        if _word(id(ascii_probe) + str_hash) != expected:
            return None
        state = str_hash + 8
        interned = sys.intern("".join(["pyaichat-probe-", tail]))
        for s, kind, is_ascii in [(ascii_probe, 1, 1), *((p, k, 0) for k, p in probes.items())]:
            bits = _word(id(s) + state, ctypes.c_uint32)
            if bits & 3 or (bits >> 2) & 7 != kind or not (bits >> 5) & 1 or (bits >> 6) & 1 != is_ascii:
                return None
        if not _word(id(interned) + state, ctypes.c_uint32) & 3:
            return None
        utf8 = ascii_data + PTR  # after ``utf8_length``
        made = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
        made.restype, made.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
        if made(probes[2], None) != _word(id(probes[2]) + utf8, ctypes.c_void_p):
            return None
        if _word(id(probes[2]) + ascii_data) != len(probes[2].encode("utf-8")):
            return None
        blob = b"".join([b"pq", tail.encode()])
        bytes_data = _find(blob, blob)
        if bytes_data is None:
            return None
        hash_at = 3 * PTR  # ob_refcnt, ob_type, ob_size
        bytes_hash: int | None = hash_at if _word(id(blob) + hash_at) == hash(blob) else None
        pair = (ascii_probe, blob)
        first = [
            at for at in range(2 * PTR, 6 * PTR, PTR) if _word(id(pair) + at, ctypes.c_void_p) == id(pair[0])
        ]
        items = first[0] if first else None
        if items is None or _word(id(pair) + items + PTR, ctypes.c_void_p) != id(blob):
            return None
        counted = object()
        refcount = _word(id(counted)) == sys.getrefcount(counted) - 1
        return Layout(
            str_hash, state, ascii_data, compact_data, utf8, bytes_hash, bytes_data, items, refcount
        )
    except Exception:  # an interpreter whose objects are not what the probes expect
        return None


LAYOUT = _probe()


def fill(length: int, kind: int = 1, latin1: bool = False) -> str:
    """The placeholder text of ``length`` characters of ``kind`` bytes each: ``<redacted>`` then stars where
    it fits (ASCII), else a filler character of that kind."""
    if kind == 1 and not latin1:
        return (_LABEL + "*" * (length - len(_LABEL))) if length >= len(_LABEL) else "*" * length
    return (_LATIN1_FILL if kind == 1 else _KIND_FILL[kind]) * length


def placeholder(value: str | bytes) -> str | bytes:
    """A new placeholder of ``value``'s type and length (where it cannot be written in place)."""
    text = fill(len(value))
    return text.encode("ascii") if type(value) is bytes else text


def writable(value: Any) -> bool:
    """Whether ``overwrite`` can write ``value`` in place: an exact ``str`` (compact, not interned) or
    ``bytes``, long enough not to be one the interpreter shares."""
    layout = LAYOUT
    if layout is None or len(value) < MIN_LENGTH:
        return False
    t = type(value)
    if t is bytes:
        return True
    if t is not str:
        return False
    bits = _word(id(value) + layout.str_state, ctypes.c_uint32)
    return not bits & 3 and bool((bits >> 5) & 1)  # not interned, compact


def overwrite(value: str | bytes, spans: list[tuple[int, int]] | None = None) -> bool:
    """Write the placeholder over ``value`` (or over the character ``spans`` of it) in place; False when it
    cannot be (``writable``)."""
    if not writable(value):
        return False
    layout = LAYOUT
    assert layout is not None
    where = [(0, len(value))] if spans is None else spans
    address = id(value)
    if type(value) is bytes:
        for start, end in where:
            _fill_at(address + layout.bytes_data + start, end - start, 1, False, "ascii")
        if layout.bytes_hash is not None:
            ctypes.c_ssize_t.from_address(address + layout.bytes_hash).value = -1
        return True
    bits = _word(address + layout.str_state, ctypes.c_uint32)
    kind, is_ascii = (bits >> 2) & 7, (bits >> 6) & 1
    data = layout.ascii_data if is_ascii else layout.compact_data
    codec = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind]
    for start, end in where:
        _fill_at(address + data + start * kind, end - start, kind, not is_ascii, codec)
    if not is_ascii and _word(address + layout.utf8, ctypes.c_void_p):
        # the cached UTF-8 copy still holds the old characters: forgotten, made again from the new ones
        ctypes.c_void_p.from_address(address + layout.utf8).value = None
        ctypes.c_ssize_t.from_address(address + layout.ascii_data).value = 0
    ctypes.c_ssize_t.from_address(address + layout.str_hash).value = -1
    return True


def _fill_at(address: int, length: int, kind: int, latin1: bool, codec: str) -> None:
    """``fill(length, kind, latin1)`` written at ``address`` without making it first (a string of 400 MB
    would be copied twice more): the label, then its filler character repeated."""
    if kind == 1 and not latin1 and length >= len(_LABEL):
        ctypes.memmove(address, _LABEL.encode("ascii"), len(_LABEL))
        address, length = address + len(_LABEL), length - len(_LABEL)
    _repeat(address, fill(1, kind, latin1).encode(codec), length)


def _repeat(address: int, unit: bytes, count: int) -> None:
    """``unit`` written ``count`` times from ``address``. Over ``_ZEROED`` bytes, the whole pages inside are
    mapped afresh as zeros (NUL characters) instead: touching 400 MB of a forked child's copy page by page
    took 4 s, more than a run's deadline; a filler character still comes first, so the kind holds."""
    size = len(unit) * count
    if size >= _ZEROED and _LIBC is not None:
        first = -(-(address + len(unit)) // _PAGE) * _PAGE
        last = (address + size) // _PAGE * _PAGE
        # PROT_READ | PROT_WRITE; MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED
        if last > first and _LIBC.mmap(first, last - first, 3, 0x02 | 0x20 | 0x10, -1, 0) == first:
            _repeat(address, unit, (first - address) // len(unit))
            _repeat(last, unit, (address + size - last) // len(unit))
            return
    if len(unit) == 1:
        ctypes.memset(address, unit[0], count)
        return
    block = unit * min(count, _CHUNK)
    while count > 0:
        step = min(count, _CHUNK)
        ctypes.memmove(address, block, step * len(unit))
        address, count = address + step * len(unit), count - step


def _libc() -> Any:
    """The C library's ``mmap`` (Linux only: the flags above are Linux's), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()
_PAGE = mmap.PAGESIZE


def set_tuple_item(container: tuple[Any, ...], index: int, value: Any) -> bool:
    """``container[index] = value`` for a tuple, in place; the old item is kept alive (never freed: no
    ``__del__`` of it runs). False where the layout is not known."""
    layout = LAYOUT
    if layout is None or not 0 <= index < len(container):
        return False
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(value))
    ctypes.c_void_p.from_address(id(container) + layout.tuple_items + index * PTR).value = id(value)
    return True


def add_references(value: Any, count: int) -> bool:
    """Count ``count`` more references to ``value`` (written into arrays by ``fill_pointers``)."""
    layout = LAYOUT
    if layout is None or not layout.refcount:
        return False
    ctypes.c_ssize_t.from_address(id(value)).value += count
    return True
