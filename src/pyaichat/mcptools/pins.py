"""Pinned tool definitions: trust on first use, so a server cannot change a tool after the person trusted it.

The first time a server's tools are listed, each tool's definition — its name, description, input schema and
annotations — is stored with a hash, in the state directory (``mcp-pins.json``, ``0600``), keyed by the
server's entry (its name and what it runs or where it lives: ``ServerSpec.what_runs``). An entry whose
name has pins under another key (another command, directory, environment…, or a key of an older format) is not
a first use: all its tools wait for the person, as changed.
On every later listing (a new session, ``notifications/tools/list_changed``) the tools are compared with the
pins:

- unchanged: offered as before;
- changed or added: *not offered* until the person has seen the difference (``Drift.lines``: what changed in
  the description or schema, whether a read-only claim appeared or vanished) and accepted it; removed ones
  are simply gone. A read-only claim that appears later is part of the definition, so it too waits for them.

Accepting stores the new definitions; refusing keeps the old pins, and the changed tools stay withheld for
the session (``/tools review NAME`` asks again).

What cannot be read trusts nothing: a pins file that cannot be read makes every tool of every server wait
until the person accepts starting again (and is kept, never written over, until then); a pin of the wrong
type is one broken pin, that tool's (or that server's) tools waiting as if changed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..paths import state_file
from ..persist import PersistError, shared_json

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


def entry_key(name: str, what_runs: str) -> str:
    """The pins' key for a server entry: its name and a hash of what it runs (``ServerSpec.what_runs``).
    (Keys written before ``v2`` hashed only the command and arguments joined by spaces: such a key of the same
    name is an entry that changed, reviewed, never trusted as it is — ``Pins.others``.)"""
    return f"{name}#v2:{hashlib.sha256(what_runs.encode('utf-8')).hexdigest()[:24]}"


def key_name(key: str) -> str:
    """The server name of a pins key (of either format)."""
    return key.rpartition("#")[0]


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
            out.append(f"  + {name} is new" + claims(current.get(name) if current else None))
        for name in sorted(self.removed):
            out.append(f"  - {name} is gone")
        if self.held:
            out.append(
                "Until you accept, the changed and new tools are not offered to the assistant "
                f"(/tools review {self.server} shows this again)."
            )
        return out


def compare(server: str, pinned: Pinned | Broken, current: Mapping[str, Mapping[str, Any]]) -> Drift:
    """The difference between the pinned definitions and the ones listed now (each by tool name); a pin
    that cannot be read (``BROKEN``) counts as changed."""
    drift = Drift(server)
    if isinstance(pinned, Broken):
        drift.changed = {name: [UNREADABLE_PIN] for name in current}
        return drift
    for name, now in current.items():
        old = pinned.get(name)
        if old is None:
            drift.added.append(name)
        elif isinstance(old, Broken):
            drift.changed[name] = [UNREADABLE_PIN]
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
    props_old, props_new = _properties(old), _properties(new)
    for name in props_new:
        if name not in props_old:
            lines.append(f"schema: new argument {name!r} {_brief(props_new[name])}")
        elif props_old[name] != props_new[name]:
            lines.append(f"schema: argument {name!r} {_brief(props_old[name])} → {_brief(props_new[name])}")
    for name in props_old:
        if name not in props_new:
            lines.append(f"schema: argument {name!r} removed")
    req_old, req_new = _names(old.get("required")), _names(new.get("required"))
    if req_old != req_new:
        lines.append(f"schema: required {sorted(req_old)} → {sorted(req_new)}")
    rest = {
        k for k in set(old) | set(new) if k not in ("properties", "required") and old.get(k) != new.get(k)
    }
    if rest:
        lines.append(f"schema: {', '.join(sorted(rest))} changed")
    return lines


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema's ``properties`` (``{}`` when a server or a hand-edited file put something else there)."""
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}


def _names(value: Any) -> set[str]:
    """A schema's ``required``, as names (whatever a server or a hand-edited file put there)."""
    return {str(v) for v in value} if isinstance(value, (list, tuple)) else set()


def _brief(schema: Any) -> str:
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def claims(pinned: Mapping[str, Any] | None) -> str:
    """`` (claims: read-only, idempotent)`` for a definition's annotations that say so; else ``""``."""
    notes = (pinned or {}).get("annotations") or {}
    said = [word for key, word in ANNOTATION_NAMES.items() if notes.get(key) is True]
    return f" (claims: {', '.join(said)})" if said else ""


class Broken:
    """A pin that cannot be read (an entry of the wrong type): the tool, or every tool of the server when
    the whole entry is broken, waits for the person as if it were changed."""

    def __repr__(self) -> str:
        return "BROKEN"


BROKEN = Broken()
ENTRY_CHANGED = "what runs under this name changed (command, arguments, directory, environment…): review it"
UNREADABLE_PIN = "its pin in the pins file cannot be read (an entry of the wrong type): review it as new"
Pinned = dict[str, "dict[str, Any] | Broken"]


def _readable(pin: Any) -> bool:
    """Whether a stored pin has the shape ``definition`` writes (each part that is there of its type)."""
    if not isinstance(pin, dict):
        return False
    kinds = {"name": str, "description": str, "inputSchema": dict, "annotations": dict}
    title = pin.get("title")
    return all(isinstance(pin.get(k, t()), t) for k, t in kinds.items()) and (
        title is None or isinstance(title, str)
    )


class Pins:
    """The pins file: ``{entry key: {tool name: definition}}``, shared by every session of the person.

    Read whole when first needed; each write reads it again, merges and replaces it under a lock
    (``persist.shared_json``), so two sessions never lose each other's pins. ``path`` ``None``: no state
    directory, pins held for this session only.

    A file that cannot be read is ``damaged`` (why, in one sentence): nothing in it is trusted, nothing is
    written over it, until the person accepts starting again (``start_again``; the damaged file is kept
    beside the new one). An entry of the wrong type is one broken pin (``BROKEN``): that tool, or that
    server's tools, wait for review; the rest of the file still counts."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._data: dict[str, Any] | None = None
        self._damaged: str | None = None
        self._here: dict[str, dict[str, dict[str, Any]]] = {}  # pins of this session not saved (no file)
        self._lock = threading.Lock()  # the manager's loop pins first listings; a turn's thread reviews
        self.problem: str | None = None  # why the file could not be written, once

    @classmethod
    def default(cls) -> Pins:
        return cls(state_file(PINS_FILE))

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            self._data, self._damaged = {}, None
            if self.path is not None:
                try:
                    self._data = shared_json.read(self.path) or {}
                except shared_json.Unreadable as exc:
                    self._damaged = f"The MCP pins file {self.path} cannot be read ({exc})"
        return self._data

    @property
    def damaged(self) -> str | None:
        """Why the pins file cannot be read (``None``: it can, or there is none)."""
        with self._lock:
            self._load()
            return self._damaged

    def known(self, key: str) -> Pinned | Broken | None:
        """The pinned definitions of the server ``key`` (a tool's ``BROKEN`` when its pin cannot be read;
        ``BROKEN`` for all when the server's entry cannot be); ``None`` when it was never used."""
        with self._lock:
            if key in self._here:
                return dict(self._here[key])
            entry = self._load().get(key)
        if entry is None:
            return None
        if not isinstance(entry, dict):
            return BROKEN
        return {str(name): (dict(pin) if _readable(pin) else BROKEN) for name, pin in entry.items()}

    def others(self, key: str) -> bool:
        """Whether tools were pinned under the same server name for another entry (another command, directory,
        environment…, or a key of an older format): then ``key`` is not a first use but a change."""
        name = key_name(key)
        with self._lock:
            keys = [*self._here, *self._load()]
        return any(k != key and key_name(str(k)) == name for k in keys)

    def pin(
        self, key: str, definitions: Mapping[str, Mapping[str, Any]], names: Iterable[str] | None = None
    ) -> bool:
        """Store ``definitions`` (only ``names`` of them, when given, keeping the server's other pins) for
        ``key``, merged with what other sessions pinned meanwhile. False when they are held for this session
        only (no file, or it cannot be written: ``problem`` says why) or not at all (the file is damaged)."""

        def change(data: dict[str, Any]) -> None:
            mine = data.get(key)
            mine = {n: p for n, p in mine.items() if _readable(p)} if isinstance(mine, dict) else {}
            if names is None:
                mine = {name: dict(d) for name, d in definitions.items()}
            else:
                for name in names:
                    if name in definitions:
                        mine[name] = dict(definitions[name])
                    else:
                        mine.pop(name, None)
            data[key] = mine

        with self._lock:
            if self.path is None or key in self._here:
                change(self._here)
                return False
            self._load()
            if self._damaged:
                return False
            try:
                shared_json.update(self.path, change)
            except shared_json.Unreadable as exc:  # damaged by someone else meanwhile: left as it is
                self._data, self._damaged = {}, f"The MCP pins file {self.path} cannot be read ({exc})"
                return False
            except PersistError as exc:
                self.problem = f"{exc} The tools are pinned for this session only."
                change(self._here)
                return False
            self._data = None  # read again when next needed: other sessions' pins too
            return True

    def start_again(self, pinned: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
        """The person accepted the tools listed now over a damaged pins file: a new file with ``pinned``
        (entry key → definitions), the damaged one kept beside it. The sentence that says what happened."""
        with self._lock:
            if self.path is None:
                return "Accepted."

            def change(data: dict[str, Any]) -> None:
                for key, definitions in pinned.items():
                    data[key] = {name: dict(d) for name, d in definitions.items()}

            try:
                kept = shared_json.update(self.path, change, start_again=True)
            except (OSError, PersistError) as exc:
                for key, definitions in pinned.items():
                    self._here[key] = {name: dict(d) for name, d in definitions.items()}
                self.path, self._data, self._damaged = None, {}, None
                return (
                    f"Accepted for this session only: the damaged pins file cannot be replaced "
                    f"({getattr(exc, 'strerror', None) or exc}); it is left as it is."
                )
            self._data, self._damaged = None, None
            where = f"; the damaged one is kept as {kept}" if kept else ""
            return f"Accepted: the tools are pinned as they are now in a new {self.path}{where}."
