"""Where pyaichat reads its configuration and keeps its state (XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var, "").strip()
    return Path(value) if value else Path.home() / default


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "pyaichat"


def default_config_file() -> Path:
    return config_dir() / "config.toml"


def state_dir() -> Path:
    """Directory for ``history`` and ``audit.jsonl``; created lazily by whoever writes there first."""
    return _xdg("XDG_STATE_HOME", ".local/state") / "pyaichat"


def ensure_state_dir() -> Path | None:
    """Create the state directory; ``None`` when it cannot be created (read-only home): callers degrade."""
    path = state_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path
