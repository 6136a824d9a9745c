"""Every operation of ``runtime.kernel_link.OPERATIONS`` reaches the local runtime inside a real kernel and
answers from there; the tools and the sandbox's walls a kernel session reports are the kernel's own."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kernel_process import attach, kernel_eval, start_kernel

from pyaichat.capabilities import get
from pyaichat.capabilities.toolbox import Toolbox
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.runtime.kernel_link import BY_NAME
from runtime_examples import SETUP, invoke, steps


def test_every_operation_is_answered_by_the_runtime_inside_the_kernel(runtime, tmp_path: Path) -> None:
    replies: list[tuple[str, dict[str, Any]]] = []
    exchange = runtime.exchange

    def watched(request: dict[str, Any], timeout: float) -> dict[str, Any]:
        reply = exchange(request, timeout)
        replies.append((request["op"], reply))
        return reply

    runtime.exchange = watched
    runtime.settings.replace(Config(audit=True, color=False))
    examples = steps(tmp_path)
    assert {name for name, _ in examples if name != "code"} == set(BY_NAME)
    answers: dict[str, Any] = {}
    for name, arguments in examples:
        if name == "code":
            assert runtime.run(arguments).ok
            continue
        answers[name] = invoke(runtime, name, arguments)
        op, reply = replies[-1]
        assert op == name and "value" in reply, (name, reply)  # answered in the kernel, no fallback used
    assert answers["call"].ok and answers["call"].text.endswith("41")  # get_repr of x, the last call
    assert isinstance(answers["tools"], Toolbox) and answers["tools"].get("get_type") is not None
    assert ("items", "list") in answers["user_names"]
    assert answers["history"][-1].source == SETUP  # recorded in the kernel as it ran
    assert answers["undo"][0] and "x" in answers["undo"][1]
    assert kernel_eval(runtime, "x") == "41"  # undone in the kernel
    assert Path(tmp_path / "link-test.snapshot").exists()  # written by the kernel
    path, entries = answers["audit_log"]
    assert "kernel-state" in path and [e["capability"] for e in entries] == ["get_type", "get_repr"]


def test_arguments_that_cannot_travel_are_one_sentence(runtime) -> None:
    result = runtime.call("get_type", {"expr": object()})
    assert not result.ok and "cannot be sent to the kernel" in (result.error or "")
    assert runtime.call("get_type", {"expr": "1"}).ok  # the link is still in order


PLUGIN = '''
from pyaichat.capabilities import capability


@capability("kernel_pid")
def kernel_pid(ctx, args):
    """The process id of the kernel. A plugin installed in the kernel's environment only."""
    import os

    return f"pid {os.getpid()}"
'''


def _plugin_only_the_kernel_has(directory: Path) -> Path:
    site = directory / "kernel-site"
    info = site / "kernel_only_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "kernel_only_plugin.py").write_text(PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kernel-only-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pyaichat.capabilities]\nkernel_pid = kernel_only_plugin\n")
    return site


def test_the_tools_and_walls_of_a_kernel_session_are_the_kernels(tmp_path: Path, srv) -> None:
    from test_kernel_assistant import controller

    site = _plugin_only_the_kernel_has(tmp_path)
    kernel = start_kernel(tmp_path, env={**os.environ, "PYTHONPATH": str(site)})
    runtime = attach(kernel)
    try:
        box = runtime.tools()
        tool = box.get("kernel_pid")
        assert tool is not None and tool.source == "plugin kernel-only-plugin"
        assert get("kernel_pid") is None  # this process has no such plugin
        walls = kernel_eval(
            runtime, "__import__('pyaichat.capabilities.sandbox', fromlist=['_']).walls_report('auto')"
        )
        assert runtime.sandbox_walls() == eval(walls)  # the kernel's own report, as it computes it there

        ctrl = controller(runtime, srv)
        dispatch(ctrl, "/tools")
        (page,) = ctrl.frontend.of("page")
        rows = dict(page.sections[0].rows)
        assert "[plugin kernel-only-plugin]" in rows["kernel_pid"]

        srv.tool("kernel_pid", {}).text("The kernel runs as that process.")
        ctrl.ask("which process is the kernel?")
        first, second = srv.bodies
        assert "kernel_pid" in [t["function"]["name"] for t in first["tools"]]
        assert f"pid {kernel.proc.pid}" in json.dumps(second["messages"][-1])
    finally:
        runtime.close()
        kernel.kill()
