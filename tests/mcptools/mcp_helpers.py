"""Server entries for the MCP tests (a plain module: ``tests/mcptools`` is not a package, and ``conftest`` is
a name every test folder has)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FAULT_SERVER = HERE / "fault_server.py"
BIN = Path(sys.executable).parent  # where pip put mcp-server-time and mcp-server-git (the test extra)
NPM_PACKAGES = (
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
)


def fault(mode: str = "ok", **entry: Any) -> dict[str, Any]:
    """An ``[mcp_servers.NAME]`` entry that starts the fault server in ``mode``."""
    return {"command": sys.executable, "args": [str(FAULT_SERVER), mode], **entry}


def real(name: str, *args: str, **entry: Any) -> dict[str, Any]:
    """An entry for a server pip installed next to this Python (``mcp-server-time``, ``mcp-server-git``)."""
    return {"command": str(BIN / name), "args": list(args), **entry}


def calls_made(notes: dict[str, str]) -> list[dict[str, Any]]:
    path = Path(notes["FAULT_CALLS_FILE"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
