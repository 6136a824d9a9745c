"""Pinned tool definitions: trust on first use, so a server cannot change a tool after the person trusted it.

The first time a server's tools are listed, each tool's definition — its name, description, input schema and
annotations — is stored with a hash, in the state directory (``mcp-pins.json``, ``0600``), keyed by the
server's entry (its name and what it runs or where it lives: a different command is a different server).
On every later listing (a new session, ``notifications/tools/list_changed``) the tools are compared with the
pins:

- unchanged: offered as before;
- changed or added: *not offered* until the person has seen the difference (``Drift.lines``: what changed in
  the description or schema, whether a read-only claim appeared or vanished) and accepted it; removed ones
  are simply gone. A read-only claim that appears later is part of the definition, so it too waits for them.

Accepting stores the new definitions; refusing keeps the old pins, and the changed tools stay withheld for
the session (``/tools review NAME`` asks again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..paths import state_file

PINS_FILE = "mcp-pins.json"
DESCRIPTION_LINES = 6  # lines of a changed description shown in the diff, each side
ANNOTATION_NAMES = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}


def definition(tool: Any) -> dict[str, Any]:
    """What is pinned of one ``mcp_types.Tool``: the parts a server could change to mislead the model or the
    person (its title too: it is what a panel may show)."""
    annotations = getattr(tool, "annotations", None)
    if annotations is not None and hasattr(annotations, "model_dump"):
        notes = annotations.model_dump(by_alias=True, exclude_none=True)
    else:
        notes = dict(annotations or {})
    return {
        "name": tool.name,
        "title": getattr(tool, "title", None),
        "description": (tool.description or "").strip(),
        "inputSchema": getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {},
        "annotations": notes,
    }


def digest(pinned: Mapping[str, Any]) -> str:
    text = json.dumps(pinned, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_key(name: str, where: str) -> str:
    """The pins' key for a server entry: its name and a short hash of what it runs (or its address)."""
    return f"{name}#{hashlib.sha256(where.encode('utf-8')).hexdigest()[:12]}"


@dataclass
class Drift:
    """How a server's tools differ from their pins."""

    server: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # tool -> what changed, one line each

    @property
    def held(self) -> set[str]:
        """The tools not offered until the person accepts: the changed and the added."""
        return set(self.changed) | set(self.added)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def lines(self, current: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
        """The short diff the person sees."""
        out = [f"The MCP server {self.server!r} changed its tools since you first used it:"]
        for name in sorted(self.changed):
            out.append(f"  ~ {name} changed:")
            out += [f"      {line}" for line in self.changed[name]]
        for name in sorted(self.added):
            out.append(f"  + {name} is new" + _claims(current.get(name) if current else None))
        for name in sorted(self.removed):
            out.append(f"  - {name} is gone")
        if self.held:
            out.append(
                "Until you accept, the changed and new tools are not offered to the assistant "
                f"(/tools review {self.server} shows this again)."
            )
        return out


def compare(
    server: str, pinned: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any]]
) -> Drift:
    """The difference between the pinned definitions and the ones listed now (each by tool name)."""
    drift = Drift(server)
    for name, now in current.items():
        old = pinned.get(name)
        if old is None:
            drift.added.append(name)
        elif digest(old) != digest(now):
            drift.changed[name] = changes(old, now)
    drift.removed = [name for name in pinned if name not in current]
    return drift


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What changed between two definitions of a tool, a line each, short."""
    lines: list[str] = []
    before, after = old.get("annotations") or {}, new.get("annotations") or {}
    for key, word in ANNOTATION_NAMES.items():
        was, now = before.get(key), after.get(key)
        if was is not True and now is True:
            lines.append(f"now claims to be {word} ({key}: true) — it did not before")
        elif was is True and now is not True:
            lines.append(f"no longer claims to be {word} ({key})")
    if old.get("title") != new.get("title"):
        lines.append(f"title: {old.get('title')!r} → {new.get('title')!r}")
    if old.get("description") != new.get("description"):
        lines.append("description:")
        lines += _text_diff(str(old.get("description") or ""), str(new.get("description") or ""))
    lines += _schema_changes(old.get("inputSchema") or {}, new.get("inputSchema") or {})
    other = {
        k for k in set(before) | set(after) if k not in ANNOTATION_NAMES and before.get(k) != after.get(k)
    }
    if other:
        lines.append(f"annotations changed: {', '.join(sorted(other))}")
    return lines or ["its definition changed (nothing a person reads; the hash differs)"]


def _text_diff(old: str, new: str) -> list[str]:
    import difflib  # only when a description changed

    diff = [
        line
        for line in difflib.ndiff(old.splitlines() or [""], new.splitlines() or [""])
        if line[:1] in "+-" and line[2:].strip()
    ]
    shown = [f"  {line[:1]} {line[2:][:160]}" for line in diff[: DESCRIPTION_LINES * 2]]
    if len(diff) > len(shown):
        shown.append(f"  … {len(diff) - len(shown)} more changed lines")
    return shown


def _schema_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    lines = []
    props_old = old.get("properties") if isinstance(old.get("properties"), dict) else {}
    props_new = new.get("properties") if isinstance(new.get("properties"), dict) else {}
    for name in props_new:
        if name not in props_old:
            lines.append(f"schema: new argument {name!r} {_brief(props_new[name])}")
        elif props_old[name] != props_new[name]:
            lines.append(f"schema: argument {name!r} {_brief(props_old[name])} → {_brief(props_new[name])}")
    for name in props_old:
        if name not in props_new:
            lines.append(f"schema: argument {name!r} removed")
    req_old, req_new = set(old.get("required") or ()), set(new.get("required") or ())
    if req_old != req_new:
        lines.append(f"schema: required {sorted(req_old)} → {sorted(req_new)}")
    rest = {
        k for k in set(old) | set(new) if k not in ("properties", "required") and old.get(k) != new.get(k)
    }
    if rest:
        lines.append(f"schema: {', '.join(sorted(rest))} changed")
    return lines


def _brief(schema: Any) -> str:
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def _claims(pinned: Mapping[str, Any] | None) -> str:
    notes = (pinned or {}).get("annotations") or {}
    claims = [word for key, word in ANNOTATION_NAMES.items() if notes.get(key) is True]
    return f" (claims: {', '.join(claims)})" if claims else ""


class Pins:
    """The pins file: ``{entry key: {tool name: definition}}``; read once, written whole on each change
    (``0600``, replaced atomically). ``path`` ``None``: no state directory, pins held for this session
    only."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._data: dict[str, dict[str, dict[str, Any]]] | None = None
        self.problem: str | None = None  # why the file could not be read or written, once

    @classmethod
    def default(cls) -> Pins:
        return cls(state_file(PINS_FILE))

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        if self._data is None:
            self._data = {}
            if self.path is not None and os.path.exists(self.path):
                try:
                    with open(self.path, encoding="utf-8") as fh:
                        data = json.load(fh)
                    if isinstance(data, dict):
                        self._data = {k: v for k, v in data.items() if isinstance(v, dict)}
                except (OSError, ValueError) as exc:
                    # a pins file we cannot read must not silently trust everything: every tool counts as new
                    self.problem = (
                        f"The MCP pins file {self.path} cannot be read ({exc}); every tool counts as new."
                    )
                    self._data = {}
        return self._data

    def known(self, key: str) -> dict[str, dict[str, Any]] | None:
        """The pinned definitions of the server ``key``; ``None`` when it was never used."""
        return self._load().get(key)

    def pin(
        self, key: str, definitions: Mapping[str, Mapping[str, Any]], names: Iterable[str] | None = None
    ) -> None:
        """Store ``definitions`` (only ``names`` of them, when given, keeping the other pins) for ``key``.
        The file is read again first: another session may have pinned other servers meanwhile."""
        self._data = None
        data = self._load()
        mine = dict(data.get(key) or {})
        if names is None:
            mine = {name: dict(d) for name, d in definitions.items()}
        else:
            for name in names:
                if name in definitions:
                    mine[name] = dict(definitions[name])
                else:
                    mine.pop(name, None)
        data[key] = mine
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._data, fh, ensure_ascii=False, indent=1, sort_keys=True, default=str)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            self.problem = f"The MCP pins file {self.path} cannot be written ({exc.strerror})."
            with _quiet():
                os.unlink(tmp)


def _quiet() -> Any:
    return contextlib.suppress(OSError)
