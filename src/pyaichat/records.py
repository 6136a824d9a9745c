"""What running user code leaves behind: frames, the last error, history entries and one run's result.

These records are dataclasses, and creating a dataclass compiles its generated methods: ~3 ms for the four,
which the first prompt does not need. ``session`` therefore loads this module with the first run
of user code, not at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FrameInfo:
    """One traceback frame, reduced to what a person (or the assistant) needs to read it."""

    filename: str
    lineno: int | None
    name: str
    line: str
    segment: str | None = None
    local_names: list[str] = field(default_factory=list)


@dataclass
class LastError:
    """The session's most recent exception, kept for ``/last_error`` and the assistant's context."""

    type_name: str
    message: str
    frames: list[FrameInfo]
    source: str | None
    input_number: int | None
    segment: str | None
    lineno: int | None
    formatted: str
    exception: BaseException | None = field(default=None, repr=False)

    def headline(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


@dataclass
class HistoryEntry:
    """One numbered input. ``stdout``/``stderr``/``result`` (the echoed value's repr, ``None`` when nothing
    was echoed) are its text output, bounded together by ``session.OUTPUT_CHARS`` and marked when cut: what a
    saved notebook shows as the cell's output."""

    number: int
    source: str
    ok: bool
    summary: str
    duration_ms: float
    stdout: str = ""
    stderr: str = ""
    result: str | None = None


@dataclass
class ExecResult:
    """What ``Session.run`` did. ``value`` is the echoed last expression (``None`` when there was none)."""

    ok: bool
    number: int
    value: Any = None
    has_value: bool = False
    output: str = ""
    error: LastError | None = None
    duration_ms: float = 0.0
    interrupted: bool = False
