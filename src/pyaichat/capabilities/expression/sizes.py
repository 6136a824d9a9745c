"""How much work an in-process computation does, known before it is computed.

C work holds the GIL: ``3**1999999 * 3**1999999``, ``"%700000000d" % 0``, ``str()`` of ten thousand
4,000-digit integers or ``sorted()`` of a 100-million character string cannot be stopped by any deadline
once started. The reader (``reader``) computes over plain values only, and only after the check here for its
operation says the *whole* work fits ``GIL_BUDGET`` (50 ms) by a wide margin — not each item, all of them:
integer bit lengths for ``*``, ``**``, ``<<``, ``//``, ``%``; the estimated cost of turning a whole value into
text (``text_cost``: every item, every character by how ``repr`` escapes it, and the decimal digits of every
integer, which CPython writes in quadratic time — and the session may have lifted its digit limit); the
bytes and bits an operand makes a comparison, a hash or a sort read (a sort about ``log n`` times, a running
``sum`` of integers the items times the largest); the lengths of strings made by ``+``, ``*``, ``join``,
``replace`` and ``%``. A computation that does not fit raises ``TooBig``: the walled child does it, under
its deadline and limits. The costs were measured on a loaded two-core machine (``benchmarks/inprocess.py``).

From Python 3.12 CPython hands some integer work to ``_pylong``, Python code looked up in ``sys.modules``
(where the session can replace it): decimal conversion past 1,000 digits of 30 bits, division by more than
300 such digits into a quotient of more than 150, ``int()`` of more than 6,000 digits. The bounds here keep
the in-process tier below those, so only C runs.
"""

from __future__ import annotations

import re
from typing import Any

from .. import structural

GIL_BUDGET = 0.05  # seconds the worst in-process computation may hold the GIL (benchmarks/inprocess.py)
MAX_BITS = 100_000  # an integer operand or result of ``*``, ``**``, ``<<`` (100k x 100k bits: ~7 ms loaded)
MAX_DIVISOR_BITS = 9_000  # ... of a divisor (3.12+: more than 300 digits of 30 bits is _pylong's) ...
MAX_QUOTIENT_BITS = 4_000  # ... unless the quotient is this short (3.12+: under 150 digits stays in C)
MAX_TEXT_BITS = 30_000  # an integer turned into decimal here (3.12+: past 1,000 digits it is _pylong's)
MAX_DIGITS = 50_000  # decimal digits of all the integers of more than 64 bits one conversion writes
MAX_TEXT_COST = 10_000_000  # estimated cost of one conversion to text, in ~ns (``text_cost``)
MAX_OPERAND_BYTES = 10_000_000  # string bytes an operand holds, once per reference (a non-ASCII char: 4)
MAX_OPERAND_BITS = 4_000_000  # integer bits an operand holds, once per reference
MAX_WORK = 20_000_000  # bytes ``sum``/``min``/``max``/``sorted`` go through (``reduction``)
MAX_CHARS = 1_000_000  # bytes of a string made here (a character outside ASCII counts 4)
MAX_ITEMS = 1_000_000  # items of a list or tuple made here
MAX_SORTED = 50_000  # items sorted, hashed into a set, or characters of a string split into items
MAX_WIDTH = 10_000  # a %-format width or precision

# What turning one item into text costs (~ns, measured loaded): the item itself, and per character of a
# string by how repr escapes it (printable ASCII is copied; other ASCII may become ``\x00``; outside ASCII
# ``\U000e0000`` is looked up and written per character), per byte of bytes.
_ITEM, _FLOAT, _COMPLEX = 100, 2_000, 4_000
_PRINTABLE, _ASCII, _WIDE, _BYTE = 3, 40, 150, 15


class TooBig(Exception):
    """The computation would hold the GIL too long in this process: the walled child does it."""


def _bits(value: Any) -> int:
    return value.bit_length() if type(value) is int or type(value) is bool else 0


def _length(value: Any) -> int:
    t = type(value)
    if t is str or t is bytes or t is list or t is tuple:
        return len(value)
    return -1


def _width(value: Any) -> int:
    """Bytes per character a string made from ``value`` may need (1 for bytes and ASCII text, else 4)."""
    return 4 if type(value) is str and not value.isascii() else 1


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
    if op in ("FloorDiv", "Mod") and type(left) is int and type(right) is int:
        division(lb, rb)
    if op == "Mult":
        ln, rn = _length(left), _length(right)
        if ln >= 0 or rn >= 0:  # a repeat: the sequence's length times the count
            sequence, count = (left, right) if ln >= 0 else (right, left)
            total = max(ln, rn) * max(int(count), 0) if type(count) in (int, bool) else -1
            _need(total >= 0 and total * _width(sequence) <= _limit(left, right))
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
            _need((ln + rn) * max(_width(left), _width(right)) <= _limit(left, right))


def division(dividend_bits: int, divisor_bits: int) -> None:
    """Integer division (``//``, ``%``, ``divmod``, ``round(n, -k)``) of these sizes stays in CPython's C
    schoolbook division: a short divisor, or a short quotient (3.12+ gives the rest to ``_pylong``)."""
    _need(
        dividend_bits <= MAX_BITS
        and (divisor_bits <= MAX_DIVISOR_BITS or dividend_bits - divisor_bits <= MAX_QUOTIENT_BITS)
    )


def rounding(value: Any, ndigits: Any) -> None:
    """``round(value, ndigits)``: an integer rounded to ``-k`` digits is divided by ``10**k``."""
    if type(value) is int and type(ndigits) is int and ndigits < 0:
        _need(-ndigits <= MAX_BITS // 3)
        division(value.bit_length(), -ndigits * 10 // 3 + 1)


def _limit(*values: Any) -> int:
    return MAX_CHARS if any(type(v) is str or type(v) is bytes for v in values) else MAX_ITEMS


# %-formatting: one conversion spec, with its width and precision (a ``*`` takes them from the arguments).
_SPEC = re.compile(rb"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%b])")


def formatting(template: Any, args: Any) -> None:
    """``template % args`` fits: every width and precision (also those a ``*`` takes from ``args``) at most
    ``MAX_WIDTH``, the text the conversions make within ``text_cost``, and the result — the template, each
    spec's width or precision, what the arguments turn into — within ``MAX_CHARS``."""
    raw = template.encode("utf-8", "surrogatepass") if type(template) is str else template
    _need(len(raw) <= MAX_CHARS)
    values = list(args) if type(args) is tuple else [args]
    made = text(args)  # what ``%s``/``%d``/``%r`` turn into text
    taken = 0
    widths = 0
    for spec in _SPEC.finditer(raw):
        for part in (spec.group(1), spec.group(2)):
            if part == b"*":
                number = values[taken] if taken < len(values) else 0
                taken += 1
                _need(type(number) is int and abs(number) <= MAX_WIDTH)
                widths += abs(number)
            elif part is not None:
                _need(len(part) <= 5 and int(part) <= MAX_WIDTH)
                widths += int(part)
        if spec.group(3) != b"%":
            taken += 1
        _need(widths <= MAX_CHARS)
    _need((len(raw) + widths + made) * _width(template) <= MAX_CHARS)


def text(value: Any, *, quoted: bool = True) -> int:
    """Turning plain ``value`` into text (``str``, ``repr``, ``%``) fits ``MAX_TEXT_COST``, each integer in
    it within ``MAX_TEXT_BITS`` and all of them within ``MAX_DIGITS`` decimal digits; returns about how many
    characters it makes. ``quoted`` false: ``str()`` of a string itself, which copies nothing."""
    if not quoted and type(value) is str:
        return len(value)
    tally = _Tally()
    tally.add(value)
    _need(tally.cost <= MAX_TEXT_COST and tally.digits <= MAX_DIGITS and tally.widest <= MAX_TEXT_BITS)
    return tally.chars


def operand(value: Any) -> None:
    """Comparing, hashing, sorting or looking through plain ``value`` fits: each of those reads every string
    and integer it meets, once per reference — ``[s1] * 10_000 == [s2] * 10_000`` for two equal 50 MB
    strings reads 500 GB, ``hash(tuple(bigs))`` every digit of every one — so those of an operand, counted
    once per reference, stay within ``MAX_OPERAND_BYTES`` and ``MAX_OPERAND_BITS`` in all, each integer
    within ``MAX_BITS``."""
    _Tally().add(value)


def reduction(name: str, iterable: Any, start: Any = 0) -> None:
    """``sum``, ``min``, ``max`` or ``sorted`` of a plain iterable fits. A comparison reads at most the
    shorter item, so ``min``/``max`` read each item about once and a sort about ``log n`` times; a running
    ``sum`` of integers is rewritten whole at every step, so it costs the items times the largest."""
    items = list(iterable) if type(iterable) is dict else iterable
    n = len(items) + 1
    tally = _Tally()
    tally.add(items)
    tally.add(start)
    total = tally.bytes + tally.bits // 8
    if name == "sorted":
        _need(total * n.bit_length() <= MAX_WORK)
    elif name == "sum":
        _need(n * (tally.widest // 8 + 1) <= MAX_WORK)
    else:
        _need(total <= MAX_WORK)


def digits(value: Any) -> None:
    """``int()`` of a string of digits fits (quadratic in their number once the session lifted the limit;
    3.12+ gives more than 6,000 to ``_pylong``)."""
    _need((type(value) is not str and type(value) is not bytes) or len(value) <= 5_000)


def items(iterable: Any, most: int = MAX_ITEMS) -> None:
    """Collecting or sorting ``iterable`` (a plain container or a string) fits ``most`` items."""
    _need(len(iterable) <= most)


def method(receiver: Any, name: str, args: list[Any]) -> None:
    """A string, bytes or container method of the reader's small set fits."""
    n = len(receiver) if type(receiver) in (str, bytes, list, tuple, dict) else 0
    wide = _width(receiver)
    if name == "join":
        parts = args[0] if args else ()
        total = sum(len(p) * _width(p) for p in parts if type(p) is str or type(p) is bytes)
        _need(total + n * wide * max(len(parts) - 1, 0) <= MAX_CHARS)
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if type(old) is type(receiver) and type(new) is type(receiver):
            grows = max(len(new) - len(old), 0)
            _need((n + (n + 1) * grows) * max(wide, _width(new)) <= MAX_CHARS)
    elif name in ("center", "ljust", "rjust", "zfill"):
        _need(bool(args) and type(args[0]) is int and args[0] * wide <= MAX_CHARS)
    elif name in ("encode", "hex", "expandtabs"):
        _need(n * 8 <= MAX_CHARS)
    elif name in ("split", "splitlines", "rsplit"):
        _need(n <= MAX_CHARS)


class _Tally:
    """What a plain value holds, once per reference: its estimated cost as text (``cost``, ~ns), the
    characters that makes (``chars``), the decimal digits of its integers past 64 bits (``digits``), the
    bytes of its strings and bits of its integers (checked as it goes), and its widest integer's bits."""

    __slots__ = ("bits", "bytes", "chars", "cost", "digits", "widest")

    def __init__(self) -> None:
        self.cost = self.chars = self.digits = self.bytes = self.bits = self.widest = 0

    def add(self, value: Any) -> None:
        stack = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            t = type(item)
            self.cost += _ITEM
            self.chars += 2
            if t is list or t is tuple or t is set or t is frozenset:
                _need(depth < 20)
                if structural.all_scalars(item):
                    self._scalars(item)
                else:
                    stack.extend((part, depth + 1) for part in item)
            elif t is dict:
                _need(depth < 20)
                if structural.all_scalars(item) and structural.all_scalars(item.values()):
                    self._scalars([*item, *item.values()])
                else:
                    stack.extend((part, depth + 1) for pair in item.items() for part in pair)
            else:
                self._scalar(item)
            _need(self.cost <= 100 * MAX_TEXT_COST)  # checked as it goes: a huge value stops early

    def _scalars(self, items: Any) -> None:
        """Exact scalars (the common case), in a few C loops rather than a call per item."""
        self.cost += _ITEM * len(items)
        self.chars += 2 * len(items)
        strings = [v for v in items if type(v) is str]
        if strings:
            narrow = [s for s in strings if s.isascii()]
            self._strings(narrow, sum(map(len, narrow)), wide=False)
            self._strings([s for s in strings if not s.isascii()], 0, wide=True)
        raw = [v for v in items if type(v) is bytes]
        if raw:
            self._bytes(sum(map(len, raw)))
        ints = [v for v in items if type(v) is int]
        if ints:
            lengths = list(map(int.bit_length, ints))
            self._ints(sum(lengths), max(lengths), [b for b in lengths if b > 64])
        floats = sum(1 for v in items if type(v) is float)
        complexes = sum(1 for v in items if type(v) is complex)
        self.cost += _FLOAT * floats + _COMPLEX * complexes  # (None and bools: the item's own cost)
        self.chars += 50 * (floats + complexes)

    def _scalar(self, value: Any) -> None:
        t = type(value)
        if t is str or structural.is_subclass(t, str):  # (a subclass here is numpy's own string scalar)
            if str.isascii(value):
                self._strings([value], str.__len__(value), wide=False)
            else:
                self._strings([value], 0, wide=True)
        elif t is bytes or structural.is_subclass(t, bytes):
            self._bytes(bytes.__len__(value))
        elif t is int or t is bool:
            bits = int.bit_length(value)
            self._ints(bits, bits, [bits] if bits > 64 else [])
        elif t is float or t is complex:
            self.cost += _FLOAT if t is float else _COMPLEX
            self.chars += 50

    def _strings(self, strings: list[Any], ascii_chars: int, *, wide: bool) -> None:
        if wide:
            chars = sum(map(str.__len__, strings))
            self.bytes += 4 * chars
            self.cost += _WIDE * chars
            self.chars += 10 * chars
        else:
            self.bytes += ascii_chars
            # printable ASCII is copied as it is; scanning for it costs less than what it is charged
            plain = ascii_chars * _PRINTABLE <= MAX_TEXT_COST and all(map(str.isprintable, strings))
            self.cost += ascii_chars * (_PRINTABLE if plain else _ASCII)
            self.chars += ascii_chars * (2 if plain else 4)
        _need(self.bytes <= MAX_OPERAND_BYTES)

    def _bytes(self, total: int) -> None:
        self.bytes += total
        self.cost += _BYTE * total
        self.chars += 4 * total
        _need(self.bytes <= MAX_OPERAND_BYTES)

    def _ints(self, bits: int, longest: int, big: list[int]) -> None:
        _need(longest <= MAX_BITS)
        self.bits += bits
        self.widest = max(self.widest, longest)
        _need(self.bits <= MAX_OPERAND_BITS)
        if big:
            decimal = sum(b * 30103 // 100_000 + 1 for b in big)  # log10(2) = 0.30103
            self.digits += decimal  # the quadratic part: bounded by MAX_DIGITS and MAX_TEXT_BITS
            self.chars += decimal
            self.cost += decimal
