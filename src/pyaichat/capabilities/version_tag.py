"""A dict's version tag (PEP 509's ``ma_version_tag``, CPython 3.6–3.13): a number that changes whenever the
dict is modified — an entry added, removed or replaced, even by one of the same count. Reading it is a read
of the dict object's own memory: no entry touched, no reference taken, no code of a key or value run. So a
check made over every key of a dict (``structural.loaded_module``'s) need not be made again while the tag
stays put, and the preview's watch (``sandbox.dictwatch``) finds which of thousands of dicts a run changed.
"""

from __future__ import annotations

import functools
import sys
from typing import Any


@functools.lru_cache(maxsize=1)
def offset() -> int:
    """The byte offset of ``ma_version_tag`` in a dict object, or 0 if it cannot be trusted here: checked on a
    dict of our own (its size where the layout puts ``ma_used``, a tag that moves when an entry changes)."""
    try:
        import ctypes  # with the first read of a tag: never at start-up

        if sys.implementation.name != "cpython" or sys.version_info >= (3, 14):
            return 0
        head = 2 * ctypes.sizeof(ctypes.c_void_p)  # ob_refcnt, ob_type
        probe: dict[str, object] = {"a": 1, "b": 2, "c": 3}
        if ctypes.c_ssize_t.from_address(id(probe) + head).value != 3:
            return 0
        at = head + ctypes.sizeof(ctypes.c_ssize_t)
        before = ctypes.c_uint64.from_address(id(probe) + at).value
        probe["a"] = object()
        after = ctypes.c_uint64.from_address(id(probe) + at).value
        return at if after != before else 0
    except Exception:
        return 0


def peek(d: dict[Any, Any]) -> int | None:
    """``d``'s version tag now (None where tags cannot be read): equal tags, the same contents."""
    at = offset()
    if not at:
        return None
    import ctypes  # as above

    return int(ctypes.c_uint64.from_address(id(d) + at).value)
