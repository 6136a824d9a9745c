"""numpy: arrays by shape and dtype, with numpy's own edge-item summary at ``sample``; dtypes and scalars.

The one line and the details of an ndarray, a dtype and a scalar are read from their C fields
(``library_metadata``, ``structural``): no Python code runs, so neither numpy's print options (a
``formatter`` may be the session's function) nor an object element's ``__repr__`` can. The edge items are
printed by numpy — in the walled child only (``summary_here.here`` sends an array's description there).
Memory-mapped arrays are in the file, not in memory: their edge values are read (a few pages), never the
whole file.
"""

from __future__ import annotations

from typing import Any

from .. import library_metadata as meta
from ..structural import NotStructural, compiled_call, is_numpy_scalar
from .common import FULL, SAMPLE, isinstance_of, module
from .protocol import Adapter


def is_ndarray(value: Any) -> bool:
    return isinstance_of(value, "numpy", "ndarray")


def is_dtype(value: Any) -> bool:
    """A numpy dtype: ``len()`` of one counts its record fields (0 for ``float64``), not items."""
    return isinstance_of(value, "numpy", "dtype")


class NumpyAdapter(Adapter):
    """Arrays, dtypes and numpy scalars."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        try:
            if meta.kind(value) == "ndarray":
                return f"ndarray shape {meta.metadata(value, 'shape')}, dtype {_dtype(value)}"
            if is_dtype(value):
                return f"numpy dtype {meta.dtype_text(value)}"
            if is_numpy_scalar(value):
                kind = type(value).__name__
                return kind if lvl < SAMPLE else f"{kind} {compiled_call(value, 'item')!r}"[:100]
        except NotStructural:  # an ndarray subclass, an object scalar: numpy's own code (the walled child)
            pass
        if is_ndarray(value):
            return f"ndarray shape {value.shape}, dtype {value.dtype}"
        if isinstance_of(value, "numpy", "generic"):
            kind = type(value).__name__
            return kind if lvl < SAMPLE else f"{kind} {value.item()!r}"[:100]
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if meta.kind(value) == "ndarray":
            return [f"shape: {meta.metadata(value, 'shape')}, dtype: {_dtype(value)}"]
        if is_ndarray(value):
            return [f"shape: {value.shape}, dtype: {value.dtype}"]
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "numpy", "generic"):
            return self.one_line(value, lvl)
        if not is_ndarray(value):
            return None
        a = value
        out = [f"ndarray: shape {a.shape}, dtype {a.dtype}, {a.size:,} elements"]
        if lvl >= SAMPLE and a.size:
            out.append(edges(a, lvl))
        return "\n".join(out)


def _dtype(array: Any) -> str:
    return meta.dtype_text(meta.metadata(array, "dtype"))


def edges(a: Any, lvl: int) -> str:
    """numpy's own summary of an array: a few items at each edge of every axis."""
    np = module("numpy")
    edge = 4 if lvl >= FULL else 3
    text = np.array2string(a, threshold=2 * edge * max(a.ndim, 1), edgeitems=edge, max_line_width=100)
    return text if len(text) < 3000 else text[:3000] + "…"
