"""The same servers in every front end: IPython's ``%ai`` and a session in a Jupyter kernel (where the
servers run on the user's side, not in the kernel, and ``/tools`` says so). Piped mode is in
``test_mcp_real_servers``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp_helpers import fault

from fakes.recorder import Recorder
from fakes.sent import observed
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config

pytestmark = pytest.mark.e2e


def write_config(tmp_path: Path, servers: dict) -> None:
    """The user's config file (``XDG_CONFIG_HOME`` is the test's own), with these ``[mcp_servers]``."""
    lines = []
    for name, entry in servers.items():
        lines.append(f"[mcp_servers.{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items() if key != "env"]
        if "env" in entry:
            pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry["env"].items())
            lines.append(f"env = {{ {pairs} }}")
    directory = Path(os.environ["XDG_CONFIG_HOME"]) / "pyaichat"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text("\n".join(lines) + "\n")


def parent_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError("no PPid")


def test_ipython_ai_uses_the_servers_of_the_config_file(srv, tmp_path, monkeypatch, capsys) -> None:
    ipython = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    import pyaichat

    write_config(tmp_path, {"fault": fault(trust="read-only")})
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("PYAICHAT_MODEL", "openai/test")
    monkeypatch.setenv("PYAICHAT_API_BASE", srv.base_url)
    monkeypatch.setenv("PYAICHAT_AUDIT", "false")
    monkeypatch.setenv("NO_COLOR", "1")
    assert ipython.version_info >= (8,)
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("%load_ext pyaichat", store_history=True)
        srv.tool("fault__echo", {"text": "from IPython"}).text("The server said: from IPython.")
        result = shell.run_cell("%ai what does the server say", store_history=True)
        assert result.success, result.error_in_exec
        shell.run_cell("%ai /tools", store_history=True)
        out = capsys.readouterr().out
        assert "The server said: from IPython." in out
        assert (
            "  fault: ready, trust read-only, 16 tools, 1 call" in out
            and "they run here, on your side):" in out
        )
        tool = [m for m in srv.bodies[-1]["messages"] if m["role"] == "tool"]
        assert observed(tool[0]["content"]) == "from IPython"
    finally:
        from pyaichat.ipython import extension

        ext = extension.get(shell)
        pyaichat.unload_ipython_extension(shell)
        if ext is not None:
            ext.controller.assistant.close()  # the servers it started (none when it was never made)
        InteractiveShell.clear_instance()


def test_in_a_kernel_session_the_servers_run_on_the_users_side(srv, tmp_path) -> None:
    pytest.importorskip("ipykernel")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
    from kernel_process import attach, start_kernel

    pids = tmp_path / "pids"
    kernel = start_kernel(tmp_path)
    runtime = attach(kernel)
    try:
        config = Config(
            model="openai/test",
            api_base=srv.base_url,
            audit=False,
            request_timeout=10,
            mcp_servers={"fault": fault(trust="read-only", env={"FAULT_PID_FILE": str(pids)})},
        )
        runtime.settings.replace(config)
        rec = Recorder()
        ctrl = assemble(runtime, rec, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
        runtime.run("orders = [3, 1, 2]")
        srv.tool("fault__time_now").tool("get_repr", {"expr": "orders"}).text(
            "Three orders, at the server's time."
        )
        ctrl.ask("how many orders, and what time is it?")
        assert rec.of("answer")[-1].text == "Three orders, at the server's time."
        assert [(e.name, e.ok) for e in rec.of("tool_end")] == [("fault__time_now", True), ("get_repr", True)]
        (pid,) = map(int, pids.read_text().split())
        assert parent_of(pid) == os.getpid()  # started by this process, not by the kernel
        ctrl.handle("/tools")
        (page,) = rec.of("page")
        assert "MCP servers (1; they run here, on your side, not in the kernel):" in page.plain_text()
        ctrl.assistant.close()
    finally:
        runtime.close()
        kernel.kill()
