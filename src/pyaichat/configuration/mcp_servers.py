"""Where MCP server entries come from, and how they become servers ready to start: configuration, below
``config`` (the ``mcp_servers`` setting is checked with it when the file is read) and ``mcptools`` (which
starts them).

Two forms, which can be used together:

- ``[mcp_servers.NAME]`` tables in pyaichat's config file (checked when the file is read, like every other
  setting: an unknown key is a mistake worth one sentence at start-up);
- the ``mcpServers`` JSON of Claude Desktop and Cursor (``{"mcpServers": {...}}``), of VS Code
  (``{"servers": {...}}``, or ``{"mcp": {"servers": {...}}}`` in its settings), given with ``--mcp-config
  FILE.json`` or ``mcp_config = "FILE.json"``, taken as it is: keys pyaichat has no use for are ignored —
  including other clients' auto-approval lists (``autoApprove``, ``alwaysAllow``), which grant nothing here.

A table in the config file without a ``command`` or ``url`` changes a server of the same name from the JSON
(``[mcp_servers.git] trust = "read-only"``), so a pasted file can be trusted server by server. The same
table turns on a server's requests back (``sampling = true``, ``elicitation = true``), which exist only
there.

``${…}`` references are filled in when a server starts (``mcptools.launch``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from .mcp_server_spec import TRANSPORTS, TRUSTS, Pairs, ServerSpec
from .secret import Secret

TOML_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "type",
    "trust",
    "start_timeout",
    "call_timeout",
    "roots",
    "sampling",
    "elicitation",
    "enabled",
)
_TRANSPORT_NAMES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


class EntryError(ValueError):
    """One entry cannot be used; ``str()`` says why in words for the user."""


# -- the config file ---------------------------------------------------------------------------------------
def servers_from_table(value: Any) -> tuple[ServerSpec, ...]:
    """The ``mcp_servers`` setting from a config file's tables (or already made specs, unchanged); raises
    ``ValueError`` with the reason, which the settings check words as a config error."""
    if isinstance(value, tuple) and all(isinstance(v, ServerSpec) for v in value):
        return value
    if not isinstance(value, Mapping):
        raise ValueError("Input should be a table of servers, one [mcp_servers.NAME] section each")
    specs = []
    for name, entry in value.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"Entry {name!r} should be a table ([mcp_servers.{name}])")
        unknown = [key for key in entry if key not in TOML_KEYS]
        if unknown:
            raise ValueError(
                f"Entry {name!r} has an unknown key {unknown[0]!r} (known keys: {', '.join(TOML_KEYS)})"
            )
        specs.append(_spec(str(name), entry, origin="the config file", strict=True))
    return tuple(specs)


# -- the mcpServers JSON -------------------------------------------------------------------------------------
def read_json_file(path: str) -> tuple[ServerSpec, ...]:
    """The servers of an ``mcpServers`` JSON file; a ``ConfigError`` naming the file if it cannot be used."""
    import json  # only with an MCP config file: a config file with tables is read at start-up without it

    shown = os.path.expanduser(path)
    try:
        with open(shown, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"MCP config file {path} does not exist.", source=path, key="mcp_config") from None
    except OSError as exc:
        raise ConfigError(
            f"MCP config file {path} cannot be read: {exc.strerror}.", source=path, key="mcp_config"
        ) from None
    except ValueError as exc:
        raise ConfigError(f"MCP config file {path} is not valid JSON: {exc}.", source=path, key="mcp_config")
    try:
        return servers_from_json(data, origin=path)
    except ValueError as exc:
        raise ConfigError(f"In MCP config file {path}: {exc}.", source=path, key="mcp_config") from None


def servers_from_json(data: Any, *, origin: str) -> tuple[ServerSpec, ...]:
    """Entries from Claude Desktop's or Cursor's ``mcpServers``, or VS Code's ``servers``."""
    table = None
    if isinstance(data, Mapping):
        table = data.get("mcpServers", data.get("servers"))
        if table is None and isinstance(data.get("mcp"), Mapping):
            table = data["mcp"].get("servers")
    if not isinstance(table, Mapping):
        raise ValueError('no "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code) object in it')
    specs = []
    for name, entry in table.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"server {name!r} should be an object")
        specs.append(_spec(str(name), entry, origin=origin, strict=False))
    return tuple(specs)


def merged(from_file: tuple[ServerSpec, ...], from_json: tuple[ServerSpec, ...]) -> list[ServerSpec]:
    """The servers of both sources by name: the JSON's in its order, then the config file's own; a config
    file table without a command or url changes the JSON server of its name."""
    by_name = {spec.name: spec for spec in from_json}
    for spec in from_file:
        base = by_name.get(spec.name)
        by_name[spec.name] = spec.over(base) if spec.overlay and base is not None else spec
    return list(by_name.values())


# -- one entry -----------------------------------------------------------------------------------------------
def _spec(name: str, entry: Mapping[str, Any], *, origin: str, strict: bool) -> ServerSpec:
    def fail(reason: str) -> EntryError:
        return EntryError(f"{'Entry' if strict else 'server'} {name!r}: {reason}")

    if not name.strip():
        raise fail("a server needs a name")
    command = _optional_str(entry, "command", fail)
    url = _optional_str(entry, "url", fail) or (None if strict else _optional_str(entry, "serverUrl", fail))
    if command is not None and url is not None:
        raise fail("give a command (a server to start) or a url (one to connect to), not both")
    kind = entry.get("type", entry.get("transport")) if not strict else entry.get("type")
    transport = None
    if kind is not None:
        transport = _TRANSPORT_NAMES.get(str(kind).lower())
        if transport is None:
            raise fail(f"type should be one of {', '.join(TRANSPORTS)} (got {kind!r})")
    if strict and command is None and url is None and transport is not None:
        raise fail("a type needs a command or a url")
    if not strict and command is None and url is None:
        raise fail("it needs a command (a server to start) or a url (one to connect to)")
    if transport is None and (command is not None or url is not None):
        transport = "stdio" if command is not None else "http"
    if transport == "stdio" and command is None:
        raise fail("a stdio server needs a command")
    if transport in ("http", "sse") and url is None:
        raise fail(f"an {transport} server needs a url")
    trust = entry.get("trust")
    if trust is not None and trust not in TRUSTS:
        raise fail(f"trust should be {' or '.join(repr(t) for t in TRUSTS)} (got {trust!r})")
    enabled = _flag(entry, "enabled", fail)
    if not strict and isinstance(entry.get("disabled"), bool):  # Cline, Roo Code
        enabled = not entry["disabled"]
    call_timeout = _seconds(entry, "call_timeout", fail)
    if call_timeout is None and not strict and "timeout" in entry:  # Cline: seconds per request
        call_timeout = _seconds(entry, "timeout", fail)
    return ServerSpec(
        name,
        command=command,
        args=tuple(_strings(entry, "args", fail)),
        env=_pairs(entry, "env", fail),
        cwd=_optional_str(entry, "cwd", fail),
        url=url,
        headers=_pairs(entry, "headers", fail),
        transport=transport,
        trust=trust,
        start_timeout=_seconds(entry, "start_timeout", fail),
        call_timeout=call_timeout,
        roots=tuple(_strings(entry, "roots", fail)) if "roots" in entry else None,
        # Requests back are turned on in pyaichat's config file only (a table of the server's name): the
        # mcpServers formats have no such key, and a file written for another client must not spend the
        # user's model or put questions to them on its own.
        sampling=_flag(entry, "sampling", fail) if strict else None,
        elicitation=_flag(entry, "elicitation", fail) if strict else None,
        enabled=enabled,
        origin=origin,
    )


def _flag(entry: Mapping[str, Any], key: str, fail: Any) -> bool | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, bool):
        raise fail(f"{key} should be true or false")
    return value


def _optional_str(entry: Mapping[str, Any], key: str, fail: Any) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{key} should be a non-empty string")
    return value


def _strings(entry: Mapping[str, Any], key: str, fail: Any) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int, float)) for v in value):
        raise fail(f"{key} should be a list of strings")
    return [_text(v) for v in value]


def _pairs(entry: Mapping[str, Any], key: str, fail: Any) -> Pairs:
    value = entry.get(key, {})
    if not isinstance(value, Mapping):
        raise fail(f"{key} should be a table of names and strings")
    pairs = []
    for name, text in value.items():
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise fail(f"{key}.{name} should be a string")  # the value itself is never shown
        pairs.append((str(name), Secret(_text(text))))
    return tuple(pairs)


def _text(value: str | float) -> str:
    """A value as a command line or an environment takes it (``true``, ``8080``, ``0.5``: as in JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def _seconds(entry: Mapping[str, Any], key: str, fail: Any) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        raise fail(f"{key} should be a number of seconds between 0 and 3600")
    return float(value)


# -- ready to start ------------------------------------------------------------------------------------------
