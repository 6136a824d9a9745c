"""The quiet ``⇄`` lines an outside agent's calls leave above the person's prompt, kept few.

Repeated calls of one tool by one client coalesce: the first is shown as it is, the ones that follow within
``WINDOW`` seconds of each other are counted, and one line sums them up once they stop, or once that client
calls another tool (``⇄ claude-code get_repr ×12 in 3 s``) — eighty calls no longer scroll the person's work
away. Refusals
(busy, too many calls) are always their own line; with ``mcp_serve_quiet`` only they (and proposals, which
have their panel) are shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WINDOW = 3.0  # seconds between two calls of one tool by one client that make them one burst


class Burst:
    __slots__ = ("count", "first", "last", "timer")

    def __init__(self, now: float) -> None:
        self.first = self.last = now
        self.count = 1
        self.timer: threading.Timer | None = None


class QuietLines:
    """Shows each call's line through ``show``, coalescing bursts (see the module docstring)."""

    def __init__(
        self,
        show: Callable[[str], None],
        refuse: Callable[[str], None] | None = None,
        window: float = WINDOW,
    ) -> None:
        self.show = show  # a call's line, or a burst's sum
        self.refuse = refuse or show  # a refusal's line
        self.window = window
        self._lock = threading.Lock()
        self._bursts: dict[tuple[str, str], Burst] = {}

    def call(self, client: str, tool: str, line: str | Callable[[], str]) -> None:
        """A call ran: its ``line``, unless it continues a burst (``line`` may be a function that makes it:
        a call within a burst, most of an agent's, then never pays for masking and cutting a line nobody
        sees)."""
        now = time.monotonic()
        key = (client, tool)
        with self._lock:
            burst = self._bursts.get(key)
            if burst is not None and now - burst.last < self.window:
                burst.count += 1
                burst.last = now
                if burst.timer is None:
                    self._arm(key, burst, self.window)
                return
            # a burst ends with the next line of its client: its sum comes before that line
            ended = [(k, self._bursts.pop(k)) for k in list(self._bursts) if k[0] == client]
            self._bursts[key] = Burst(now)
        for done_key, burst in ended:
            if burst.timer is not None:
                burst.timer.cancel()
            self._sum_up(done_key, burst)
        self.show(line if isinstance(line, str) else line())

    def refusal(self, line: str) -> None:
        self.refuse(line)

    def __call__(self, line: str) -> None:
        self.show(line)

    def flush(self) -> None:
        """Sum up every burst now (serving stops)."""
        with self._lock:
            bursts, self._bursts = self._bursts, {}
        for key, burst in bursts.items():
            if burst.timer is not None:
                burst.timer.cancel()
            self._sum_up(key, burst)

    def _arm(self, key: tuple[str, str], burst: Burst, delay: float) -> None:
        timer = threading.Timer(delay, self._expire, args=(key, burst))
        timer.daemon = True
        burst.timer = timer
        timer.start()

    def _expire(self, key: tuple[str, str], burst: Burst) -> None:
        with self._lock:
            if self._bursts.get(key) is not burst:
                return
            left = burst.last + self.window - time.monotonic()
            if left > 0:  # calls went on: look again when this burst could have ended
                self._arm(key, burst, left)
                return
            del self._bursts[key]
        self._sum_up(key, burst)

    def _sum_up(self, key: tuple[str, str], burst: Burst) -> None:
        if burst.count > 1:
            client, tool = key
            span = max(burst.last - burst.first, 0.0)
            took = f"{span:.0f} s" if span >= 1 else "under 1 s"
            self.show(f"⇄ {client} {tool} ×{burst.count} in {took}")
