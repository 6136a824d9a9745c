"""The allow-list of the in-process level: each function and method that may be called there, with the
argument forms known to be pure.

A ``Sig`` names the positional parameters the read-only form takes, in order, and the kind of value each
parameter (positional or keyword) accepts; nothing else is accepted — no other keyword (``out``, ``inplace``,
``key``, ``where``, ``dtype``…), no more positional arguments than listed (``arr.round(0, arr)`` passes
``out`` by position), no ``*args`` or ``**kwargs``. Every kind accepts plain values only (``plain``); none
accepts a callable, so a bound method, a function or a class is never an argument.

Methods are listed per receiver class, looked up along the receiver's type's MRO by the class's qualified
name and library (``pandas``, ``numpy``, ``builtins``, ``collections``, ``datetime``): a ``.get`` of a dict is
not a ``.get`` of anything else, and a class the session defined (even a subclass of ``DataFrame``) has none.
Methods that write (``sort``, ``fill``, ``update``, ``pop``, ``to_csv(path)``…), call what they are given
(``apply``, ``map``, ``agg``, ``pipe``, ``key=``) or use global state (``sample`` without a seed) are not
here.

Over 400 lines on purpose: most of it is the table itself, one entry a line, read and reviewed as one list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .plain import is_environment, is_known, is_numpy_scalar, is_plain

Kind = Callable[[Any], bool]


# -- kinds of argument ---------------------------------------------------------------------------------------
def BOOL(v: Any) -> bool:
    return type(v) is bool or (is_numpy_scalar(v) and v.dtype.kind == "b")


def INT(v: Any) -> bool:
    return (type(v) is int and abs(v) < 2**63) or (is_numpy_scalar(v) and v.dtype.kind in "iu")


def NUM(v: Any) -> bool:
    return type(v) in (int, float, bool) or (is_numpy_scalar(v) and v.dtype.kind in "biuf")


def STR(v: Any) -> bool:
    return type(v) is str


def NONE(v: Any) -> bool:
    return v is None


def LABEL(v: Any) -> bool:
    """A column or index label: a string, number, boolean, ``None`` or a tuple of those."""
    if type(v) is tuple:
        return len(v) <= 16 and all(LABEL(part) for part in v)
    return v is None or type(v) in (str, int, float, bool) or is_numpy_scalar(v)


def PLAIN(v: Any) -> bool:
    return is_plain(v)


def AXIS(v: Any) -> bool:
    return (v in (0, 1, "index", "columns", "rows") and type(v) in (int, str)) or v is None


def INTS(v: Any) -> bool:
    return INT(v) or (type(v) in (tuple, list) and len(v) <= 32 and all(INT(x) for x in v))


def any_of(*kinds: Kind) -> Kind:
    def kind(v: Any) -> bool:
        return any(k(v) for k in kinds)

    return kind


def list_of(item: Kind, most: int = 10_000) -> Kind:
    def kind(v: Any) -> bool:
        return type(v) in (list, tuple) and len(v) <= most and all(item(x) for x in v)

    return kind


def array_like(v: Any) -> bool:
    """Plain values, or a numpy/pandas array, series or index (never a callable): ``isin``'s values."""
    return is_plain(v) or (is_known(v) and not callable(v) and hasattr(v, "dtype"))


LABELS = any_of(LABEL, list_of(LABEL))
STRS = any_of(STR, list_of(STR))
NUMS = any_of(NUM, list_of(NUM))
BOOLS = any_of(BOOL, list_of(BOOL))
OPT_INT = any_of(INT, NONE)
OPT_NUM = any_of(NUM, NONE)
OPT_STR = any_of(STR, NONE)
OPT_STRS = any_of(STRS, NONE)
AXES = any_of(INTS, NONE)


@dataclass(frozen=True)
class Sig:
    """The read-only form of one callable: ``positional`` parameter names in order, every accepted parameter's
    kind in ``params``, and optionally up to ``varargs_max`` extra positional arguments of kind
    ``varargs``."""

    positional: tuple[str, ...] = ()
    params: Mapping[str, Kind] = field(default_factory=dict)
    varargs: Kind | None = None
    varargs_max: int = 0

    def accepts(self, args: list[Any], kwargs: Mapping[str, Any]) -> bool:
        """Do these arguments fit the read-only form (names, positions and kinds)?"""
        fixed = len(self.positional)
        if len(args) > fixed + self.varargs_max:
            return False
        for name, value in zip(self.positional, args, strict=False):
            if name in kwargs or not self.params[name](value):
                return False
        extra = args[fixed:]
        if extra and (self.varargs is None or not all(self.varargs(v) for v in extra)):
            return False
        return all(name in self.params and self.params[name](value) for name, value in kwargs.items())


def sig(*positional: str, varargs: Kind | None = None, varargs_max: int = 0, **params: Kind) -> Sig:
    missing = [name for name in positional if name not in params]
    if missing:
        raise ValueError(f"no kind for {missing}")
    return Sig(tuple(positional), params, varargs, varargs_max)


NONE_SIG = sig()

# -- builtin functions (by name; only when the session has not rebound the name) ----------------------------
ANY = is_known  # the one argument of len(), type() … : any value of a known type (checked by the reader)
FUNCTIONS: dict[str, Sig] = {
    "len": sig("obj", obj=lambda v: is_known(v) or is_environment(v)),  # the size of a copy of the environ
    "type": sig("obj", obj=lambda v: True),
    "callable": sig("obj", obj=lambda v: True),
    "id": sig("obj", obj=lambda v: True),
    "isinstance": sig("obj", "classinfo", obj=ANY, classinfo=lambda v: False),  # see ``reader._isinstance``
    "sorted": sig("iterable", iterable=ANY, reverse=BOOL),
    "min": sig("iterable", varargs=PLAIN, varargs_max=8, iterable=ANY, default=PLAIN),
    "max": sig("iterable", varargs=PLAIN, varargs_max=8, iterable=ANY, default=PLAIN),
    "sum": sig("iterable", "start", iterable=ANY, start=NUM),
    "any": sig("iterable", iterable=ANY),
    "all": sig("iterable", iterable=ANY),
    "abs": sig("x", x=ANY),
    "round": sig("number", "ndigits", number=ANY, ndigits=OPT_INT),
    "divmod": sig("a", "b", a=NUM, b=NUM),
    "int": sig("x", "base", x=any_of(NUM, STR, lambda v: type(v) is bytes, is_numpy_scalar), base=INT),
    "float": sig("x", x=any_of(NUM, STR, is_numpy_scalar)),
    "complex": sig("real", "imag", real=any_of(NUM, STR), imag=NUM),
    "bool": sig("x", x=ANY),
    "str": sig("object", object=ANY),
    "repr": sig("obj", obj=ANY),
    "ascii": sig("obj", obj=ANY),
    "hash": sig("obj", obj=PLAIN),
    "list": sig("iterable", iterable=ANY),
    "tuple": sig("iterable", iterable=ANY),
    "set": sig("iterable", iterable=ANY),
    "frozenset": sig("iterable", iterable=ANY),
    "dict": sig("mapping", mapping=ANY),
    "range": sig("start", "stop", "step", start=INT, stop=INT, step=INT),
    "hex": sig("x", x=INT),
    "oct": sig("x", x=INT),
    "bin": sig("x", x=INT),
    "ord": sig("c", c=any_of(STR, lambda v: type(v) is bytes)),
    "chr": sig("i", i=INT),
}
# Builtins that consume their argument in one C loop: a huge ``range`` is refused first (``limits``).
MATERIALISING = frozenset({"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all"})

# -- methods, per receiver class ((library, qualified name) → name → Sig) -----------------------------------
_STR_RANGE = {"start": OPT_INT, "end": OPT_INT}
_STR = {
    **{name: NONE_SIG for name in (
        "lower", "upper", "title", "capitalize", "casefold", "swapcase", "isdigit", "isalpha", "isalnum",
        "isnumeric", "isdecimal", "isspace", "islower", "isupper", "istitle", "isidentifier", "isascii",
        "isprintable",
    )},
    "strip": sig("chars", chars=OPT_STR), "lstrip": sig("chars", chars=OPT_STR),
    "rstrip": sig("chars", chars=OPT_STR),
    "split": sig("sep", "maxsplit", sep=OPT_STR, maxsplit=INT),
    "rsplit": sig("sep", "maxsplit", sep=OPT_STR, maxsplit=INT),
    "splitlines": sig("keepends", keepends=BOOL),
    "startswith": sig("prefix", "start", "end", prefix=any_of(STR, list_of(STR, 64)), **_STR_RANGE),
    "endswith": sig("suffix", "start", "end", suffix=any_of(STR, list_of(STR, 64)), **_STR_RANGE),
    **{name: sig("sub", "start", "end", sub=STR, **_STR_RANGE) for name in (
        "find", "rfind", "index", "rindex", "count",
    )},
    "partition": sig("sep", sep=STR), "rpartition": sig("sep", sep=STR),
    "removeprefix": sig("prefix", prefix=STR), "removesuffix": sig("suffix", suffix=STR),
    "join": sig("iterable", iterable=list_of(STR)),
    "encode": sig("encoding", "errors", encoding=STR, errors=STR),
}  # fmt: skip
_BYTES = {
    **{name: _STR[name] for name in (
        "lower", "upper", "strip", "lstrip", "rstrip", "isdigit", "isalpha", "isalnum", "isspace",
        "find", "rfind", "count", "index", "rindex",
    )},
    "split": sig("sep", "maxsplit", sep=any_of(NONE, lambda v: type(v) is bytes), maxsplit=INT),
    "startswith": sig("prefix", prefix=lambda v: type(v) is bytes),
    "endswith": sig("suffix", suffix=lambda v: type(v) is bytes),
    "decode": sig("encoding", "errors", encoding=STR, errors=STR),
    "hex": NONE_SIG,
}  # fmt: skip
for _name in ("strip", "lstrip", "rstrip"):
    _BYTES[_name] = sig("chars", chars=any_of(NONE, lambda v: type(v) is bytes))
for _name in ("find", "rfind", "count", "index", "rindex"):
    _BYTES[_name] = sig("sub", "start", "end", sub=lambda v: type(v) is bytes, **_STR_RANGE)
_SEQUENCE = {
    "index": sig("value", "start", "stop", value=PLAIN, start=INT, stop=INT),
    "count": sig("value", value=PLAIN),
}
_DICT = {
    "keys": NONE_SIG,
    "values": NONE_SIG,
    "items": NONE_SIG,
    "get": sig("key", "default", key=PLAIN, default=PLAIN),
    "copy": NONE_SIG,
}
_SET = {
    **{name: sig(varargs=PLAIN, varargs_max=4) for name in (
        "union", "intersection", "difference", "symmetric_difference",
    )},
    **{name: sig("other", other=PLAIN) for name in ("issubset", "issuperset", "isdisjoint")},
    "copy": NONE_SIG,
}  # fmt: skip
_DATES = {
    **{name: NONE_SIG for name in (
        "isoformat", "weekday", "isoweekday", "isocalendar", "date", "time", "timestamp", "toordinal",
        "total_seconds", "timetuple", "utcoffset", "tzname",
    )},
    "strftime": sig("format", format=lambda v: type(v) is str and len(v) <= 200),
}  # fmt: skip

# numpy: an axis by position at most; ``out``, ``dtype``, ``where``, ``initial`` never.
_NP_REDUCE = sig("axis", axis=AXES, keepdims=BOOL)
_NP_SPREAD = sig("axis", axis=AXES, keepdims=BOOL, ddof=INT)
_NDARRAY = {
    **{name: _NP_REDUCE for name in (
        "sum", "mean", "prod", "min", "max", "any", "all", "ptp",
    )},
    "std": _NP_SPREAD, "var": _NP_SPREAD,
    "argmax": sig("axis", axis=OPT_INT), "argmin": sig("axis", axis=OPT_INT),
    "cumsum": sig("axis", axis=OPT_INT), "cumprod": sig("axis", axis=OPT_INT),
    "round": sig("decimals", decimals=INT),
    "clip": sig("min", "max", min=OPT_NUM, max=OPT_NUM),
    "argsort": sig("axis", axis=OPT_INT),
    "nonzero": NONE_SIG, "tolist": NONE_SIG, "ravel": NONE_SIG, "flatten": NONE_SIG,
    "transpose": NONE_SIG, "squeeze": NONE_SIG,
    "reshape": sig(varargs=INTS, varargs_max=8, order=STR),
    "item": sig(varargs=INT, varargs_max=8),
    "astype": sig("dtype", dtype=STR),
    "dot": sig("b", b=array_like),
}  # fmt: skip

# pandas: reductions take ``axis`` by position at most; ``inplace``, ``key``, ``func`` never.
_REDUCE = sig("axis", axis=AXIS, skipna=BOOL, numeric_only=BOOL)
_SPREAD = sig("axis", axis=AXIS, skipna=BOOL, numeric_only=BOOL, ddof=INT)
_COUNTED = sig("axis", axis=AXIS, skipna=BOOL, numeric_only=BOOL, min_count=INT)
_NDFRAME = {
    **{name: _REDUCE for name in ("mean", "median", "min", "max", "skew", "kurt", "kurtosis")},
    "sum": _COUNTED, "prod": _COUNTED,
    "std": _SPREAD, "var": _SPREAD, "sem": _SPREAD,
    "any": sig("axis", axis=AXIS, skipna=BOOL, bool_only=BOOL),
    "all": sig("axis", axis=AXIS, skipna=BOOL, bool_only=BOOL),
    "count": sig("axis", axis=AXIS, numeric_only=BOOL),
    "nunique": sig("axis", axis=AXIS, dropna=BOOL),
    "head": sig("n", n=INT), "tail": sig("n", n=INT),
    "describe": sig(percentiles=list_of(NUM, 32), include=OPT_STRS, exclude=OPT_STRS),
    **{name: NONE_SIG for name in (
        "isna", "isnull", "notna", "notnull", "abs", "first_valid_index", "last_valid_index", "keys",
        "to_numpy", "transpose", "squeeze",
    )},
    **{name: sig("axis", axis=AXIS, skipna=BOOL) for name in ("cumsum", "cumprod", "cummax", "cummin")},
    "round": sig("decimals", decimals=INT),
    "clip": sig("lower", "upper", lower=OPT_NUM, upper=OPT_NUM),
    "isin": sig("values", values=array_like),
    "equals": sig("other", other=lambda v: is_known(v) and not callable(v)),
    "fillna": sig("value", value=any_of(NUM, STR, BOOL, NONE)),
    "dropna": sig(axis=AXIS, how=STR, subset=LABELS, thresh=INT, ignore_index=BOOL),
    "drop_duplicates": sig(subset=LABELS, keep=any_of(STR, lambda v: v is False), ignore_index=BOOL),
    "duplicated": sig(subset=LABELS, keep=any_of(STR, lambda v: v is False)),
    "sort_values": sig("by", by=LABELS, axis=AXIS, ascending=BOOLS, na_position=STR, ignore_index=BOOL,
                       kind=STR),
    "sort_index": sig(axis=AXIS, ascending=BOOLS, na_position=STR, level=any_of(INT, STR)),
    "nlargest": sig("n", "columns", n=INT, columns=LABELS, keep=STR),
    "nsmallest": sig("n", "columns", n=INT, columns=LABELS, keep=STR),
    "idxmax": sig("axis", axis=AXIS, skipna=BOOL), "idxmin": sig("axis", axis=AXIS, skipna=BOOL),
    "corr": sig(method=STR, min_periods=INT, numeric_only=BOOL),
    "cov": sig(min_periods=INT, ddof=INT, numeric_only=BOOL),
    "quantile": sig("q", q=NUMS, numeric_only=BOOL, interpolation=STR),
    "diff": sig("periods", periods=INT), "pct_change": sig("periods", periods=INT),
    "rank": sig(axis=AXIS, method=STR, ascending=BOOL, pct=BOOL, na_option=STR),
    "astype": sig("dtype", dtype=any_of(STR, lambda v: type(v) is dict and len(v) <= 1000
                                        and all(LABEL(k) and STR(t) for k, t in v.items()))),
    "select_dtypes": sig(include=OPT_STRS, exclude=OPT_STRS),
    "mode": sig(dropna=BOOL),
    "memory_usage": sig(index=BOOL, deep=BOOL),
    "value_counts": sig(normalize=BOOL, sort=BOOL, ascending=BOOL, dropna=BOOL),
    "groupby": sig("by", by=LABELS, level=any_of(INT, STR), sort=BOOL, dropna=BOOL, as_index=BOOL,
                   observed=BOOL),
    "get": sig("key", key=LABELS),
    "reset_index": sig(drop=BOOL),
    "set_index": sig("keys", keys=LABELS, drop=BOOL),
    "rename": sig(columns=lambda v: type(v) is dict and is_plain(v), index=lambda v: type(v) is dict
                  and is_plain(v)),
    "between": sig("left", "right", left=any_of(NUM, STR), right=any_of(NUM, STR), inclusive=STR),
}  # fmt: skip
_SERIES = {
    "unique": NONE_SIG, "tolist": NONE_SIG, "to_list": NONE_SIG,
    "value_counts": sig(normalize=BOOL, sort=BOOL, ascending=BOOL, dropna=BOOL),
}  # fmt: skip
_FRAME = {
    "value_counts": sig("subset", subset=LABELS, normalize=BOOL, sort=BOOL, ascending=BOOL, dropna=BOOL),
    "merge": sig("right", right=lambda v: type(v).__qualname__ in ("DataFrame", "Series") and is_known(v),
                 how=STR, on=LABELS, left_on=LABELS, right_on=LABELS, suffixes=list_of(STR, 2)),
}  # fmt: skip
_INDEX = {
    **{name: NONE_SIG for name in (
        "unique", "tolist", "to_list", "isna", "notna", "to_numpy", "nunique",
    )},
    **{name: NONE_SIG for name in ("min", "max", "argmin", "argmax")},
    "get_loc": sig("key", key=LABEL),
    "isin": sig("values", values=array_like),
    "value_counts": sig(normalize=BOOL, sort=BOOL, ascending=BOOL, dropna=BOOL),
    "difference": sig("other", other=array_like), "union": sig("other", other=array_like),
    "intersection": sig("other", other=array_like),
    "equals": sig("other", other=lambda v: is_known(v) and not callable(v)),
}  # fmt: skip
_GROUPBY = {
    **{name: sig(numeric_only=BOOL) for name in (
        "mean", "median", "sum", "min", "max", "prod", "first", "last",
    )},
    "std": sig(ddof=INT, numeric_only=BOOL), "var": sig(ddof=INT, numeric_only=BOOL),
    **{name: NONE_SIG for name in ("size", "count", "nunique", "describe", "ngroup", "cumcount")},
    "head": sig("n", n=INT), "tail": sig("n", n=INT),
    "value_counts": sig(normalize=BOOL, sort=BOOL, ascending=BOOL, dropna=BOOL),
}  # fmt: skip
_STRING_METHODS = {  # ``s.str``: no regular expressions (an expression that does not end is the child's)
    **{name: NONE_SIG for name in (
        "lower", "upper", "title", "capitalize", "len", "strip", "lstrip", "rstrip", "isdigit", "isalpha",
        "isnumeric", "isspace",
    )},
    "startswith": sig("pat", pat=STR), "endswith": sig("pat", pat=STR),
    "contains": sig("pat", pat=STR, case=BOOL, regex=lambda v: v is False, na=any_of(BOOL, NONE)),
    "slice": sig("start", "stop", "step", start=OPT_INT, stop=OPT_INT, step=OPT_INT),
}  # fmt: skip

METHODS: dict[tuple[str, str], dict[str, Sig]] = {
    ("builtins", "str"): _STR,
    ("builtins", "bytes"): _BYTES,
    ("builtins", "list"): {**_SEQUENCE, "copy": NONE_SIG},
    ("builtins", "tuple"): _SEQUENCE,
    ("builtins", "range"): _SEQUENCE,
    ("builtins", "dict"): _DICT,
    ("builtins", "set"): _SET,
    ("builtins", "frozenset"): _SET,
    ("builtins", "int"): {"bit_length": NONE_SIG, "is_integer": NONE_SIG},
    ("builtins", "float"): {"is_integer": NONE_SIG, "hex": NONE_SIG, "as_integer_ratio": NONE_SIG},
    ("datetime", "date"): _DATES,
    ("datetime", "datetime"): _DATES,
    ("datetime", "time"): _DATES,
    ("datetime", "timedelta"): _DATES,
    ("collections", "Counter"): {"most_common": sig("n", n=OPT_INT), "total": NONE_SIG},
    ("collections", "deque"): _SEQUENCE,
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "generic"): {"item": NONE_SIG, "round": sig("decimals", decimals=INT), "tolist": NONE_SIG},
    ("pandas", "NDFrame"): _NDFRAME,
    ("pandas", "Series"): _SERIES,
    ("pandas", "DataFrame"): _FRAME,
    ("pandas", "Index"): _INDEX,
    ("pandas", "BaseGroupBy"): _GROUPBY,
    ("pandas", "GroupBy"): _GROUPBY,
    ("pandas", "StringMethods"): _STRING_METHODS,
    ("pandas", "Timestamp"): _DATES,
    ("pandas", "Timedelta"): _DATES,
}

# numpy's module-level functions: the array by position, an axis at most; ufuncs one or two operands.
_NP_ARRAY_REDUCE = sig("a", "axis", a=array_like, axis=AXES, keepdims=BOOL)
NUMPY_FUNCTIONS: dict[str, Sig] = {
    **{name: _NP_ARRAY_REDUCE for name in (
        "sum", "mean", "median", "prod", "min", "max", "amin", "amax", "any", "all", "ptp", "nanmean",
        "nansum", "nanmin", "nanmax", "nanmedian",
    )},
    "std": sig("a", "axis", a=array_like, axis=AXES, ddof=INT, keepdims=BOOL),
    "var": sig("a", "axis", a=array_like, axis=AXES, ddof=INT, keepdims=BOOL),
    **{name: sig("a", "axis", a=array_like, axis=OPT_INT) for name in (
        "argmax", "argmin", "sort", "argsort", "cumsum", "cumprod", "diff",
    )},
    "unique": sig("ar", ar=array_like, return_counts=BOOL),
    "percentile": sig("a", "q", a=array_like, q=NUMS, axis=OPT_INT),
    "quantile": sig("a", "q", a=array_like, q=NUMS, axis=OPT_INT),
    "histogram": sig("a", "bins", a=array_like, bins=INT),
    "shape": sig("a", a=array_like), "ndim": sig("a", a=array_like), "size": sig("a", a=array_like),
    "round": sig("a", "decimals", a=array_like, decimals=INT),
    "where": sig("condition", "x", "y", condition=array_like, x=array_like, y=array_like),
    "count_nonzero": sig("a", "axis", a=array_like, axis=OPT_INT),
    "isclose": sig("a", "b", a=array_like, b=array_like),
    "allclose": sig("a", "b", a=array_like, b=array_like),
    "array_equal": sig("a1", "a2", a1=array_like, a2=array_like),
    "corrcoef": sig("x", x=array_like), "dot": sig("a", "b", a=array_like, b=array_like),
    # ufuncs: the operands by position only (a third positional is ``out``)
    **{name: sig("x", x=array_like) for name in (
        "abs", "absolute", "sqrt", "exp", "log", "log10", "log2", "log1p", "isnan", "isinf", "isfinite",
        "floor", "ceil", "sign", "negative", "sin", "cos", "tan",
    )},
    **{name: sig("x1", "x2", x1=array_like, x2=array_like) for name in (
        "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "maximum",
        "minimum", "equal", "not_equal", "greater", "less", "greater_equal", "less_equal", "mod",
    )},
}  # fmt: skip


def method_sig(receiver: Any, name: str) -> Sig | None:
    """The read-only form of ``receiver.name`` when its library allows it (module docstring), else None."""
    for cls in type(receiver).__mro__:
        library = (cls.__module__ or "").partition(".")[0]
        table = METHODS.get((library, cls.__qualname__))
        if table is not None and name in table:
            return table[name]
    return None
