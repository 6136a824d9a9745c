"""torch: tensors (and parameters) by shape, dtype, device, layout and autograd state.

Values are shown only when that is cheap and local: a dense tensor on the CPU, read through a numpy view of
its memory (no copy, no gradient recorded). A tensor on a GPU is never copied to the host to look at it;
``meta`` tensors have no data at all.
"""

from __future__ import annotations

from typing import Any

from .common import SAMPLE, isinstance_of, nbytes_text, shape_text
from .numpy import edges
from .protocol import Adapter


def _is_tensor(value: Any) -> bool:
    return isinstance_of(value, "torch", "Tensor")


def _grad(t: Any) -> str:
    if not t.requires_grad:
        return "no grad"
    fn = t.grad_fn
    return f"requires grad (from {type(fn).__name__})" if fn is not None else "requires grad (leaf)"


def _values(t: Any, lvl: int) -> str:
    if t.device.type != "cpu" or t.layout.__repr__() != "torch.strided":
        return f"values: not shown (on {t.device}, {t.layout}: looking would copy it)"
    try:
        array = t.detach().numpy()  # a view of the same memory: no copy
    except Exception as exc:  # bfloat16 and friends have no numpy view
        return f"values: not shown ({type(exc).__name__}: no zero-copy view of {t.dtype})"
    return "values:\n" + edges(array, lvl)


class TorchAdapter(Adapter):
    """Tensors, parameters and modules."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if isinstance_of(value, "torch.nn", "Module"):
            return f"torch module {type(value).__name__}"
        if not _is_tensor(value):
            return None
        kind = "Parameter" if isinstance_of(value, "torch.nn", "Parameter") else "Tensor"
        return (
            f"torch {kind} {shape_text(tuple(value.shape))} {value.dtype} on {value.device}, {_grad(value)}"
        )

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_tensor(value):
            return None
        return [
            f"shape: {tuple(value.shape)}, dtype: {value.dtype}, device: {value.device}, "
            f"layout: {value.layout}",
            f"autograd: {_grad(value)}; {nbytes_text(value.element_size() * value.numel())}",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_tensor(value):
            return None
        out = [self.one_line(value, lvl) or "", *(self.details(value, lvl) or [])]
        if lvl >= SAMPLE and value.numel():
            out.append(_values(value, lvl))
        return "\n".join(out)
