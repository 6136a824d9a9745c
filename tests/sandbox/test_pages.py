"""Pages a forked child wrote, read back from its pagemap: exact counts, with and without PAGEMAP_SCAN."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pyaichat.capabilities.sandbox import pages
from pyaichat.capabilities.sandbox.isolation import fork_available

pytestmark = pytest.mark.skipif(
    not fork_available() or not os.path.exists("/proc/self/pagemap"), reason="needs fork and /proc"
)


def in_child(job: Callable[[], Any]) -> Any:
    """``job`` in a plain forked child (no walls: this is about the pagemap alone); its JSON result."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_fd, json.dumps(job()).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 65536):
        data += chunk
    os.close(read_fd)
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.mark.parametrize("size_mb", [1, 64])  # below and above the size where huge pages are scanned
def test_written_pages_are_counted_exactly(size_mb: int) -> None:
    arr = np.ones(size_mb * 2**20 // 8)  # touched: present, shared with the child after fork
    start, end = arr.ctypes.data, arr.ctypes.data + arr.nbytes
    first_whole = -(-start // pages.PAGE) * pages.PAGE
    whole_pages = (end // pages.PAGE * pages.PAGE - first_whole) // pages.PAGE
    targets = [2, 3, whole_pages // 2, whole_pages - 2]  # four distinct whole pages

    def job() -> dict[str, Any]:
        found = pages.Pages(*pages.open_in_child())
        counts = {"before": found.written(start, end)}
        _ = float(arr.sum())  # reading copies nothing
        counts["after read"] = found.written(start, end)
        for page in targets:
            arr[(first_whole + page * pages.PAGE - start) // 8 + 1] = 2.0
        arr[(first_whole + 3 * pages.PAGE - start) // 8 + 7] = 2.0  # the same page again
        counts["after writes"] = found.written(start, end)
        counts["scanned"] = found.scan  # PAGEMAP_SCAN worked (or was never needed)
        found.scan = False
        counts["page by page"] = found.written(start, end)
        return counts

    counts = in_child(job)
    assert counts.pop("scanned") or _kernel() < (6, 7)
    assert counts == {"before": 0, "after read": 0, "after writes": 4, "page by page": 4}


def _kernel() -> tuple[int, int]:
    major, minor = os.uname().release.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def test_a_page_made_private_before_the_run_is_not_counted() -> None:
    """Pages the child owned before the code ran (shared memory it copied) count only if they change."""
    arr = np.ones(2**20 // 8)
    start, end = arr.ctypes.data, arr.ctypes.data + arr.nbytes
    first_whole = -(-start // pages.PAGE) * pages.PAGE
    index = (first_whole - start) // 8 + 3 * pages.PAGE // 8

    def job() -> dict[str, Any]:
        arr[index] = 5.0  # a private copy of one page, before the "run"
        pagemap, maps = pages.open_in_child()
        found = pages.Pages(pagemap, maps, [(first_whole, first_whole + 8 * pages.PAGE)])
        before = found.written(start, end)
        arr[index + pages.PAGE // 8] = 5.0  # the run writes the next page
        return {"before": before, "after": found.written(start, end)}

    assert in_child(job) == {"before": 0, "after": 1}
