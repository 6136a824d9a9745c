"""Discovery records: how ``pyaichat mcp`` (started by an agent) finds the sessions this user is serving.

Each serving session writes one JSON file, ``<pid>.json``, into a directory only this user can enter (0700):
``$XDG_RUNTIME_DIR/pyaichat`` where the system provides one (private, emptied at logout), else
``$XDG_STATE_HOME/pyaichat/mcp``. The file itself is 0600, written whole or not at all, and removed when the
session stops serving or exits. It holds what a client needs — the HTTP address, the bearer token, the private
endpoint of the session — and what a person picking among sessions needs: pid, working directory, start time.

A record whose process is gone is stale: readers skip it and remove it; one whose process lives but whose
endpoint does not answer is skipped by the bridge when it connects.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from ..paths import state_dir

SUFFIX = ".json"
_UNIX_PATH_MAX = 100  # sun_path is 104 (macOS) to 108 (Linux) bytes; keep a margin


def records_dir() -> str:
    """The directory of the records (not created here)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "pyaichat")
    return os.path.join(str(state_dir()), "mcp")


def ensure_private_dir(path: str) -> str:
    """Create ``path`` (and parents) and make sure only this user can use it: 0700, owned by us. Raises
    ``PermissionError`` with one sentence when it belongs to someone else."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise PermissionError(f"{path} is not a directory of this user's; pyaichat will not serve from it.")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)
    return path


def record_path(pid: int | None = None, directory: str | None = None) -> str:
    return os.path.join(directory or records_dir(), f"{pid or os.getpid()}{SUFFIX}")


def endpoint_path(directory: str) -> str | None:
    """Where this process's endpoint socket goes, or ``None`` when the path would be too long for a Unix
    socket (the caller then makes a private temporary directory)."""
    path = os.path.join(directory, f"{os.getpid()}.sock")
    return path if len(os.fsencode(path)) <= _UNIX_PATH_MAX else None


def write_record(record: dict[str, Any], directory: str | None = None) -> str:
    """Write this process's record atomically, 0600; return its path."""
    directory = ensure_private_dir(directory or records_dir())
    target = record_path(directory=directory)
    temp = f"{target}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return target


def remove_record(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (someone else's: a reused pid; connecting will tell)
    return True


def read_records(directory: str | None = None, *, clean: bool = True) -> list[dict[str, Any]]:
    """The live records, newest first. Stale ones (their process is gone) are skipped and, with ``clean``,
    removed; unreadable or foreign files are skipped."""
    directory = directory or records_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(SUFFIX):
            continue
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                continue
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
            continue
        if not pid_alive(record["pid"]):
            if clean:
                remove_record(path)
            continue
        record["path"] = path
        found.append(record)
    found.sort(key=lambda r: float(r.get("started_ts") or 0), reverse=True)
    return found
