"""xarray: DataArray and Dataset — dims, coordinates, data variables, dtypes and attributes.

An xarray variable may hold a numpy array (in memory), a Dask array (lazy) or a lazily indexed array backed
by a file (opened with ``open_dataset``): ``.values`` or ``.data`` of the last would load it from disk, so
only the variable's private ``_data`` is inspected, and values are shown only for numpy arrays already in
memory.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..bounded_repr import Limits, brepr
from ..redact import REDACTED
from .common import SAMPLE, SCHEMA, isinstance_of, nbytes_text, secret
from .numpy import edges
from .protocol import Adapter


def _backing(variable: Any) -> str:
    data = getattr(variable, "_data", None)
    if isinstance_of(data, "numpy", "ndarray"):
        return "in memory"
    if isinstance_of(data, "dask.array", "Array"):
        return f"lazy: not computed (Dask, chunks {data.chunksize})"
    name = type(data).__name__
    if "Index" in name:  # a coordinate backed by a pandas index: in memory
        return "in memory"
    return "lazy: not loaded from its file"


def _dims(sizes: Any) -> str:
    return ", ".join(f"{d}: {n:,}" for d, n in sizes.items())


def _var_line(name: Any, var: Any) -> str:
    return f"  {name} ({', '.join(map(str, var.dims))}) {var.dtype} — {_backing(var)}"


def _attrs(attrs: dict[Any, Any], lvl: int, limit: int = 10) -> list[str]:
    if not attrs:
        return []
    if lvl < SAMPLE:
        return [f"attributes: {', '.join(map(str, itertools.islice(attrs, limit)))}"]
    shown = []
    for key, val in itertools.islice(attrs.items(), limit):
        shown.append(f"{key}={REDACTED if secret(key) else brepr(val, Limits(lvl), 2)}")
    more = f", … {len(attrs) - limit} more" if len(attrs) > limit else ""
    return [f"attributes: {', '.join(shown)}{more}"]


def _edges(var: Any, lvl: int) -> list[str]:
    data = getattr(var, "_data", None)
    if not isinstance_of(data, "numpy", "ndarray"):
        return []
    return ["values:", edges(data, lvl)] if data.size else []


def _dataset_lines(ds: Any, lvl: int) -> list[str]:
    lines = [f"dims: {_dims(ds.sizes)}", f"data variables ({len(ds.data_vars)}):"]
    lines += [_var_line(n, v.variable) for n, v in itertools.islice(ds.data_vars.items(), 30)]
    if len(ds.data_vars) > 30:
        lines.append(f"  … {len(ds.data_vars) - 30} more")
    lines.append(f"coordinates ({len(ds.coords)}):")
    lines += [_var_line(n, c.variable) for n, c in itertools.islice(ds.coords.items(), 20)]
    return lines + _attrs(dict(ds.attrs), lvl)


class XarrayAdapter(Adapter):
    """DataArray and Dataset."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "xarray", "DataArray"):
            name = f" {value.name!r}" if value.name is not None else ""
            return f"xarray DataArray{name} ({_dims(value.sizes)}) {value.dtype}, {_backing(value.variable)}"
        if isinstance_of(value, "xarray", "Dataset"):
            names = ", ".join(map(str, itertools.islice(value.data_vars, 6)))
            more = ", …" if len(value.data_vars) > 6 else ""
            return f"xarray Dataset ({_dims(value.sizes)}), {len(value.data_vars)} variables: {names}{more}"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if isinstance_of(value, "xarray", "DataArray"):
            return [
                f"dims: {_dims(value.sizes)}",
                f"dtype: {value.dtype}, {nbytes_text(value.nbytes)} when loaded, {_backing(value.variable)}",
                "coordinates:",
                *(_var_line(n, c.variable) for n, c in itertools.islice(value.coords.items(), 20)),
            ]
        if isinstance_of(value, "xarray", "Dataset"):
            return _dataset_lines(value, SCHEMA)
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "xarray", "DataArray"):
            out = [f"xarray DataArray {value.name!r}", *(self.details(value, lvl) or [])]
            out += _attrs(dict(value.attrs), lvl)
            if lvl >= SAMPLE:
                out += [f"values: {REDACTED}"] if secret(value.name) else _edges(value.variable, lvl)
            return "\n".join(out)
        if isinstance_of(value, "xarray", "Dataset"):
            return "\n".join(["xarray Dataset", *_dataset_lines(value, lvl)])
        return None
