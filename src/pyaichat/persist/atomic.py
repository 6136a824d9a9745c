"""Atomic file writes: the old file stays whole until the new one is complete on disk.

The new content goes to a temporary file in the same directory, is flushed and ``fsync``-ed, then replaces
the target with ``os.replace`` (atomic on POSIX and Windows); the directory is ``fsync``-ed so the rename
itself survives a crash. A process killed half-way leaves only its temporary file behind, which the next
write to the same target removes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import BinaryIO

from . import PersistError

_TMP_SUFFIX = ".tmp"


def temp_name(target: str, pid: int | None = None) -> str:
    """``.<name>.<pid>.<random>.tmp`` next to ``target``: hidden, and naming the process that writes it."""
    directory, name = os.path.split(os.path.abspath(target))
    pid = os.getpid() if pid is None else pid
    return os.path.join(directory, f".{name}.{pid}.{os.urandom(4).hex()}{_TMP_SUFFIX}")


def atomic_write(
    target: str | os.PathLike[str], write: Callable[[BinaryIO], object], *, private: bool = True
) -> int:
    """Run ``write(fh)`` into a temporary file and move it over ``target``; return the bytes written.

    ``private`` files are created ``0600`` (snapshots, state); others get the usual ``0666 & ~umask``. Any
    exception (from ``write`` or the disk) removes the temporary file, leaves ``target`` as it was, and is
    raised again (``OSError`` becomes a ``PersistError`` with one sentence).
    """
    path = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise PersistError(f"Cannot create the folder {directory}: {exc.strerror or exc}.") from exc
    remove_stale(path)
    tmp = temp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    except OSError as exc:
        raise PersistError(f"Cannot write in {directory}: {exc.strerror or exc}.") from exc
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as fh:
            write(fh)
            fh.flush()
            size = fh.tell()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise PersistError(
                f"Could not write {path}: {exc.strerror or exc}; the old file is unchanged."
            ) from exc
        raise
    _sync_dir(directory)
    return size


def _sync_dir(directory: str) -> None:
    """Make the rename durable (a directory cannot be opened for fsync on Windows: skipped there)."""
    flags = getattr(os, "O_DIRECTORY", 0) | os.O_RDONLY
    try:
        fd = os.open(directory, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale(target: str) -> list[str]:
    """Remove temporary files a killed writer left next to ``target`` (their process is gone); return them."""
    directory, name = os.path.split(os.path.abspath(target))
    prefix = f".{name}."
    removed: list[str] = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_TMP_SUFFIX)):
            continue
        middle = entry[len(prefix) : -len(_TMP_SUFFIX)].split(".")
        if len(middle) != 2 or not middle[0].isdigit() or _alive(int(middle[0])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, entry))
            removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill(pid, 0) would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or we cannot tell: leave its file alone
    return True
