"""A client no one here wrote: the official MCP TypeScript SDK's client, over stdio (through ``pyaichat mcp``)
and over Streamable HTTP. It needs node and npm; the SDK is installed with npm into a cache directory
(``$PYAICHAT_TEST_NPM_CACHE``, else ``~/.cache/pyaichat-tests/npm``) on the first run, which CI pays once per
clean clone (≈15 s)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Served

pytestmark = pytest.mark.e2e

SDK = "@modelcontextprotocol/sdk@1.32.2"
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def node_modules() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the TypeScript SDK client cannot run here")
    cache = Path(
        os.environ.get("PYAICHAT_TEST_NPM_CACHE") or Path.home() / ".cache" / "pyaichat-tests" / "npm"
    )
    prefix = cache / SDK.replace("/", "+")
    if not (prefix / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), SDK, "--no-audit", "--no-fund", "--silent"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install {SDK} (no registry?): {proc.stderr.strip()[-300:]}")
    return prefix / "node_modules"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = Served(
        tmp_path_factory.mktemp("ts") / "state",
        "import pandas as pd\ndf = pd.DataFrame({'n': [1, 2, 3, 4]})",
    )
    yield served
    served.stop()


def run_client(node_modules: Path, env: dict[str, str], *args: str) -> dict:
    script = node_modules.parent / "ts_client.mjs"  # next to node_modules, so its imports resolve there
    shutil.copyfile(HERE / "ts_client.mjs", script)
    proc = subprocess.run(["node", str(script), *args], capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(out: dict, served: Served) -> None:
    assert "error" not in out, out
    names = [t["name"] for t in out["tools"]]
    assert names[0] == "get_session_picture" and "get_repr" in names
    assert all(t["readOnly"] for t in out["tools"] if t["name"] != "propose_code")
    calls = {c["name"]: c for c in out["calls"]}
    # every result comes in a data span (``pyaichat.untrusted``), whatever the client's SDK
    assert all(c["text"].startswith("<data>\n") and c["text"].endswith("\n</data>") for c in out["calls"])
    assert calls["get_type"]["text"].startswith("<data>\ndf: DataFrame")
    assert "10" in calls["eval_expr"]["text"]
    assert "ran in the walled copy" in calls["run_python"]["text"]
    assert served.session.namespace["df"]["n"].tolist() == [1, 2, 3, 4]
    assert any(line.startswith("⇄ ts-sdk-client get_type(df)") for line in served.lines)


def test_the_typescript_sdk_client_over_stdio(node_modules: Path, served: Served) -> None:
    served.lines.clear()
    env = {**served.env(), "PATH": os.environ.get("PATH", "")}
    check(run_client(node_modules, env, "stdio", sys.executable), served)


def test_the_typescript_sdk_client_over_streamable_http(node_modules: Path, served: Served) -> None:
    served.lines.clear()
    out = run_client(node_modules, dict(os.environ), "http", served.url, served.token)
    check(out, served)
    refused = run_client(node_modules, dict(os.environ), "http", served.url, "wrong")
    assert "A valid bearer token is required" in refused.get("error", ""), refused
