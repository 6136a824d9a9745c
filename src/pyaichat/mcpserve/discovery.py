"""Discovery records: how ``pyaichat mcp`` (started by an agent) finds the sessions this user is serving.

Each serving session writes one JSON file, ``<pid>.json``, into a directory only this user can enter (0700):
``$XDG_RUNTIME_DIR/pyaichat`` where the system provides one (private, emptied at logout), else
``$XDG_STATE_HOME/pyaichat/mcp``. The file itself is 0600, written whole or not at all, and removed when the
session stops serving or exits. It holds what a client needs — the HTTP address, the bearer token, the private
endpoint of the session — and what a person picking among sessions needs: pid, working directory, start time.

A record whose process is gone is stale: readers skip it and remove it, with what its session left beside it
(``<pid>.sock``, ``<pid>-http.log``) when it was killed; one whose process lives but whose endpoint does not
answer is skipped by the bridge when it connects.

A record proves nothing by itself (any process of this user can write one), so ``pyaichat mcp`` trusts only
what it can check (``endpoint_of`` and ``link.prove``): the endpoint must be the Unix socket ``<pid>.sock`` in
this private directory, a socket of this user's, and the process listening on it must be the record's pid.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from ..paths import state_dir

SUFFIX = ".json"
LEFT_BEHIND = (".sock", "-http.log")  # beside a record: its session's endpoint and its HTTP face's log


class Refused(Exception):
    """A record ``pyaichat mcp`` will not use: ``str()`` is the sentence that says why."""


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


def endpoint_path(directory: str, pid: int | None = None) -> str:
    """Where the endpoint socket of ``pid`` (this process) is, beside its record."""
    return os.path.join(directory, f"{pid or os.getpid()}.sock")


def endpoint_of(record: dict[str, Any], directory: str | None = None) -> dict[str, Any]:
    """The address of ``record``'s endpoint once it is what a session of this user's would have made:
    ``Refused`` (one sentence) otherwise."""
    directory = os.path.realpath(directory or records_dir())
    pid, named = record.get("pid"), record.get("endpoint")
    why = None
    if not isinstance(named, dict) or "unix" not in named:
        why = "it names a TCP endpoint, and only a Unix socket in the private records directory can be proven"
    elif not _private(directory):
        why = f"{directory} is not a directory only this user can enter"
    else:
        path = endpoint_path(directory, pid)
        if not isinstance(named["unix"], str) or os.path.realpath(named["unix"]) != path:
            why = "its socket is not the session's own in the private records directory"
        elif not _own(path, stat.S_ISSOCK):
            why = "its socket is missing or is not a socket of this user's"
    if why is not None:
        raise Refused(f"pyaichat mcp refused the session record of pid {pid}: {why}.")
    return {"unix": path}


def _own(path: str, kind: Any) -> bool:
    """``path`` exists, is of ``kind`` (``stat.S_ISSOCK``…) and is this user's."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return kind(info.st_mode) and (not hasattr(os, "getuid") or info.st_uid == os.getuid())


def _private(directory: str) -> bool:
    try:
        return _own(directory, stat.S_ISDIR) and not stat.S_IMODE(os.lstat(directory).st_mode) & 0o077
    except OSError:
        return False


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
    removed with what their session left beside them; unreadable or foreign files are skipped."""
    directory = directory or records_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        if clean:
            _remove_left_behind(directory, name)
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


def _remove_left_behind(directory: str, name: str) -> None:
    """``<pid>.sock`` or ``<pid>-http.log`` of a session killed before it could remove them (its process is
    gone), this user's own."""
    for suffix in LEFT_BEHIND:
        pid = name.removesuffix(suffix)
        if name.endswith(suffix) and pid.isdigit() and not pid_alive(int(pid)):
            path = os.path.join(directory, name)
            if _own(path, stat.S_ISSOCK if suffix == ".sock" else stat.S_ISREG):
                remove_record(path)
