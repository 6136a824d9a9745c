"""scipy.sparse: matrices and arrays by shape, format, dtype and stored entries (``nnz``), never densified.

A few stored entries are read straight from the CSR/CSC/COO index arrays at ``sample``; converting a matrix
(``tocoo()``, ``toarray()``) would copy it whole, so other formats show no values.
"""

from __future__ import annotations

from typing import Any

from .common import FULL, SAMPLE, cell, isinstance_of, module, nbytes_text, shape_text
from .protocol import Adapter


def _is_sparse(value: Any) -> bool:
    sparse = module("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(value))


def _entries(value: Any, n: int) -> list[tuple[Any, ...]]:
    fmt = value.format
    if fmt == "coo":
        coords = getattr(value, "coords", None) or (value.row, value.col)
        return [(*(int(c[i]) for c in coords), value.data[i]) for i in range(min(n, value.nnz))]
    if fmt in ("csr", "csc"):
        np = module("numpy")
        out = []
        for i in range(min(n, value.nnz)):
            major = int(np.searchsorted(value.indptr, i, side="right") - 1)
            minor = int(value.indices[i])
            out.append(((major, minor) if fmt == "csr" else (minor, major)) + (value.data[i],))
        return out
    return []


class SparseAdapter(Adapter):
    """scipy.sparse matrices and arrays."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _is_sparse(value):
            return None
        kind = f"{value.format} {type(value).__name__}"
        return f"scipy sparse {kind} {shape_text(value.shape)} {value.dtype}, {value.nnz:,} stored"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_sparse(value):
            return None
        size = 1
        for d in value.shape:
            size *= int(d)
        density = value.nnz / size if size else 0.0
        data = getattr(value, "data", None)
        nbytes = getattr(data, "nbytes", None) if isinstance_of(data, "numpy", "ndarray") else None
        return [
            f"shape: {value.shape}, dtype: {value.dtype}, format: {value.format}",
            f"stored entries: {value.nnz:,} (density {density:.3g}), data {nbytes_text(nbytes)}",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_sparse(value):
            return None
        out = [f"scipy sparse {type(value).__name__}", *(self.details(value, lvl) or [])]
        if lvl >= SAMPLE and value.nnz:
            entries = _entries(value, 8 if lvl >= FULL else 5)
            if entries:
                shown = ", ".join(
                    f"{tuple(e[:-1])}: {cell(e[-1].item() if hasattr(e[-1], 'item') else e[-1], 20)}"
                    for e in entries
                )
                out.append(f"first stored entries: {shown}")
            else:
                out.append(f"values: not shown (format {value.format} would need converting)")
        return "\n".join(out)
