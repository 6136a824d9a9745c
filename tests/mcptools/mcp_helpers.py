"""Server entries for the MCP tests (a plain module: ``tests/mcptools`` is not a package, and ``conftest`` is
a name every test folder has)."""

from __future__ import annotations

import json
import os
import subprocess
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


def run_piped(
    tmp_path: Path, srv: Any, stdin: str, *args: str, config: str = ""
) -> subprocess.CompletedProcess:
    (tmp_path / "config" / "pyaichat").mkdir(parents=True, exist_ok=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text(config)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")},
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PYAICHAT_MODEL": "openai/scripted",
        "PYAICHAT_API_BASE": srv.base_url,
        "OPENAI_API_KEY": "sk-test",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=tmp_path,
    )
