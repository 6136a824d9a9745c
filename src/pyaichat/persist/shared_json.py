"""A small JSON object on disk that several sessions of one person change (MCP pins, MCP allowances): each
change reads the file again, merges, and replaces it atomically while holding a lock, so two sessions that
write at once never lose each other's changes.

The lock is ``fcntl.flock`` on a file beside it (``NAME.lock``, ``0600``): the file itself is replaced at
every write, so a lock on it would be a lock on a file about to be gone. (Where ``fcntl`` does not exist the
write is still atomic, only not serialized.)

Only a regular file is read (opened without blocking, checked with ``fstat`` before a byte is read, at most
``MAX_BYTES``): a FIFO, ``/dev/tty`` or ``/dev/zero`` put at its path would otherwise stall the session,
swallow what the person types or fill the memory. The lock is waited for ``LOCK_WAIT`` seconds at most.

A file that exists but cannot be read, or is not a JSON object, is ``Unreadable`` — and an update never
writes over it: what it held is unknown, and replacing it would drop all of it silently. Its owner decides
when the person has agreed to start again (``update(..., start_again=True)`` keeps the damaged file under
another name).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any

from . import PersistError
from .atomic import atomic_write

try:
    import fcntl
except ImportError:  # Windows: atomic, not serialized
    fcntl = None  # type: ignore[assignment]  # no fcntl on this platform

LOCK_SUFFIX = ".lock"
MAX_BYTES = 16 << 20  # far more than pins of hundreds of servers; a file larger is not ours
LOCK_WAIT = 30.0  # seconds: a session holds it for one read and one write; many sessions may queue


class Unreadable(Exception):
    """The file exists and cannot be used as it is; ``str()`` says why, in a few words."""


def read(path: str) -> dict[str, Any] | None:
    """The file's object; ``None`` when there is no file; ``Unreadable`` when there is one that cannot be
    read or is not a JSON object."""
    raw = read_bytes(path)
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unreadable(f"not JSON: {exc}") from None
    except RecursionError:
        raise Unreadable("not JSON pyaichat can read: nested too deep") from None
    if not isinstance(data, dict):
        raise Unreadable(f"a JSON {type(data).__name__}, not an object")
    return data


def read_bytes(path: str, *, limit: int = MAX_BYTES, follow: bool = True) -> bytes | None:
    """The bytes of the regular file ``path`` (``None``: there is none); ``Unreadable`` for anything else — a
    FIFO, a device, a directory, a file over ``limit`` bytes, or (``follow=False``, for a file someone else
    put there) a symbolic link. Opened non-blocking and checked with ``fstat`` before any byte is read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable("not a regular file")
        if st.st_size > limit:
            raise Unreadable(f"larger than {limit} bytes")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise Unreadable(f"larger than {limit} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: str, wait: float | None = None) -> Iterator[None]:
    """Hold the lock of ``path`` (``path.lock``, created ``0600``) for the body, waiting ``wait`` seconds at
    most (``LOCK_WAIT`` as it is when called) while another session holds it (they hold it for one read and
    one write); ``PersistError`` when it cannot be taken, in one sentence."""
    if fcntl is None:
        yield
        return
    lock = path + LOCK_SUFFIX
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise PersistError(f"The lock {lock} cannot be opened ({exc.strerror or exc}).") from None
    wait = LOCK_WAIT if wait is None else wait
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise PersistError(
                        f"The lock {lock} is held by another process for more than {wait:g} s; nothing was "
                        "written."
                    ) from None
                time.sleep(0.05)
            except OSError as exc:
                raise PersistError(f"The lock {lock} cannot be taken ({exc.strerror or exc}).") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def update(path: str, change: Callable[[dict[str, Any]], None], *, start_again: bool = False) -> str | None:
    """Under the lock: read the file (``{}`` when there is none), let ``change`` change the object in place,
    and replace the file with it (``0600``). ``Unreadable`` leaves the file as it is; ``PersistError`` (from
    the disk) too.

    ``start_again``: the person agreed to start a new file over a damaged one — a file that is still
    unreadable is kept under another name (``path.damaged-YYYYmmdd-HHMMSS``) and ``change`` starts from
    ``{}``; the kept file's path is returned. (One that another session has started again meanwhile is
    read and merged, as usual.)"""
    kept = None
    with locked(path):
        try:
            data = read(path) or {}
        except Unreadable:
            if not start_again:
                raise
            kept = _keep(path)
            data = {}
        change(data)
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True, default=str)
        atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
    return kept


def _keep(path: str) -> str:
    """Rename the damaged ``path`` out of the way, under a name no other file has; ``OSError`` when it cannot
    be."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept, n = f"{path}.damaged-{stamp}", 1
    while os.path.exists(kept):
        n += 1
        kept = f"{path}.damaged-{stamp}-{n}"
    os.rename(path, kept)
    return kept
