"""``pyaichat --server URL`` as a person runs it (piped here; the terminal in ``test_server_pty``), and
``pyaichat mcp --server URL`` as an outside agent starts it: against a real Jupyter Server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_process import JupyterServer

pytestmark = pytest.mark.e2e


def pyaichat(
    tmp_path: Path, *args: str, stdin: str = "", token: str | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "JUPYTER_TOKEN"))}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    if token is not None:
        env["JUPYTER_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def test_piped_input_runs_in_the_servers_kernel_and_the_token_is_nowhere(
    jupyter: JupyterServer, tmp_path: Path
) -> None:
    kernel_id = jupyter.start_kernel()
    for other in jupyter.kernel_ids() - {kernel_id}:  # one kernel running: it is the one
        jupyter.rest("DELETE", f"api/kernels/{other}")
    lines = "x = 41\nx + 1\n/status\n/inspect x\n/snapshot\n/history\n"
    done = pyaichat(tmp_path, "--server", jupyter.url, stdin=lines, token=jupyter.token)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("42\n")
    assert f"attached to kernel {kernel_id[:8]}" in done.stdout  # /status
    assert " ms a round trip to the server" in done.stdout
    assert "x: int" in done.stdout  # /inspect ran in the kernel
    assert "Saved 1 variable to" in done.stdout
    # the token: not in what was printed, nor in any file pyaichat or its helper in the kernel wrote
    assert jupyter.token not in done.stdout + done.stderr
    written = [*(tmp_path / "state").rglob("*"), *(jupyter.root / "kernel-state").rglob("*")]
    files = [p for p in written if p.is_file()]
    assert any(p.name == "audit.jsonl" for p in files), files
    for path in files:
        assert jupyter.token.encode() not in path.read_bytes(), path
    assert kernel_id in jupyter.kernel_ids()  # detached, still running


def test_list_and_choosing_a_kernel(jupyter: JupyterServer, tmp_path: Path) -> None:
    plain = jupyter.start_kernel()
    notebook = jupyter.open_notebook("work/sales.ipynb")
    listed = pyaichat(tmp_path, "--server", jupyter.url, "--list", token=jupyter.token)
    assert listed.returncode == 0
    assert listed.stdout.startswith(f"Kernels on {jupyter.url}:\n  kernel    name     notebook ")
    assert f"{notebook[:8]}  python3  work/sales.ipynb" in listed.stdout and plain[:8] in listed.stdout

    several = pyaichat(tmp_path, "--server", jupyter.url, stdin="1\n", token=jupyter.token)
    assert several.returncode == 1
    assert several.stderr.startswith(f"pyaichat: {jupyter.url} runs ")
    assert "kernels: choose one with --kernel-id or --notebook (--list shows them)." in several.stderr

    by_notebook = pyaichat(
        tmp_path,
        "--server",
        jupyter.url,
        "--notebook",
        "sales.ipynb",
        stdin="import os\nkind = 'nb'\n",
        token=jupyter.token,
    )
    assert by_notebook.returncode == 0, by_notebook.stderr
    by_id = pyaichat(
        tmp_path, "--server", jupyter.url, "--kernel-id", notebook[:6], stdin="kind\n", token=jupyter.token
    )
    assert by_id.stdout == "'nb'\n"
    # the token as `jupyter server` prints it, in the address itself
    in_url = pyaichat(
        tmp_path, "--server", f"{jupyter.url}lab?token={jupyter.token}", "--kernel-id", plain, stdin="1+1\n"
    )
    assert in_url.stdout == "2\n", in_url.stderr


def test_a_kernel_started_for_the_session_goes_with_it(jupyter: JupyterServer, tmp_path: Path) -> None:
    before = jupyter.kernel_ids()
    done = pyaichat(
        tmp_path, "--server", jupyter.url, "--kernel", "python3", stdin="6 * 7\n", token=jupyter.token
    )
    assert done.returncode == 0 and done.stdout == "42\n", done.stderr
    assert jupyter.kernel_ids() == before  # shut down at exit

    kept = pyaichat(
        tmp_path, "--server", jupyter.url, "--kernel", "--keep", stdin="k = 1\n", token=jupyter.token
    )
    assert kept.returncode == 0, kept.stderr
    (new,) = jupyter.kernel_ids() - before
    jupyter.started.append(new)
    assert f"pyaichat --server {jupyter.url} --kernel-id {new[:8]} attaches to it again." in kept.stderr


@pytest.mark.parametrize(
    ("args", "token", "code", "said"),
    [
        ((), "wrong-token", 1, "refused the token (wrong or expired): get the current one"),
        ((), None, 1, "wants a token: set JUPYTER_TOKEN, or run pyaichat in a terminal to be asked."),
        (("--kernel", "nosuch"), "TOKEN", 1, "The server has no kernelspec 'nosuch' (it has: python3)."),
        (("--kernel-id", "feedface"), "TOKEN", 1, "runs no kernel feedface ("),
        (("--existing",), "TOKEN", 2, "--existing reaches a kernel through its connection file and --server"),
        (("--keep",), "TOKEN", 2, "--keep is for a kernel pyaichat starts (--kernel NAME)"),
    ],
)
def test_what_people_get_wrong_is_one_sentence(
    jupyter: JupyterServer, tmp_path: Path, args: tuple[str, ...], token: str | None, code: int, said: str
) -> None:
    token = jupyter.token if token == "TOKEN" else token
    done = pyaichat(tmp_path, "--server", jupyter.url, *args, token=token)
    assert done.returncode == code
    assert done.stderr.startswith("pyaichat: ") and said in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_flag_of_server_without_a_server(tmp_path: Path) -> None:
    done = pyaichat(tmp_path, "--kernel-id", "abc")
    assert done.returncode == 2 and done.stderr == "pyaichat: --kernel-id goes with --server URL.\n"


def test_an_outside_agent_reads_the_kernel_through_pyaichat_mcp_server(
    jupyter: JupyterServer, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    import anyio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcpserve"))
    from serve_helpers import bridge_env, stdio_client, text

    kernel_id = jupyter.start_kernel()
    with_data = pyaichat(
        tmp_path,
        "--server",
        jupyter.url,
        "--kernel-id",
        kernel_id,
        stdin="import pandas as pd\nsales = pd.DataFrame({'city': ['Oslo', 'Lima'], 'qty': [4, 11]})\n",
        token=jupyter.token,
    )
    assert with_data.returncode == 0, with_data.stderr
    env = bridge_env(tmp_path / "mcp-state")
    env["JUPYTER_TOKEN"] = jupyter.token

    async def agent() -> dict[str, object]:
        args = ("--server", jupyter.url, "--kernel-id", kernel_id)
        async with stdio_client(env, "codex", args=args) as session:
            return {
                "tools": [t.name for t in (await session.list_tools()).tools],
                "type": text(await session.call_tool("get_type", {"expr": "sales"})),
                "repr": text(await session.call_tool("get_repr", {"expr": "sales"})),
                "picture": text(await session.call_tool("get_session_picture", {})),
            }

    out = anyio.run(agent)
    tools = out["tools"]
    assert isinstance(tools, list) and "get_repr" in tools and "propose_code" not in tools  # read-only
    assert str(out["type"]).startswith("sales: DataFrame")
    assert "Lima" in str(out["repr"])
    assert str(out["picture"]).startswith(
        f"pyaichat mcp serving a Jupyter kernel (attached to kernel {kernel_id[:8]}"
    )
    assert kernel_id in jupyter.kernel_ids()


def test_status_in_a_plain_session(tmp_path: Path) -> None:
    done = pyaichat(tmp_path, stdin="/status\n")
    assert done.returncode == 0 and done.stdout.startswith("In this process.\nModel: ")
