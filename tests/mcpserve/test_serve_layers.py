"""Where the MCP SDK may be imported: only in the face modules (their own processes), never in what the
person's session loads to serve; and what serves stays a front end that nothing below imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "core"))
from test_import_graph import MODULES, graph, third_party_imports  # noqa: E402

SDK = {"mcp", "mcp_types", "starlette", "uvicorn", "anyio", "httpx", "httpx2"}
FACES = {"pyaichat.mcpserve.face", "pyaichat.mcpserve.http_main", "pyaichat.mcpserve.bridge_cli"}
# anyio only inside the coroutines the faces' event loops run (the switchboard's call; ``SessionLink.acall``
# uses asyncio's own streams, of the standard library)
ON_THE_FACES_LOOP = {"pyaichat.mcpserve.bridge"}


def test_only_the_faces_import_the_sdk() -> None:
    users = {
        name for name in MODULES if name.startswith("pyaichat.mcpserve") and third_party_imports(name) & SDK
    }
    assert users == FACES | ON_THE_FACES_LOOP
    for name in ON_THE_FACES_LOOP:
        assert third_party_imports(name) & SDK == {"anyio"}, name


def test_nothing_below_the_front_ends_imports_the_serving_package() -> None:
    edges = graph()
    below = (
        "pyaichat.session",
        "pyaichat.capabilities",
        "pyaichat.runtime",
        "pyaichat.agent",
        "pyaichat.persist",
    )
    importers = {
        name: sorted(t for t in targets if t.startswith("pyaichat.mcpserve"))
        for name, targets in edges.items()
        if name.startswith(below) and any(t.startswith("pyaichat.mcpserve") for t in targets)
    }
    assert importers == {}
    # the controller takes the gate only (standard library, no threads until serving starts)
    assert {t for t in edges["pyaichat.controller"] if t.startswith("pyaichat.mcpserve")} == {
        "pyaichat.mcpserve.gate"
    }


def test_serving_loads_nothing_of_the_sdk_into_the_session() -> None:
    probe = (
        "import sys\n"
        "from pyaichat.mcpserve import service, hosting, endpoint, backend, bridge\n"
        f"print(sorted(m for m in {sorted(SDK)!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
