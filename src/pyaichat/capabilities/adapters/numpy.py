"""numpy: arrays by shape and dtype, with numpy's own edge-item summary at ``sample``; dtypes and scalars.

Memory-mapped arrays are in the file, not in memory: their edge values are read (a few pages), never the
whole file.
"""

from __future__ import annotations

from typing import Any

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
        if is_ndarray(value):
            return f"ndarray shape {value.shape}, dtype {value.dtype}"
        if is_dtype(value):
            return f"numpy dtype {value}"
        if isinstance_of(value, "numpy", "generic"):
            kind = type(value).__name__
            return kind if lvl < SAMPLE else f"{kind} {value.item()!r}"[:100]
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
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


def edges(a: Any, lvl: int) -> str:
    """numpy's own summary of an array: a few items at each edge of every axis."""
    np = module("numpy")
    edge = 4 if lvl >= FULL else 3
    text = np.array2string(a, threshold=2 * edge * max(a.ndim, 1), edgeitems=edge, max_line_width=100)
    return text if len(text) < 3000 else text[:3000] + "…"
