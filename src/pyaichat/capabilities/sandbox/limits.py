"""Size and time bounds checked *before* an operation allocates or loops in C.

The compiler rewrites ``a * b``, ``a ** b`` and ``a << b`` into calls of ``mul``/``pow_``/``lshift`` and the
augmented forms into ``inplace``; the builtins that materialise an iterable in one C loop are wrapped by
``materialising``. A C-level loop cannot be interrupted in-process, so refusing it up front is the only bound
there; in a forked child ``RLIMIT_AS`` and the parent's SIGKILL are the backstops.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from typing import Any

from ...errors import CapabilityTimeout, SandboxViolation

MAX_ITEMS = 10_000_000  # elements in one materialised list/tuple/set
MAX_CHARS = 100_000_000  # characters or bytes in one string made by repetition
MAX_INT_BITS = 4_000_000  # about 1.2 million decimal digits
MAX_RANGE = 100_000_000  # longer ranges cannot be iterated within any deadline anyway

_STRINGS = (str, bytes, bytearray)
_SEQUENCES = (str, bytes, bytearray, list, tuple)


class Deadline(BaseException):
    """Raised by ``tick`` once the run is past its deadline. A ``BaseException`` so ``except Exception``
    in the sandboxed code does not swallow it, and every later tick raises it again."""


def _too_big(what: str) -> SandboxViolation:
    return SandboxViolation(f"{what} is too large for the sandbox")


def _check_repeat(seq: Any, times: int) -> None:
    size = len(seq) * times
    if size > (MAX_CHARS if isinstance(seq, _STRINGS) else MAX_ITEMS):
        raise _too_big(f"a {type(seq).__name__} of {size:,} items")


_NUMBERS = frozenset({int, float, complex, bool})


def mul(a: Any, b: Any) -> Any:
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        return a * b
    if isinstance(b, int) and isinstance(a, _SEQUENCES):
        _check_repeat(a, b)
    elif isinstance(a, int) and isinstance(b, _SEQUENCES):
        _check_repeat(b, a)
    return a * b


def _check_pow(a: Any, b: Any) -> None:
    if (
        type(a) in (int, bool)
        and type(b) in (int, bool)
        and b > 0
        and a not in (0, 1, -1)
        and a.bit_length() * b > MAX_INT_BITS
    ):
        raise _too_big(f"an integer with about {int(a.bit_length() * b * 0.30103):,} digits")


def pow_(a: Any, b: Any, mod: Any = None) -> Any:
    if mod is not None:
        return pow(a, b, mod)
    _check_pow(a, b)
    return a**b


def lshift(a: Any, b: Any) -> Any:
    _check_shift(a, b)
    return a << b


def add(a: Any, b: Any) -> Any:
    """``+`` with a size check for sequence concatenation (doubling a list in a loop)."""
    _check_concat(a, b)
    return a + b


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "|=": operator.ior,
    "^=": operator.ixor,
    "&=": operator.iand,
    "@=": operator.imatmul,
}
_PLAIN: dict[str, Callable[[Any, Any], Any]] = {
    "+=": add,
    "-=": operator.sub,
    "*=": mul,
    "/=": operator.truediv,
    "//=": operator.floordiv,
    "%=": operator.mod,
    "**=": pow_,
    "<<=": lshift,
    ">>=": operator.rshift,
    "|=": operator.or_,
    "^=": operator.xor,
    "&=": operator.and_,
    "@=": operator.matmul,
}


def _check_shift(a: Any, b: Any) -> None:
    if isinstance(a, int) and isinstance(b, int) and a and b > MAX_INT_BITS:
        raise _too_big(f"an integer of {b:,} bits")


def _check_concat(a: Any, b: Any) -> None:
    if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
        size = len(a) + len(b)
        if size > (MAX_CHARS if isinstance(a, _STRINGS) else MAX_ITEMS):
            raise _too_big(f"a {type(a).__name__} of {size:,} items")


def _check_mul(a: Any, b: Any) -> None:
    if isinstance(b, int) and isinstance(a, _SEQUENCES):
        _check_repeat(a, b)
    elif isinstance(a, int) and isinstance(b, _SEQUENCES):
        _check_repeat(b, a)


_NUMERIC_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.add,
    "-=": operator.sub,
    "*=": operator.mul,
    "/=": operator.truediv,
    "//=": operator.floordiv,
    "%=": operator.mod,
    "|=": operator.or_,
    "^=": operator.xor,
    "&=": operator.and_,
}
_CHECKS: dict[str, Callable[[Any, Any], None]] = {
    "*=": _check_mul,
    "**=": _check_pow,
    "<<=": _check_shift,
    "+=": _check_concat,
}


def make_inplace(is_user_object: Callable[[Any], bool]) -> Callable[[str, Any, Any], Any]:
    """``x op= y`` as RestrictedPython's ``_inplacevar_``: size-checked, and never in place on a user object
    (``lst += [1]`` then rebinds a sandbox-local name to a new list and the user's list is untouched)."""

    numeric = _NUMERIC_OPS

    def inplace(op: str, x: Any, y: Any) -> Any:
        if type(x) in _NUMBERS and type(y) in _NUMBERS and op in numeric:
            return numeric[op](x, y)  # immutable numbers: in place and plain are the same
        check = _CHECKS.get(op)
        if check is not None:
            check(x, y)
        if is_user_object(x):
            return _PLAIN[op](x, y)
        return _INPLACE[op](x, y)

    return inplace


def _size_of(value: Any) -> int | None:
    if isinstance(value, range):
        try:
            return len(value)
        except OverflowError:
            return MAX_ITEMS + 1
    return None


# Builtins that consume a whole iterable in one C call: ``materialising`` wraps each of them.
MATERIALISING_BUILTINS = frozenset(
    {"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all", "dict"}
)


def materialising(func: Callable[..., Any], what: str) -> Callable[..., Any]:
    """Wrap a builtin that consumes an iterable in one C loop so a huge ``range`` is refused first."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for arg in args[:2]:
            size = _size_of(arg)
            if size is not None and size > MAX_ITEMS:
                raise _too_big(f"{what}() over {size:,} items")
        return func(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = getattr(func, "__name__", what)
    wrapper.__doc__ = getattr(func, "__doc__", None)
    return wrapper


def safe_range(*args: Any) -> range:
    r = range(*args)
    size = _size_of(r)
    if size is not None and size > MAX_RANGE:
        raise _too_big(f"a range of {size:,} items")
    return r


def sized_buffer(kind: type) -> Callable[..., Any]:
    """``bytes(n)`` / ``bytearray(n)`` allocate n zero bytes in C: cap n."""

    def make(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], int) and args[0] > MAX_CHARS:
            raise _too_big(f"{kind.__name__}({args[0]:,})")
        if args and _size_of(args[0]) is not None and _size_of(args[0]) > MAX_ITEMS:  # type: ignore[operator]  # the second call returns the same size as the first
            raise _too_big(f"{kind.__name__}() over {_size_of(args[0]):,} items")
        return kind(*args, **kwargs)

    make.__name__ = make.__qualname__ = kind.__name__
    return make


def make_tick(deadline: float) -> Callable[[], bool]:
    """The cooperative time check injected into every loop body and function entry (in-process mode)."""
    clock = time.monotonic

    def tick() -> bool:
        if clock() > deadline:
            raise Deadline()
        return True  # also used as a comprehension condition and in ``lambda: tick() and body``

    return tick


def timeout_error(seconds: float) -> CapabilityTimeout:
    return CapabilityTimeout(f"The code did not finish within {seconds:g} s and was stopped.")
