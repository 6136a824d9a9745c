"""Which pages of a forked child's memory the child has written since ``fork`` — without hashing the data.

After ``fork`` every private page is shared copy-on-write between the session and the child; the first
write in the child gives it a copy of its own. ``/proc/self/pagemap`` tells, per page, whether it is present,
whether it is anonymous (not a file's page) and whether this process maps it *exclusively* (bit 56): a page
the child wrote is present, anonymous and exclusive, one it only read is still shared with the session (or a
file's page). That is the copy-on-write fault itself, read back: 8 bytes per 4 KiB page, about 7 ms per GiB
here.

Why not the soft-dirty bits (``/proc/self/clear_refs``): they need ``CONFIG_MEM_SOFT_DIRTY``, which many
kernels (this one) lack, and clearing them write-protects every page of the process; copy-on-write already
did that work at ``fork``. Limits, all of them reporting a write where there was none, never the reverse: a
page the session itself writes while the child runs (another of its threads), a page swapped out and read
back by the child, a page the kernel had to copy at ``fork`` (pinned for I/O). Pages the child made private
before the code ran (shared memory copied by ``shared_memory.privatize``) are read once before the run and
left out if they were already its own.

The descriptor must be opened in the child (``/proc/self`` of the parent would describe the parent) and
before the kernel walls go up (Landlock closes ``/proc``).
"""

from __future__ import annotations

import os
import sys

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_PRESENT = 1 << 63
_FILE = 1 << 61  # a file's page, or shared anonymous memory
_EXCLUSIVE = 1 << 56
_MASK = _PRESENT | _FILE | _EXCLUSIVE
_WRITTEN = _PRESENT | _EXCLUSIVE


def open_pagemap() -> int:
    """In the child, before the walls: this process's pagemap (-1 where there is none)."""
    try:
        return os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1


class Pages:
    """Reads of one process's pagemap."""

    def __init__(self, fd: int, already_own: list[tuple[int, int]] | None = None) -> None:
        self.fd = fd
        # Pages that were the child's own before the code ran: (first page, flags of each page).
        self._before: dict[int, bytes] = {}
        for start, end in already_own or ():
            first, count = start // PAGE, (end - start) // PAGE
            self._before[first] = self._entries(first, count)

    @property
    def available(self) -> bool:
        return self.fd >= 0

    def _entries(self, first: int, count: int) -> bytes:
        data = os.pread(self.fd, count * 8, first * 8)
        return data if len(data) == count * 8 else data + bytes(count * 8 - len(data))

    def written(self, start: int, end: int) -> int:
        """How many whole pages of [start, end) this process has written since ``fork``."""
        first, last = -(-start // PAGE), end // PAGE  # whole pages only: the edges are hashed instead
        if last <= first or self.fd < 0:
            return 0
        data = self._entries(first, last - first)
        count = _count_written(data)
        for base, flags in self._before.items():
            count -= self._already(base, flags, first, last, data)
        return count

    @staticmethod
    def _already(base: int, flags: bytes, first: int, last: int, data: bytes) -> int:
        """Pages of [first, last) that were the child's own before the run and have not changed since."""
        lo, hi = max(base, first), min(base + len(flags) // 8, last)
        if hi <= lo:
            return 0
        was = flags[(lo - base) * 8 : (hi - base) * 8]
        now = data[(lo - first) * 8 : (hi - first) * 8]
        return sum(
            1
            for i in range(0, len(was), 8)
            if was[i : i + 8] == now[i : i + 8]
            and int.from_bytes(now[i : i + 8], "little") & _MASK == _WRITTEN
        )


def _count_written(data: bytes) -> int:
    np = sys.modules.get("numpy")  # large buffers mean numpy is loaded; never imported for this
    if np is not None and len(data) > 4096:
        entries = np.frombuffer(data, dtype=np.uint64)
        return int(np.count_nonzero((entries & np.uint64(_MASK)) == np.uint64(_WRITTEN)))
    view = memoryview(data).cast("Q")
    return sum(1 for entry in view if entry & _MASK == _WRITTEN)
