"""The MCP serving tests need the SDK (``pyaichat[mcp]``; the test extra installs it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

sys.path.insert(0, str(Path(__file__).resolve().parent))
