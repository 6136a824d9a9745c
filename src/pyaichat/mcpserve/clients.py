"""Who is calling: the outside clients a session has seen, their call counts, and names safe to print.

A client's name comes from the other side (MCP ``clientInfo.name``): it is cut to a short run of ordinary
characters before it reaches a terminal line, the audit log or ``/mcp status``, so no escape sequence or
newline from a client can draw on the person's screen.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

from ..untrusted import Reads

_UNSAFE = re.compile(r"[^A-Za-z0-9 ._\-+@/:()]")
_NAME_CHARS = 40


def safe_name(name: object, default: str = "client") -> str:
    """``name`` made safe to show: ASCII letters, digits and a few marks, on one short line."""
    text = _UNSAFE.sub("?", str(name or "")).strip()
    text = " ".join(text.split())[:_NAME_CHARS]
    return text or default


def safe_text(text: object, limit: int) -> str:
    """An argument for a quiet line: control characters out, whitespace folded, cut to ``limit``."""
    shown = "".join(ch if ch.isprintable() else " " for ch in str(text))
    shown = " ".join(shown.split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


IDLE_GONE = 600.0  # seconds without a request after which an HTTP client counts as gone


@dataclass
class ClientRecord:
    name: str  # the label shown: the client's own name, with #2, #3… for a second connection of that name
    transport: str
    connected: bool = True
    calls: int = 0
    failed: int = 0
    first_seen: float = field(default_factory=time.time)
    last_call: float | None = None
    # what it read from the session that looked like an instruction: named on its proposals' panels
    reads: Reads = field(default_factory=Reads)
    last_seen: float = field(default_factory=time.time)

    def gone(self, now: float | None = None) -> bool:
        """Disconnected (stdio), or quiet for ``IDLE_GONE`` (HTTP: each call is a request of its own)."""
        if self.transport != "http":
            return not self.connected
        return (now or time.time()) - self.last_seen >= IDLE_GONE

    @property
    def label(self) -> str:
        return f"{self.name} ({self.transport})"


class ClientBook:
    """The clients of one serving session, keyed by the face's own key for each (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[str, ClientRecord] = {}

    def seen(self, key: str, name: str, transport: str) -> ClientRecord:
        """The record of the connection ``key``; a new connection of a name a live one has is told apart
        (``mcp``, ``mcp#2``: every Python SDK client calls itself ``mcp``)."""
        with self._lock:
            record = self._clients.get(key)
            if record is None:
                base = safe_name(name)
                now = time.time()
                taken = {r.name for r in self._clients.values() if not r.gone(now)}
                label, n = base, 1
                while label in taken:  # told apart from the live ones; a gone one's label is free again
                    n += 1
                    label = f"{base}#{n}"
                record = self._clients[key] = ClientRecord(label, safe_name(transport, "?"))
            record.connected = True
            record.last_seen = time.time()
            return record

    def find(self, key: str) -> ClientRecord | None:
        """The record of connection ``key``, if it ever called (never makes one)."""
        with self._lock:
            return self._clients.get(key)

    def gone(self, key_prefix: str) -> None:
        """Every client whose key starts with ``key_prefix`` disconnected (a face closed its link)."""
        with self._lock:
            for key, record in self._clients.items():
                if key == key_prefix or key.startswith(key_prefix + "/"):
                    record.connected = False

    def counted(self, record: ClientRecord, ok: bool) -> None:
        with self._lock:
            record.calls += 1
            record.failed += 0 if ok else 1
            record.last_call = time.time()

    def records(self) -> list[ClientRecord]:
        with self._lock:
            return list(self._clients.values())

    def total_calls(self) -> int:
        with self._lock:
            return sum(r.calls for r in self._clients.values())
