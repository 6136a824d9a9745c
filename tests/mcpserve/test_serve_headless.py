"""``pyaichat mcp --existing FILE``: a Jupyter kernel served headless through the official SDK's stdio client.
Its tools run in the kernel through the kernel runtime; only read-only ones are offered (nobody is there to
approve); a call made while a cell runs is answered after the cell, never half-way through it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from serve_helpers import bridge_env, stdio_client, text

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))
from kernel_process import Kernel, start_kernel

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    kernel = start_kernel(tmp_path_factory.mktemp("kernel"))
    yield kernel
    kernel.kill()


@pytest.fixture(scope="module")
def client(kernel: Kernel) -> Iterator[object]:
    from jupyter_client.blocking.client import BlockingKernelClient

    kc = BlockingKernelClient(connection_file=str(kernel.connection_file))
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    yield kc
    kc.stop_channels()


def started(kc: object, code: str) -> str:
    """Send a cell and return once the kernel has begun running it (its input is broadcast)."""
    msg_id = kc.execute(code)  # type: ignore[attr-defined]
    while True:
        msg = kc.get_iopub_msg(timeout=60)  # type: ignore[attr-defined]
        if msg["parent_header"].get("msg_id") == msg_id and msg["header"]["msg_type"] == "execute_input":
            return msg_id


def test_a_kernel_is_served_read_only_and_a_call_waits_for_the_running_cell(
    kernel: Kernel, client: object, tmp_path: Path
) -> None:
    setup = "import time\nimport pandas as pd\ndf = pd.DataFrame({'k': [7, 8]})\nx = y = 0"
    reply = client.execute_interactive(setup)  # type: ignore[attr-defined]
    assert reply["content"]["status"] == "ok"

    async def agent() -> dict[str, object]:
        out: dict[str, object] = {}
        args = ("--existing", str(kernel.connection_file))
        async with stdio_client(bridge_env(tmp_path / "state"), "codex", args=args) as session:
            out["tools"] = [t.name for t in (await session.list_tools()).tools]
            out["type"] = text(await session.call_tool("get_type", {"expr": "df"}))
            out["picture"] = text(await session.call_tool("get_session_picture", {}))
            started(client, "x = 1\ntime.sleep(1.5)\ny = 2")
            out["during"] = text(await session.call_tool("eval_expr", {"expr": "(x, y)"}))
            out["propose"] = await session.call_tool("propose_code", {"code": "df = None"})
        return out

    out = anyio.run(agent)
    tools = out["tools"]
    assert isinstance(tools, list) and "get_repr" in tools and "propose_code" not in tools
    assert str(out["type"]).startswith("df: DataFrame")
    picture = str(out["picture"])
    # what serves it, which kernel, and that nothing here changes it
    served_as = f"pyaichat mcp serving a Jupyter kernel ({kernel.connection_file.name}) read-only"
    assert picture.startswith(served_as)
    assert "nothing here can change the session" in picture
    assert "(1, 2)" in str(out["during"])  # after the cell, whole: never (1, 0)
    propose = out["propose"]
    assert propose.is_error and "no tool named 'propose_code'" in text(propose)  # type: ignore[attr-defined]


def test_a_repl_attached_to_a_kernel_serves_it_over_a_connection_of_its_own(
    kernel: Kernel, client: object, tmp_path: Path
) -> None:
    from kernel_process import attach
    from serve_helpers import RecordingFrontEnd, controller_over, environment

    runtime = attach(kernel)
    ctrl = controller_over(runtime, RecordingFrontEnd())
    ctrl.handle("served_here = 'from the REPL'")
    with environment(tmp_path / "state"):
        ctrl.handle("/mcp on")
    service = ctrl.mcp(create=False)
    assert service is not None and service.serving, ctrl.frontend.notices()
    try:
        assert service.backend is not None and service.backend.runtime is not runtime  # its own connection

        async def agent() -> str:
            async with stdio_client(bridge_env(tmp_path / "state"), "codex") as session:
                return text(await session.call_tool("eval_expr", {"expr": "served_here"}))

        assert "from the REPL" in anyio.run(agent)
        ctrl.handle("served_here = 'still mine'")  # the person's own connection still works meanwhile
        assert runtime.call("eval_expr", {"expr": "served_here"}).text.endswith("'still mine'")
    finally:
        ctrl.handle("/mcp off")
        runtime.close()
    assert kernel.alive  # serving's connection is closed; the kernel stays
