"""How big the result of an in-process computation would be, known before it is computed.

C work holds the GIL: ``3**1999999 * 3**1999999``, ``"%700000000d" % 0`` or ``sorted()`` of a 100-million
character string cannot be stopped by any deadline once started. The reader (``reader``) computes over plain
values only, and only after the check here for its operation says the work fits ``GIL_BUDGET`` (50 ms) by a
wide margin: integer bit lengths for ``*``, ``**``, ``<<``, ``//``, ``%``; lengths of sequences built by
``+``, ``*``, ``join``, ``replace``; widths and precisions of ``%``-formatting; the number of items sorted or
collected. A computation that does not fit raises ``TooBig``: the walled child does it, under its deadline
and limits.
"""

from __future__ import annotations

import re
from typing import Any

from .. import structural

GIL_BUDGET = 0.05  # seconds the worst in-process computation may hold the GIL (benchmarks/inprocess.py)
MAX_BITS = 100_000  # an integer operand or result of a quadratic operation (≈ 30,000 digits)
MAX_CHARS = 10_000_000  # characters or bytes of a string made here
MAX_ITEMS = 1_000_000  # items of a list or tuple made here
MAX_SORTED = 50_000  # items sorted, or characters of a string split into items
MAX_WIDTH = 10_000  # a %-format width or precision


class TooBig(Exception):
    """The computation would hold the GIL too long in this process: the walled child does it."""


def _bits(value: Any) -> int:
    return value.bit_length() if type(value) is int or type(value) is bool else 0


def _length(value: Any) -> int:
    t = type(value)
    if t is str or t is bytes or t is list or t is tuple:
        return len(value)
    return -1


def _need(ok: bool) -> None:
    if not ok:
        raise TooBig


def binary(op: str, left: Any, right: Any) -> None:
    """``left op right`` fits (``op`` as in ``ast``: ``Add``, ``Mult``, ``Pow`` …)."""
    lb, rb = _bits(left), _bits(right)
    if op in ("FloorDiv", "Mod", "Div") and (type(left) is str or type(left) is bytes):
        return formatting(left, right)
    if op in ("Mult", "FloorDiv", "Mod", "Div", "Pow", "LShift", "RShift", "MatMult"):
        _need(lb <= MAX_BITS and rb <= MAX_BITS)
    if op == "Mult":
        ln, rn = _length(left), _length(right)
        if ln >= 0 or rn >= 0:  # a repeat: the sequence's length times the count
            count = right if ln >= 0 else left
            _need(type(count) in (int, bool) and max(ln, rn) * max(int(count), 0) <= _limit(left, right))
        else:
            _need(lb + rb <= MAX_BITS)
    elif op == "Pow":
        if type(right) is int and right > 0 and lb:
            _need(lb * right <= MAX_BITS)
    elif op == "LShift":
        _need(type(right) is not int or lb + max(right, 0) <= MAX_BITS)
    elif op == "Add":
        ln, rn = _length(left), _length(right)
        if ln >= 0 and rn >= 0:
            _need(ln + rn <= _limit(left, right))


def _limit(*values: Any) -> int:
    return MAX_CHARS if any(type(v) is str or type(v) is bytes for v in values) else MAX_ITEMS


# %-formatting: one conversion spec, with its width and precision (a ``*`` takes them from the arguments).
_SPEC = re.compile(rb"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%b])")


def formatting(template: Any, args: Any) -> None:
    """``template % args`` fits: every width and precision (also those a ``*`` takes from ``args``) at most
    ``MAX_WIDTH``, and no more specs than a short template holds."""
    raw = template.encode("utf-8", "surrogatepass") if type(template) is str else template
    _need(len(raw) <= MAX_CHARS)
    values = list(args) if type(args) is tuple else [args]
    text(args)  # what ``%s``/``%d``/``%r`` turn into text
    taken = 0
    specs = 0
    for spec in _SPEC.finditer(raw):
        specs += 1
        for part in (spec.group(1), spec.group(2)):
            if part == b"*":
                number = values[taken] if taken < len(values) else 0
                taken += 1
                _need(type(number) is int and abs(number) <= MAX_WIDTH)
            elif part is not None:
                _need(len(part) <= 5 and int(part) <= MAX_WIDTH)
        if spec.group(3) != b"%":
            taken += 1
    _need(specs <= 10_000)


def text(value: Any) -> None:
    """Turning plain ``value`` into text fits: no integer in it longer than ``MAX_BITS`` (CPython's
    int-to-decimal is quadratic, and a session may lift its digit limit) and no more than ``MAX_CHARS`` of
    strings in all."""
    budget = [MAX_CHARS]
    _need(_text_fits(value, budget, 0))


def operand(value: Any) -> None:
    """Comparing, hashing, sorting or looking through plain ``value`` fits: each of those reads every string
    it meets up to the first difference, once per reference — ``[s1] * 10_000 == [s2] * 10_000`` for two
    equal 50 MB strings reads 500 GB — so the strings of an operand, counted once per reference, stay within
    ``MAX_CHARS`` in all (a sort reads each about log n times: still within ``GIL_BUDGET``), and its integers
    within ``MAX_BITS``."""
    text(value)


def _text_fits(value: Any, budget: list[int], depth: int) -> bool:
    t = type(value)
    if t is int:
        return value.bit_length() <= MAX_BITS
    if t is str or t is bytes or structural.is_subclass(t, str) or structural.is_subclass(t, bytes):
        budget[0] -= len(value)  # (a subclass here is numpy's own string scalar: a plain value)
        return budget[0] >= 0
    if t is dict:
        if structural.all_scalars(value) and structural.all_scalars(value.values()):
            return _scalars_fit([*value, *value.values()], budget)
        return all(
            _text_fits(k, budget, depth + 1) and _text_fits(v, budget, depth + 1) for k, v in value.items()
        )
    if t is list or t is tuple or t is set or t is frozenset:
        if structural.all_scalars(value):
            return _scalars_fit(value, budget)
        return depth < 20 and all(_text_fits(item, budget, depth + 1) for item in value)
    return True


def _scalars_fit(items: Any, budget: list[int]) -> bool:
    """``_text_fits`` of exact scalars (the common case), in a few C loops rather than a call per item."""
    budget[0] -= sum(map(len, [v for v in items if type(v) is str or type(v) is bytes]))
    ints = [v for v in items if type(v) is int]
    return budget[0] >= 0 and (not ints or max(map(int.bit_length, ints)) <= MAX_BITS)


def digits(value: Any) -> None:
    """``int()`` of a string of digits fits (quadratic in their number once the session lifted the limit)."""
    _need((type(value) is not str and type(value) is not bytes) or len(value) <= 5_000)


def items(iterable: Any, most: int = MAX_ITEMS) -> None:
    """Collecting or sorting ``iterable`` (a plain container or a string) fits ``most`` items."""
    _need(len(iterable) <= most)


def method(receiver: Any, name: str, args: list[Any]) -> None:
    """A string, bytes or container method of the reader's small set fits."""
    n = len(receiver) if type(receiver) in (str, bytes, list, tuple, dict) else 0
    if name == "join":
        parts = args[0] if args else ()
        total = sum(len(p) for p in parts if type(p) is str or type(p) is bytes)
        _need(total + n * max(len(parts) - 1, 0) <= MAX_CHARS)
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if type(old) is type(receiver) and type(new) is type(receiver):
            grows = max(len(new) - len(old), 0)
            _need(n + (n + 1) * grows <= MAX_CHARS)
    elif name in ("center", "ljust", "rjust", "zfill"):
        _need(bool(args) and type(args[0]) is int and args[0] <= MAX_CHARS)
    elif name in ("encode", "hex", "expandtabs"):
        _need(n * 8 <= MAX_CHARS)
    elif name in ("split", "splitlines", "rsplit"):
        _need(n <= MAX_CHARS)
