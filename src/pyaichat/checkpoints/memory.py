"""How much memory the checkpoints take of their own: the pages only they hold, measured by the kernel
(``/proc/<pid>/smaps_rollup``), and the budget they are kept under.

A copy shares every page with the live session until one of them writes it; a page the live session changed
since stays with the copies that hold the old one. The pages held by the copies and not by the live session
are ``Σ Pss(copies) + Pss(live) − Rss(live)`` (each page's proportional shares add up to one page over the
processes that map it, and the live session maps ``Rss`` of them), plus each copy's page tables
(``VmPTE``: ~2 MB per GB of session, copied at ``fork``) and what they have in swap. One copy's own share,
for ``/checkpoints``, is its ``Private_*`` pages and page tables: what letting it go would free.
"""

from __future__ import annotations

GB = 1 << 30
DEFAULT_SHARE = 0.5  # of the memory available when the session starts


class Usage:
    """One process's memory, in bytes."""

    __slots__ = ("private", "pss", "rss", "swap_pss", "tables")

    def __init__(self) -> None:
        self.rss = self.pss = self.swap_pss = self.private = self.tables = 0

    @property
    def own(self) -> int:
        """What letting this copy go would free (about)."""
        return self.private + self.tables


def usage(pid: int) -> Usage | None:
    """``pid``'s memory (``None`` when it is gone or the system does not say)."""
    found = Usage()
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                key, _, rest = line.partition(b":")
                words = rest.split()
                if not words:
                    continue
                value = int(words[0]) * 1024
                if key == b"Rss":
                    found.rss = value
                elif key == b"Pss":
                    found.pss = value
                elif key == b"SwapPss":
                    found.swap_pss = value
                elif key in (b"Private_Clean", b"Private_Dirty"):
                    found.private += value
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmPTE:"):
                    found.tables = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        return None
    return found


def held_by_copies(live: Usage | None, copies: list[Usage]) -> int:
    """The bytes the copies hold that the live session does not (see the module's docstring)."""
    total = sum(c.pss + c.swap_pss + c.tables for c in copies)
    if live is not None:
        total += live.pss - live.rss
    return max(total, sum(c.tables for c in copies))


def available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``, in bytes."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def budget(setting_gb: float | None) -> int:
    """The checkpoints' budget in bytes: the setting, else half of what is available now (4 GB where the
    system does not say)."""
    if setting_gb is not None:
        return int(setting_gb * GB)
    free = available()
    return int(free * DEFAULT_SHARE) if free else 4 * GB


def size_text(size: int) -> str:
    """``1.2 GB``, ``340 MB``, ``12 kB``."""
    for unit, scale in (("GB", GB), ("MB", 1 << 20), ("kB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} bytes"
