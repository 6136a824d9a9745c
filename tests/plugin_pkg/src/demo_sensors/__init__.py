"""A tiny "library" whose objects pyaichat knows nothing about: a stand-in for any third-party package.

A ``Sensor`` is a handle on a remote device: asking it for its length or its repr is a round trip to the
device (counted in ``round_trips``), while its name, unit, count and latest reading are metadata the handle
already holds. ``pyaichat_demo_plugin.adapters`` describes it from that metadata alone.
"""

from __future__ import annotations


class Sensor:
    def __init__(self, name: str, unit: str, readings: list[float] | None = None) -> None:
        self.name = name
        self.unit = unit
        self._readings = list(readings or [])
        self.round_trips = 0

    @property
    def count(self) -> int:
        """How many readings the handle holds (metadata: no round trip)."""
        return len(self._readings)

    @property
    def latest(self) -> float | None:
        return self._readings[-1] if self._readings else None

    def __len__(self) -> int:  # what a remote count looks like: slow, and it goes to the device
        self.round_trips += 1
        return len(self._readings)

    def __repr__(self) -> str:
        self.round_trips += 1
        return f"Sensor({self.name!r}, {self.unit!r}, {self._readings!r})"
