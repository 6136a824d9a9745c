"""The audit log: one JSON line per capability call in ``state_dir()/audit.jsonl``.

It lets a user check afterwards exactly what the assistant looked at. Arguments are masked before they are
written, and a failure to write (read-only home, full disk) never breaks the call being recorded.
"""

from __future__ import annotations

import json
import os
import uuid
import weakref
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Any

from ..paths import state_dir, state_file, state_path

FILE_NAME = "audit.jsonl"
_session_ids: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def log_path() -> Path:
    return state_dir() / FILE_NAME


def session_id(session: Any) -> str:
    """A stable id per session object: its own ``session_id``/``id`` attribute, else a random one kept
    here."""
    for attr in ("session_id", "id"):
        value = getattr(session, attr, None)
        if isinstance(value, str) and value:
            return value
    try:
        if session not in _session_ids:
            _session_ids[session] = uuid.uuid4().hex[:12]
        return _session_ids[session]
    except TypeError:  # not weak-referenceable
        return f"obj-{id(session):x}"


def record(
    session: Any,
    name: str,
    args: Any,
    *,
    ok: bool,
    error: str | None,
    duration_ms: float,
    output_chars: int,
    truncated: bool = False,
    origin: str = "assistant",
    **extra: Any,
) -> None:
    """Append one line; ``args`` must already be masked. Never raises. ``extra``: fields of one kind of call
    (an MCP tool's ``server``, ``tool`` and the user's ``decision``), plain JSON values."""
    try:
        entry = {
            "time": datetime.now().astimezone().isoformat(timespec="milliseconds"),
            "session": session_id(session),
            "origin": origin,
            "capability": name,
            "args": args,
            "ok": ok,
            "error": error,
            "duration_ms": round(duration_ms, 3),
            "output_chars": output_chars,
            "truncated": truncated,
            **extra,
        }
        line = json.dumps(entry, ensure_ascii=False, default=repr) + "\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:  # every call lands here (an outside agent's too): no directory check unless the open fails
            fd = os.open(state_path(FILE_NAME), flags, 0o600)
        except FileNotFoundError:
            path = state_file(FILE_NAME)  # the state directory is new: made private first
            if path is None:
                return
            fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except Exception:
        pass  # the log is a record, not a gate


def record_result(session: Any, result: Any, args: Any, *, origin: str = "assistant", **extra: Any) -> None:
    """``record`` of one call's ``CapabilityResult`` (a capability's, or an MCP tool's)."""
    record(
        session,
        result.name,
        args,
        ok=result.ok,
        error=result.error,
        duration_ms=result.duration_ms,
        output_chars=len(result.text),
        truncated=result.truncated,
        origin=origin,
        **extra,
    )


def read_last(n: int = 10, path: Path | None = None) -> list[dict[str, Any]]:
    """The last ``n`` entries (oldest first); unreadable lines are skipped."""
    path = path or log_path()
    if n <= 0:
        return []
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            lines = deque(fh, maxlen=n)
    except OSError:
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def format_entry(entry: dict[str, Any]) -> str:
    """One readable line: ``2026-11-22T18:30:01.123  get_repr(expr='df')  ok  1.2 ms  340 chars``."""
    args = entry.get("args") or {}
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, dict) else repr(args)
    if len(shown) > 80:
        shown = shown[:79] + "…"
    status = "ok" if entry.get("ok") else f"failed: {entry.get('error') or '?'}"
    origin = "" if entry.get("origin", "assistant") == "assistant" else f"  [{entry.get('origin')}]"
    return (
        f"{entry.get('time', '?')}  {entry.get('capability', '?')}({shown})  {status}  "
        f"{entry.get('duration_ms', 0):.1f} ms  {entry.get('output_chars', 0):,} chars{origin}"
    )
