"""A third-party adapter: how ``demo_sensors`` objects are described to pyaichat's assistant (its own package,
so describing a sensor imports neither the demo capability nor pydantic).

Declared in ``pyproject.toml`` under the entry-point group ``pyaichat.adapters``, named after the module the
types live in (``demo_sensors``); pyaichat imports this module only when it first describes such a value.
It reads metadata only (never ``len()`` or ``repr()``, which go to the device) and keeps to the privacy
level: no value at ``SCHEMA``, the name and latest reading from ``SAMPLE`` up.
"""

from __future__ import annotations

from typing import Any

from pyaichat.capabilities.adapters import SAMPLE, Adapter


class SensorAdapter(Adapter):
    def one_line(self, value: Any, lvl: int) -> str | None:
        if type(value).__name__ != "Sensor":
            return None  # another demo_sensors type: the generic description
        name = f" {value.name!r}" if lvl >= SAMPLE else ""
        return f"Sensor{name}: {value.count:,} readings in {value.unit}"

    def details(self, value: Any, lvl: int) -> list[str] | None:
        if type(value).__name__ != "Sensor":
            return None
        return [f"readings: {value.count:,} (held by the handle; len() would ask the device)"]

    def describe(self, value: Any, lvl: int) -> str | None:
        line = self.one_line(value, lvl)
        if line is None or lvl < SAMPLE:
            return line
        return f"{line}\nlatest reading: {value.latest} {value.unit}"
