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

Large buffers are mostly transparent huge pages (numpy asks for them above 4 MiB): a write in the child
splits the 2 MiB mapping it lands in, so where the kernel has PAGEMAP_SCAN (Linux 6.7+) only the parts of a
buffer no longer mapped huge are read page by page — a tenth of a millisecond for an untouched gigabyte
instead of several. hugetlbfs mappings (copied whole on write, never split) are always read page by page.

The descriptors must be opened in the child (``/proc/self`` of the parent would describe the parent) and
before the kernel walls go up (Landlock closes ``/proc``).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

from .shared_memory import fcntl, vma_page_size

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_PRESENT = 1 << 63
_FILE = 1 << 61  # a file's page, or shared anonymous memory
_EXCLUSIVE = 1 << 56
_MASK = _PRESENT | _FILE | _EXCLUSIVE
_WRITTEN = _PRESENT | _EXCLUSIVE
_PAGEMAP_SCAN = 0xC0606610  # _IOWR('f', 16, struct pm_scan_arg), 96 bytes
_SCAN = struct.Struct("=12Q")
_PAGE_IS_HUGE = 1 << 6
_REGIONS = 256  # page_region entries per PAGEMAP_SCAN call
SCAN_FROM = 4 << 20  # smaller buffers are read page by page directly


def open_in_child() -> tuple[int, int]:
    """In the child, before the walls: this process's pagemap and maps (-1 where there is none)."""
    found = []
    for path in ("/proc/self/pagemap", "/proc/self/maps"):
        try:
            found.append(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            found.append(-1)
    return found[0], found[1]


class Pages:
    """Reads of one process's pagemap."""

    def __init__(self, fd: int, maps: int = -1, already_own: list[tuple[int, int]] | None = None) -> None:
        self.fd = fd
        self.maps = maps
        self.scan = fcntl is not None and maps >= 0
        self._vec = (ctypes.c_uint64 * (3 * _REGIONS))() if self.scan else None
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
        regions = None
        large = (last - first) * PAGE >= SCAN_FROM
        if large and self.scan and vma_page_size(self.maps, first * PAGE) == PAGE:
            regions = self._not_huge(first, last)
        count = 0
        for lo, hi in regions if regions is not None else [(first, last)]:
            data = self._entries(lo, hi - lo)
            count += _count_written(data)
            for base, flags in self._before.items():
                count -= self._already(base, flags, lo, hi, data)
        return count

    def _not_huge(self, first: int, last: int) -> list[tuple[int, int]] | None:
        """The page ranges of [first, last) not mapped as transparent huge pages (PAGEMAP_SCAN); None where
        the kernel does not have it."""
        vec = self._vec
        assert vec is not None
        found: list[tuple[int, int]] = []
        start, end = first * PAGE, last * PAGE
        while start < end:
            arg = bytearray(_SCAN.pack(_SCAN.size, 0, start, end, 0, ctypes.addressof(vec), _REGIONS, 0,
                                       _PAGE_IS_HUGE, _PAGE_IS_HUGE, 0, _PAGE_IS_HUGE))  # fmt: skip
            try:
                count = fcntl.ioctl(self.fd, _PAGEMAP_SCAN, arg)
            except OSError:
                self.scan = False
                return None
            found += [(vec[3 * i] // PAGE, vec[3 * i + 1] // PAGE) for i in range(count)]
            walk_end = _SCAN.unpack(arg)[4]
            if count < _REGIONS or walk_end >= end:
                break
            start = walk_end
        return found

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
