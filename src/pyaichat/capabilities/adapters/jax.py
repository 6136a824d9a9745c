"""JAX: arrays by shape, dtype, devices and sharding; values only for a single-device array on the CPU.

A JAX array on an accelerator is never copied to the host to look at it, and a tracer (inside ``jit``) has
no values at all.
"""

from __future__ import annotations

from typing import Any

from .common import SAMPLE, isinstance_of, module, shape_text
from .numpy import edges
from .protocol import Adapter


def _is_array(value: Any) -> bool:
    return isinstance_of(value, "jax", "Array")


def _devices(a: Any) -> list[Any]:
    try:
        return sorted(a.devices(), key=str)
    except Exception:
        return []


class JaxAdapter(Adapter):
    """JAX arrays."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if not _is_array(value):
            return None
        devices = _devices(value)
        where = str(devices[0]) if len(devices) == 1 else f"{len(devices)} devices"
        return f"jax Array {shape_text(tuple(value.shape))} {value.dtype} on {where}"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if not _is_array(value):
            return None
        devices = _devices(value)
        return [
            f"shape: {tuple(value.shape)}, dtype: {value.dtype}, "
            f"weak_type: {getattr(value, 'weak_type', '?')}",
            f"devices: {', '.join(map(str, devices[:8]))}; sharding: {type(value.sharding).__name__}",
        ]

    def describe(self, value: Any, lvl: int) -> str | None:
        if not _is_array(value):
            return None
        out = [self.one_line(value, lvl) or "", *(self.details(value, lvl) or [])]
        if lvl >= SAMPLE and value.size:
            devices = _devices(value)
            if len(devices) == 1 and getattr(devices[0], "platform", "") == "cpu":
                out += ["values:", edges(module("numpy").asarray(value), lvl)]
            else:
                out.append("values: not shown (not a single CPU device: looking would copy it to the host)")
        return "\n".join(out)
