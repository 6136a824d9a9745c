"""The metadata of the data libraries' own objects that the in-process reads may read: a short table
(``TABLE``), each entry with why reading it touches no element and runs no code of the session's.

Each entry is computed by code of ours from where the library stores it — an ndarray's C header, a pandas
object's block manager, an index's backing array — through the compiled classes' own field getters
(``structural.library_field``: the getter must be the one the declaring class defines, so a replacement the
session put there is seen and not run). No Python code of numpy's or pandas' runs, so neither a patch of
theirs nor what their code would call back — an element's ``__eq__`` or ``__hash__``, an extension array or
dtype of the session's, ``attrs`` deep-copied into a result (whose copy's ``__del__`` would run later) — can.
Only exact types count: a subclass the session defined has its own code.

Anything else of a library's object — a method, a computed attribute (``df.T``, ``df.values``), a row — is
read in the walled child.
"""

from __future__ import annotations

import sys
from typing import Any

from .structural import (
    MISSING,
    NotStructural,
    compiled,
    compiled_call,
    instance_dict,
    is_plain,
    is_subclass,
    library_field,
    lookup,
    module_namespace,
    module_of,
    qualname_of,
    root_of,
    str_keys,
)

__all__ = ["TABLE", "axis_length", "dtype_text", "frame_dtypes", "index_labels", "kind", "metadata"]

# (kind, attribute) → why reading it runs nothing of the session's and touches no element.
TABLE: dict[tuple[str, str], str] = {
    ("ndarray", "shape"): "a C field of the array's header",
    ("ndarray", "dtype"): "a C field of the array's header",
    ("ndarray", "ndim"): "a C field of the array's header",
    ("ndarray", "size"): "the product of the header's dimensions",
    ("ndarray", "nbytes"): "the header's dimensions times its item size",
    ("ndarray", "itemsize"): "a C field of the array's dtype",
    ("DataFrame", "shape"): "the lengths of its two axes' backing arrays",
    ("DataFrame", "ndim"): "always 2",
    ("DataFrame", "size"): "the product of its axes' lengths",
    ("DataFrame", "empty"): "whether an axis has length 0",
    ("DataFrame", "columns"): "the column index its block manager stores (the same object)",
    ("DataFrame", "index"): "the row index its block manager stores (the same object)",
    ("Series", "shape"): "the length of its index's backing array",
    ("Series", "ndim"): "always 1",
    ("Series", "size"): "the length of its index's backing array",
    ("Series", "empty"): "whether its index has length 0",
    ("Series", "index"): "the index its block manager stores (the same object)",
    ("Series", "name"): "the name it stores",
    ("Series", "dtype"): "the dtype its one block's array stores",
    ("Index", "shape"): "the length of its backing array",
    ("Index", "ndim"): "always 1",
    ("Index", "size"): "the length of its backing array",
    ("Index", "empty"): "whether its backing array has length 0",
    ("Index", "name"): "the name it stores",
    ("Index", "dtype"): "the dtype its backing array stores",
}

_INDEX_CLASSES = frozenset(
    {"Index", "RangeIndex", "DatetimeIndex", "TimedeltaIndex", "PeriodIndex", "CategoricalIndex",
     "IntervalIndex", "MultiIndex"}
)  # fmt: skip
_MANAGERS = ("BlockManager", "SingleBlockManager")


def kind(value: Any) -> str | None:
    """``ndarray``, ``DataFrame``, ``Series`` or ``Index`` for numpy's and pandas' own classes of those kinds
    (told by their module and name: every read below goes through stored fields and compiled getters, which
    an impostor of the session's does not have, so the name decides only where to look)."""
    t = type(value)
    module = module_of(t)
    if module == "numpy":
        return "ndarray" if t is _numpy("ndarray", None) else None
    if module.partition(".")[0] != "pandas":
        return None
    name = qualname_of(t)
    if name in ("DataFrame", "Series"):
        return name
    return "Index" if name in _INDEX_CLASSES else None


def _module_dict(name: str) -> dict[str, Any]:
    return module_namespace(sys.modules.get(name))


def _numpy(name: str, default: Any = MISSING) -> Any:
    found = _module_dict("numpy").get(name)
    if found is not None and is_subclass(type(found), type) and compiled(found):
        return found
    if default is MISSING:
        raise NotStructural(f"numpy.{name} is not numpy's own")
    return default


def _libs(module: str, name: str) -> type:
    cls = _module_dict(f"pandas._libs.{module}").get(name)
    if type(cls) is not type:
        raise NotStructural(f"pandas._libs.{module}.{name} is not loaded")
    return cls


def metadata(value: Any, name: str) -> Any:
    """``value.name`` for an entry of ``TABLE`` (``NotStructural`` when it is not one, or when ``value``'s
    layout is not the library's own)."""
    found = kind(value)
    if found is None or (found, name) not in TABLE:
        raise NotStructural(f"{qualname_of(type(value))}.{name} is not metadata read here")
    if found == "ndarray":
        if name == "itemsize":
            return library_field(library_field(value, "dtype", type(value)), "itemsize", _numpy("dtype"))
        return library_field(value, name, type(value))
    if name == "ndim":
        return 2 if found == "DataFrame" else 1
    if name in ("shape", "size", "empty"):
        shape = _shape(value, found)
        size = shape[0] * shape[1] if len(shape) == 2 else shape[0]
        return {"shape": shape, "size": size, "empty": size == 0}[name]
    if name == "name":
        return _state(value).get("_name")
    if name == "dtype":
        if qualname_of(type(value)) == "RangeIndex":  # a range has no array: its labels are int64
            return _numpy("dtype")("int64")
        return array_dtype(_values(value, found))
    axes = _axes(value)
    return axes[0] if (found, name) == ("DataFrame", "columns") else axes[-1]


def _shape(value: Any, found: str) -> tuple[int, ...]:
    if found == "Index":
        return (axis_length(value),)
    axes = _axes(value)
    if found == "Series":
        return (axis_length(axes[0]),)
    return (axis_length(axes[1]), axis_length(axes[0]))


def _state(value: Any) -> dict[str, Any]:
    """An object's stored fields (its ``__dict__``, every key a name)."""
    state = instance_dict(value)
    if state is None or not str_keys(state):
        raise NotStructural(f"this {qualname_of(type(value))} has no stored state of its own")
    return state


def _manager(value: Any) -> Any:
    mgr = _state(value).get("_mgr")
    t = type(mgr)
    if module_of(t) != "pandas.core.internals.managers" or qualname_of(t) not in _MANAGERS:
        raise NotStructural("its data is not held by pandas' own block manager")
    return mgr


def _manager_field(mgr: Any, name: str) -> Any:
    if qualname_of(type(mgr)) == "BlockManager":
        return library_field(mgr, name, _libs("internals", "BlockManager"))
    found = _state(mgr).get(name, MISSING)
    if found is MISSING:
        raise NotStructural("pandas' single-block manager without its fields")
    return found


def _axes(value: Any) -> list[Any]:
    axes = _manager_field(_manager(value), "axes")
    if type(axes) is not list or not axes or not all(kind(axis) == "Index" for axis in axes):
        raise NotStructural("its axes are not pandas' own indexes")
    return axes


def blocks(value: Any) -> list[tuple[Any, Any]]:
    """The (array, placement) of each block of a frame or series: the arrays its data is stored in and which
    columns each holds (a slice or an array of positions)."""
    found = _manager_field(_manager(value), "blocks")
    if type(found) is not tuple:
        raise NotStructural("its blocks are not pandas' own")
    block, placement = _libs("internals", "Block"), _libs("internals", "BlockPlacement")
    out = []
    for blk in found:
        values = library_field(blk, "values", block)
        where = library_field(library_field(blk, "_mgr_locs", block), "indexer", placement)
        out.append((values, where))
    return out


def _values(value: Any, found: str) -> Any:
    if found == "Index":
        return _index_array(value)
    parts = blocks(value)
    if len(parts) != 1:
        raise NotStructural("a series with more than one block")
    return parts[0][0]


# -- lengths and dtypes of backing arrays --------------------------------------------------------------------
def _index_array(index: Any) -> Any:
    found = _state(index).get("_data", MISSING)
    if found is MISSING:
        raise NotStructural("an index without its backing array")
    return found


def axis_length(index: Any) -> int:
    """An index's length from its backing array (a ``RangeIndex``'s ``range``, a ``MultiIndex``'s first
    codes)."""
    if kind(index) != "Index":
        raise NotStructural("not pandas' own index")
    state = _state(index)
    name = qualname_of(type(index))
    if name == "RangeIndex":
        found = state.get("_range")
        if type(found) is not range:
            raise NotStructural("a range index without its range")
        return len(found)
    if name == "MultiIndex":
        codes: Any = state.get("_codes")
        if root_of(type(codes)) != "pandas" or not is_subclass(type(codes), list):
            raise NotStructural("a multi-index without its codes")
        return array_length(list.__getitem__(codes, 0)) if list.__len__(codes) else 0
    return array_length(_index_array(index))


def array_length(array: Any) -> int:
    """The length of an ndarray or of one of pandas' own extension arrays, from what stores its data."""
    t = type(array)
    if t is _numpy("ndarray", None):
        shape = library_field(array, "shape", t)
        if not shape:
            raise NotStructural("a zero-dimensional array has no length")
        return int(shape[0])
    backing = _backing(array)
    if backing is not None:
        return array_length(backing)
    pa_array = _extension_state(array).get("_pa_array")
    if pa_array is not None and module_of(type(pa_array)) == "pyarrow.lib":
        return int(compiled_call(pa_array, "__len__"))
    raise NotStructural(f"the length of a {qualname_of(t)} is computed by its own code")


def _extension_state(array: Any) -> dict[str, Any]:
    """The stored fields of one of pandas' own extension arrays (``{}`` for any other object)."""
    if root_of(type(array)) != "pandas":
        return {}
    state = instance_dict(array)
    return state if state is not None and str_keys(state) else {}


def _ndarray_backed(t: type) -> type | None:
    backed = _module_dict("pandas._libs.arrays").get("NDArrayBacked")
    return backed if type(backed) is type and is_subclass(t, backed) else None


def _backing(array: Any) -> Any:
    """The ndarray behind one of pandas' numpy-backed extension arrays (categorical codes, datetimes,
    masked numbers), or ``None``."""
    if root_of(type(array)) != "pandas":
        return None
    backed = _ndarray_backed(type(array))
    if backed is not None:
        return library_field(array, "_ndarray", backed)
    data = _extension_state(array).get("_data")
    return data if type(data) is _numpy("ndarray", None) else None


def array_dtype(array: Any) -> Any:
    """The dtype an ndarray or one of pandas' own extension arrays stores."""
    t = type(array)
    ndarray = _numpy("ndarray", None)
    if t is ndarray:
        return library_field(array, "dtype", t)
    if root_of(t) != "pandas":
        raise NotStructural(f"a {qualname_of(t)} is not one of pandas' own arrays")
    backed = _ndarray_backed(t)
    if backed is not None:
        return library_field(array, "_dtype", backed)
    state = _extension_state(array)
    found = state.get("_dtype", MISSING)
    if found is not MISSING:
        return found
    data = state.get("_data")
    if type(data) is ndarray:  # a masked integer or float array: its dtype is in pandas' own table
        where = {"i": "integer", "u": "integer", "f": "floating"}.get(
            _numpy_field(_numpy_field(data, "dtype"), "kind")
        )
        name = "NUMPY_INT_TO_DTYPE" if where == "integer" else "NUMPY_FLOAT_TO_DTYPE"
        table = _module_dict(f"pandas.core.arrays.{where}").get(name) if where else None
        if type(table) is dict:
            found = table.get(_numpy_field(data, "dtype"), MISSING)  # hashed and compared by numpy's C
            if found is not MISSING:
                return found
    raise NotStructural(f"the dtype of a {qualname_of(t)} is computed by its own code")


def _numpy_field(obj: Any, name: str) -> Any:
    """A C field of an ndarray (``dtype``, ``shape``) or of a numpy dtype (``kind``, ``itemsize``)."""
    owner = _numpy("ndarray") if type(obj) is _numpy("ndarray", None) else _numpy("dtype")
    return library_field(obj, name, owner)


def frame_dtypes(frame: Any) -> list[Any]:
    """The dtype of each column of a frame, in column order, from its blocks."""
    columns = axis_length(_axes(frame)[0])
    found: list[Any] = [MISSING] * columns
    for values, where in blocks(frame):
        dtype = array_dtype(values)
        positions = range(columns)[where] if type(where) is slice else _positions(where)
        for position in positions:
            found[position] = dtype
    if any(dtype is MISSING for dtype in found):
        raise NotStructural("a column that no block holds")
    return found


def _positions(where: Any) -> list[int]:
    if type(where) is not _numpy("ndarray", None):
        raise NotStructural("a block placement that is not pandas' own")
    return [int(p) for p in compiled_call(where, "tolist")]


# -- text ----------------------------------------------------------------------------------------------------
_NUMPY_NAMES = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex", "O": "object"}


def dtype_text(dtype: Any) -> str:
    """A dtype's name as pandas and numpy print it, made from its stored fields (a dtype this does not know
    is named by its class)."""
    t = type(dtype)
    if compiled(t) and root_of(t) == "numpy":
        return _numpy_dtype_text(dtype)
    name = qualname_of(t)
    if root_of(t) != "pandas":
        return name
    state = instance_dict(dtype) or {}
    if not str_keys(state):
        return name
    if name == "CategoricalDtype":
        return "category"
    if name == "StringDtype":
        na_value = state.get("_na_value")
        return "str" if type(na_value) is float and na_value != na_value else "string"
    if name == "DatetimeTZDtype":
        unit, tz = state.get("_unit"), state.get("_tz")
        return f"datetime64[{unit}, {_tz_text(tz)}]" if type(unit) is str else name
    constant = lookup(t, "name")
    if type(constant) is str and name.endswith("Dtype"):  # Int64Dtype, BooleanDtype …: a class constant
        return constant
    return name


def _tz_text(tz: Any) -> str:
    """A time zone's name when it is Python's own (``UTC``, ``Europe/Oslo``), else ``tz``."""
    datetime, zoneinfo = sys.modules.get("datetime"), sys.modules.get("zoneinfo")
    if datetime is not None and type(tz) is datetime.timezone:
        return str(tz)
    if zoneinfo is not None and type(tz) is zoneinfo.ZoneInfo and compiled(type(tz)):
        return str(tz)  # the zone's key, by its compiled ``__str__``
    return "tz"


def dtype_kind(dtype: Any) -> str:
    """A numpy dtype's one-letter kind (``f``, ``U``, ``O`` …); ``""`` for any other dtype."""
    t = type(dtype)
    return _numpy_field(dtype, "kind") if structural_numpy_dtype(t) else ""


def structural_numpy_dtype(t: type) -> bool:
    return compiled(t) and root_of(t) == "numpy" and is_subclass(t, _numpy("dtype"))


def _numpy_dtype_text(dtype: Any) -> str:
    code = _numpy_field(dtype, "kind")
    if _numpy_field(dtype, "names") is not None:
        return "structured"
    if code in _NUMPY_NAMES:
        return (
            _NUMPY_NAMES[code]
            if code in "bO"
            else f"{_NUMPY_NAMES[code]}{_numpy_field(dtype, 'itemsize') * 8}"
        )
    text = _numpy_field(dtype, "str")  # '<U5', '<M8[ns]'
    if code in "Mm":
        return ("datetime64" if code == "M" else "timedelta64") + text[3:]
    return text


_MASKED = ("IntegerArray", "FloatingArray", "BooleanArray")


def index_labels(index: Any, most: int, *, plain: bool = True) -> list[Any]:
    """The first ``most`` labels of an index, when they are plain values (strings, numbers); with ``plain``
    false, whatever objects they are (nothing of theirs is run to fetch them)."""
    name = qualname_of(type(index))
    if kind(index) != "Index" or name == "MultiIndex":
        raise NotStructural("the labels of this index are not read here")
    if name == "RangeIndex":
        found = _state(index).get("_range")
        if type(found) is not range:
            raise NotStructural("a range index without its range")
        return list(found[:most])
    array = _index_array(index)
    ndarray = _numpy("ndarray", None)
    backing = _backing(array)
    if type(array) is ndarray:
        labels = compiled_call(array[:most], "tolist")
    elif backing is not None and qualname_of(type(array)) in (
        "IntegerArray",
        "FloatingArray",
        "BooleanArray",
    ):
        labels = compiled_call(backing[:most], "tolist")
    else:
        pa_array = _extension_state(array).get("_pa_array")
        if pa_array is None or module_of(type(pa_array)) != "pyarrow.lib":
            raise NotStructural("the labels of this index are computed by its own code")
        labels = compiled_call(compiled_call(pa_array, "slice", 0, most), "to_pylist")
    if plain and not is_plain(labels):
        raise NotStructural("labels that are objects of the session's")
    return labels


# -- a few cells ---------------------------------------------------------------------------------------------
def column_cells(frame: Any, position: int, head: int, tail: int) -> list[Any]:
    """The first ``head`` and last ``tail`` cells of a frame's column (or a series, ``position`` 0), read from
    the block that stores it; the objects as stored (nothing of theirs runs to fetch them)."""
    for values, where in blocks(frame):
        positions = range(axis_length(_axes(frame)[0]))[where] if type(where) is slice else _positions(where)
        if kind(frame) == "Series":
            positions = range(1)
        if position not in positions:
            continue
        row = list(positions).index(position)
        length = _column_length(values)
        spans = [(0, min(head, length))]
        if length > head:
            spans.append((max(length - tail, head), length))
        return [cell for start, stop in spans for cell in _cells(values, row, start, stop)]
    raise NotStructural("a column that no block holds")


def row_cells(frame: Any, position: int) -> list[Any]:
    """The cells of one row of a frame (one per column), read from its blocks."""
    return [cell for values, _ in blocks(frame) for cell in _row(values, position)]


def _column_length(values: Any) -> int:
    if type(values) is _numpy("ndarray", None):
        shape = library_field(values, "shape", type(values))
        return int(shape[-1])
    return array_length(values)


def _cells(values: Any, row: int, start: int, stop: int) -> list[Any]:
    """Cells ``start:stop`` of row ``row`` of a 2-D block array, or of a 1-D array."""
    ndarray = _numpy("ndarray", None)
    if type(values) is ndarray:
        ndim = library_field(values, "ndim", ndarray)
        part = values[row, start:stop] if ndim == 2 else values[start:stop]
        return compiled_call(part, "tolist")
    return _extension_cells(values, start, stop)


def _row(values: Any, position: int) -> list[Any]:
    ndarray = _numpy("ndarray", None)
    if type(values) is ndarray:
        ndim = library_field(values, "ndim", ndarray)
        part = values[:, position] if ndim == 2 else values[position : position + 1]
        return compiled_call(part, "tolist")
    return _extension_cells(values, position, position + 1)


def _extension_cells(values: Any, start: int, stop: int) -> list[Any]:
    """Cells of one of pandas' own extension arrays: from its Arrow array, its masked data, or a
    categorical's codes and categories."""
    state = _extension_state(values)
    pa_array = state.get("_pa_array")
    if pa_array is not None and module_of(type(pa_array)) == "pyarrow.lib":
        return compiled_call(compiled_call(pa_array, "slice", start, stop - start), "to_pylist")
    ndarray = _numpy("ndarray", None)
    data: Any = state.get("_data")
    if type(data) is ndarray:
        return compiled_call(data[start:stop], "tolist")
    backing = _backing(values)
    if backing is not None and qualname_of(type(values)) == "Categorical":
        categories = (instance_dict(array_dtype(values)) or {}).get("_categories")
        labels = index_labels(categories, 10_000, plain=False) if categories is not None else []
        codes = compiled_call(backing[start:stop], "tolist")
        return [labels[code] if 0 <= code < len(labels) else None for code in codes]
    raise NotStructural(f"the cells of a {qualname_of(type(values))} are read by its own code")
