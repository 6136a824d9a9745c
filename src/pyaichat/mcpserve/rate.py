"""A token bucket: a burst, then a steady rate. Bounds what a flood of calls can cost the session."""

from __future__ import annotations

import threading
import time


class RateBound:
    """``take()`` is True while the bucket has a token; it refills at ``per_second`` up to ``burst``."""

    def __init__(self, burst: int, per_second: float) -> None:
        self.burst, self.per_second = burst, per_second
        self._tokens = float(burst)
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.per_second)
            self._stamp = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True
