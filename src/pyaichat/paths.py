"""Where pyaichat reads its configuration and keeps its state (XDG base directories).

The start-up needs two of these (is there a config file? where does the history go?) before anything else
uses ``pathlib``, so those two work on plain strings and ``pathlib`` loads only with the ``Path`` functions.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def _xdg(var: str, default: str) -> str:
    value = os.environ.get(var, "").strip()
    return value if value else os.path.join(os.path.expanduser("~"), default)


def _config_home() -> str:
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "pyaichat")


def _state_home() -> str:
    return os.path.join(_xdg("XDG_STATE_HOME", ".local/state"), "pyaichat")


def _path(text: str) -> Path:
    from pathlib import Path  # not at start-up (see above)

    return Path(text)


def default_config_file() -> Path:
    return _path(default_config_location())


def default_config_location() -> str:
    """``default_config_file()`` as a string, without loading ``pathlib`` (the start-up only tests it)."""
    return os.path.join(_config_home(), "config.toml")


def state_dir() -> Path:
    """Directory for ``history`` and ``audit.jsonl``; created lazily by whoever writes there first."""
    return _path(_state_home())


def _ensure(directory: str) -> bool:
    """Create the state directory ``0700`` when it is new: what it holds (history, audit, the resume file,
    snapshots, discovery records) is the user's alone."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(directory)


def ensure_state_dir() -> Path | None:
    """Create the state directory; ``None`` when it cannot be created (read-only home): callers degrade."""
    directory = _state_home()
    return _path(directory) if _ensure(directory) else None


def state_path(name: str) -> str:
    """Path of ``name`` in the state directory, as a string, without creating anything (a hot path opens it
    and creates the directory only when that fails: ``state_file``)."""
    return os.path.join(_state_home(), name)


def state_file(name: str) -> str | None:
    """Path of ``name`` in the state directory (created), as a string; ``None`` when it cannot be created."""
    directory = _state_home()
    return os.path.join(directory, name) if _ensure(directory) else None
