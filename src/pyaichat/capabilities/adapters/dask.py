"""Dask: DataFrame/Series, Array, Delayed and Bag — described from the task graph's metadata, never computed.

What Dask knows without running a task: the columns and dtypes (from ``_meta``, the empty frame every
collection carries), the number of partitions, the divisions when known, an array's shape (``nan`` where a
dimension is unknown), chunks and dtype, and the expression tree (``expr.tree_repr()``). ``len()`` of a Dask
frame computes every partition, so it is never called; the row count is "not known without computing".

Rows or values are shown only from data already in memory: a collection ``persist()``-ed with a local
scheduler holds its partitions as plain pandas/numpy objects in its graph, and the first few rows of the first
partition are read from there. A persisted collection on a distributed cluster holds futures: nothing is
fetched from the cluster. Anything else says ``lazy: not computed``.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..deadline import failure, safe
from ..redact import REDACTED
from ..text import type_name
from .common import (
    LAZY,
    SAMPLE,
    columns_block,
    columns_inline,
    isinstance_of,
    number,
    sample_rows,
    secret,
    shape_text,
)
from .numpy import edges
from .pandas import masked_table
from .protocol import Adapter


def _frame_kind(value: Any) -> str | None:
    if isinstance_of(value, "dask.dataframe", "DataFrame"):
        return "DataFrame"
    if isinstance_of(value, "dask.dataframe", "Series"):
        return "Series"
    if isinstance_of(value, "dask.dataframe", "Index"):
        return "Index"
    return None


def _is_array(value: Any) -> bool:
    return isinstance_of(value, "dask.array", "Array")


# -- frames --------------------------------------------------------------------------------------------------
def _persisted_frame(value: Any) -> Any:
    """The first partition, if the collection was persisted locally (a plain pandas object in its graph)."""
    expr = getattr(value, "expr", None)
    if type(expr).__name__ != "FromGraph":
        return None
    try:
        layer = expr.operand("layer")
        keys = expr.operand("keys")
    except Exception:
        return None
    meta_type = type(value._meta)
    first = layer.get(keys[0]) if isinstance(layer, dict) and keys else None
    return first if isinstance(first, meta_type) else None


# Expressions whose divisions come from computing quantiles of the data (set_index, sort_values).
_COMPUTES_DIVISIONS = ("BaseSetIndexSortValues",)


def _divisions_known_cheaply(value: Any) -> tuple[Any, ...] | None:
    """The divisions, when reading them cannot run a job (else ``None``): cached on the expression, or no
    node below it computes quantiles to find them."""
    expr = value.expr
    cached = expr.__dict__.get("divisions")
    if cached is not None:
        return cached
    try:
        for node in expr.walk():
            if node.__dict__.get("divisions") is not None:
                continue
            if any(c.__name__ in _COMPUTES_DIVISIONS for c in type(node).__mro__):
                return None
    except Exception:
        return None
    return expr.divisions


def _npartitions(value: Any) -> int | None:
    expr = value.expr
    if "npartitions" in getattr(expr, "_parameters", ()) and isinstance(expr.operand("npartitions"), int):
        return expr.operand("npartitions")
    divisions = _divisions_known_cheaply(value)
    return None if divisions is None else len(divisions) - 1


def _state(value: Any) -> str:
    if _persisted_frame(value) is not None:
        return "persisted in memory"
    if type(getattr(value, "expr", None)).__name__ == "FromGraph":
        return "persisted (on a cluster, not fetched)"
    return LAZY


def _dtypes(meta: Any) -> list[tuple[Any, Any]]:
    if hasattr(meta, "dtypes") and hasattr(meta, "columns"):
        return list(meta.dtypes.items())
    return [(getattr(meta, "name", None), meta.dtype)]


def _frame_line(value: Any, kind: str, lvl: int) -> str:
    meta = value._meta
    cols = _dtypes(meta)
    parts = f"{number(_npartitions(value))} partitions, {_state(value)}"
    if kind == "DataFrame":
        return f"Dask DataFrame ?×{len(cols)} ({parts}): {columns_inline(cols, len(cols))}"
    name = f" {meta.name!r}" if getattr(meta, "name", None) is not None else ""
    return f"Dask {kind}{name}, dtype {meta.dtype} ({parts})"


def _divisions(value: Any, lvl: int) -> str:
    divisions = _divisions_known_cheaply(value)
    if divisions is None:
        return "divisions: not known without computing (they come from the data: set_index/sort_values)"
    if not divisions or divisions[0] is None:
        return "divisions: unknown (the index is not sorted into known ranges)"
    if lvl < SAMPLE:
        return f"divisions: known ({len(divisions) - 1:,} ranges of the index)"
    shown = ", ".join(map(str, itertools.islice(divisions, 4)))
    more = ", …" if len(divisions) > 4 else ""
    return f"divisions: known, from {divisions[0]} to {divisions[-1]} ({shown}{more})"


def _frame_details(value: Any, kind: str, lvl: int) -> list[str]:
    meta = value._meta
    cols = _dtypes(meta)
    lines = [
        f"partitions: {number(_npartitions(value))} ({_state(value)})",
        "rows: not known without computing every partition (len() would run the whole job)",
        _divisions(value, lvl),
        f"index: {type(meta.index).__name__}, dtype {meta.index.dtype}",
    ]
    if kind == "DataFrame":
        lines += ["columns (dtype):", *columns_block(cols, len(cols), 60)]
    else:
        lines.append(f"dtype: {meta.dtype}")
    return lines


def _frame_describe(value: Any, kind: str, lvl: int) -> str:
    out = [f"Dask {kind} ({_state(value)}):", *_frame_details(value, kind, lvl)]
    if lvl >= SAMPLE:
        persisted = type(value.expr).__name__ == "FromGraph"  # its "tree" is the data itself
        tree = [] if persisted else _tree(value, 12 if lvl == SAMPLE else 40)
        if tree:
            out += ["expression (what computing it would do):", *tree]
        first = _persisted_frame(value)
        if first is not None:
            n = sample_rows(lvl)
            rows = safe(lambda: _rows_text(first, n), failure("repr of a partition's cell"))
            out += [f"first {n} rows of partition 0 (already in memory):", rows]
        else:
            out.append(f"rows: none shown ({_state(value)}; nothing was run to look)")
    return "\n".join(out)


def _rows_text(part: Any, n: int) -> str:
    part = part[:n]
    if hasattr(part, "columns"):
        return masked_table(part).to_string(max_cols=12)
    if secret(getattr(part, "name", None)):
        return REDACTED
    return part.to_series().to_string() if not hasattr(part, "to_string") else part.to_string()


def _tree(value: Any, limit: int) -> list[str]:
    """The expression tree, one node a line, built here node by node (Dask's own ``tree_repr`` prints every
    operand, e.g. all of a thousand ``Delayed``: too slow to look at)."""
    lines: list[str] = []
    more = [0]

    def visit(node: Any, depth: int) -> None:
        if len(lines) >= limit:
            more[0] += 1
            return
        params = []
        for name, op in zip(getattr(node, "_parameters", ()), getattr(node, "operands", ()), strict=False):
            if op is None or isinstance(op, (bool, int, float, str)):
                params.append(f"{name}={op!r}")
            elif (
                isinstance(op, (list, tuple))
                and len(op) <= 6
                and all(isinstance(x, (int, float, str)) for x in op)
            ):
                params.append(f"{name}={list(op)!r}")
        text = type(node).__name__ + (": " + " ".join(params) if params else "")
        lines.append("  " * (depth + 1) + text[:120])
        for child in node.dependencies():
            visit(child, depth + 1)

    try:
        visit(value.expr, 0)
    except Exception:
        return lines
    if more[0]:
        lines.append(f"  … {more[0]} more nodes")
    return lines


# -- arrays --------------------------------------------------------------------------------------------------
def _persisted_block(value: Any) -> Any:
    try:
        layer = value.dask.layers[value.name]
        mapping = getattr(layer, "mapping", None)
        if not isinstance(mapping, dict):
            return None
        block = mapping.get((value.name, *([0] * value.ndim)))
    except Exception:
        return None
    return block if isinstance(block, type(value._meta)) else None


def _array_line(value: Any) -> str:
    state = "persisted in memory" if _persisted_block(value) is not None else LAZY
    chunks = "×".join(number(int(c)) if c == c else "?" for c in value.chunksize)
    return (
        f"Dask Array {shape_text(value.shape)} {value.dtype}, chunks {chunks} in {number(value.npartitions)} "
        f"blocks ({state})"
    )


def _array_describe(value: Any, lvl: int) -> str:
    out = [_array_line(value), f"block type: {type_name(value._meta)}"]
    if lvl >= SAMPLE:
        block = _persisted_block(value)
        if block is not None:
            out += ["block 0 (already in memory):", edges(block, lvl)]
        else:
            out.append("values: none shown (lazy: not computed; nothing was run to look)")
    return "\n".join(out)


# -- the adapter ---------------------------------------------------------------------------------------------
class DaskAdapter(Adapter):
    """DataFrame, Series, Index, Array, Delayed and Bag."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        kind = _frame_kind(value)
        if kind:
            return _frame_line(value, kind, lvl)
        if _is_array(value):
            return _array_line(value)
        if isinstance_of(value, "dask.delayed", "Delayed"):
            return f"Dask Delayed ({LAZY})"
        if isinstance_of(value, "dask.bag", "Bag"):
            return f"Dask Bag, {number(value.npartitions)} partitions ({LAZY})"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        kind = _frame_kind(value)
        if kind:
            return _frame_details(value, kind, lvl)
        if _is_array(value):
            return [
                f"shape: {shape_text(value.shape)} (? = not known without computing), dtype: {value.dtype}",
                f"chunks: {value.chunksize} per block, {number(value.npartitions)} blocks",
            ]
        line = self.one_line(value, lvl)
        return [line] if line else None

    def describe(self, value: Any, lvl: int) -> str | None:
        kind = _frame_kind(value)
        if kind:
            return _frame_describe(value, kind, lvl)
        if _is_array(value):
            return _array_describe(value, lvl)
        return self.one_line(value, lvl)
