"""``pyaichat --server URL`` against a real Jupyter Server on 127.0.0.1: the kernel runtime over the kernel
websocket does what it does over ZMQ — inputs run in the kernel, capabilities run (bounded, masked, audited)
there — and a kernel pyaichat started is shut down at exit while one it attached to keeps running."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from server_process import JupyterServer

from conftest import api_for, attach_to
from fakes.recorder import Recorder
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.runtime import KernelUnavailable
from pyaichat.runtime.jupyter_server.kernel_socket import V1
from pyaichat.runtime.jupyter_server.kernels import start
from pyaichat.runtime.kernel_connection import OUTPUT_LOST

pytestmark = pytest.mark.e2e


def test_inputs_and_capabilities_run_in_the_servers_kernel(jupyter: JupyterServer, capsys) -> None:
    kernel_id = jupyter.start_kernel()  # as a notebook would have, through the REST API
    runtime = attach_to(jupyter, kernel_id)
    try:
        assert runtime.kernel.client.subprotocol == V1
        line = runtime.describe()
        assert line.startswith(f"attached to kernel {kernel_id[:8]} (python3, python 3")
        assert line.endswith(f"on {jupyter.url}; Ctrl-D detaches and leaves it running")
        setup = "import os\nsales = [3, 5, 8]\napi_token = 'sk-live-abcdefghijklmnopqrstuv'\nsum(sales)"
        result = runtime.run(setup)
        assert result.ok and result.output.strip() == "16"
        assert "16" in capsys.readouterr().out
        typed = runtime.call("get_type", {"expr": "sales"})
        assert typed.ok and typed.text.startswith("sales: list")
        secret = runtime.call("get_repr", {"expr": "api_token"})
        assert "sk-live" not in secret.text and "redacted" in secret.text
        assert "sales" in runtime.picture()
        assert runtime.call("eval_expr", {"expr": "os.getpid()"}).text != str(os.getpid())  # not this process
        failed = runtime.run("1/0")
        assert not failed.ok and runtime.last_error is not None
        assert runtime.last_error.type_name == "ZeroDivisionError"
        # ghost-text facts, a proposal's preview, the proposal run, and /undo: each where the data is
        facts = runtime.suggestion_facts("total = sum(sales")
        assert any("sales" in line for line in facts["facts"]), facts
        preview = runtime.preview("extra = sales + [13]")
        assert "extra" in str(preview)
        assert runtime.run_proposal("extra = sales + [13]").ok
        undone, said = runtime.undo()
        assert undone and "extra" in said
        assert runtime.run("'extra' in dir()").output.strip() == "False"
        # the kernel's own completion (its first imports jedi: on a busy machine longer than pyaichat waits)
        completions = [c.text for _ in range(3) for c in runtime.complete("sal", 3)]
        assert completions[:1] == ["sales"]
    finally:
        runtime.close()
    assert kernel_id in jupyter.kernel_ids()  # detaching leaves a kernel pyaichat did not start


def test_a_kernel_pyaichat_starts_is_shut_down_at_exit_unless_kept(jupyter: JupyterServer, capsys) -> None:
    before = jupyter.kernel_ids()
    runtime = start(api_for(jupyter), "python3", Config(audit=False, color=False))
    started = runtime.kernel.server.entry.id
    assert started not in before and started in jupyter.kernel_ids()
    assert "Ctrl-D exits and shuts it down" in runtime.describe()
    assert runtime.run("2 ** 10").output.strip() == "1024"
    runtime.close()
    assert started not in jupyter.kernel_ids()

    kept = start(api_for(jupyter), None, Config(audit=False, color=False), keep=True)  # the default spec
    kept_id = kept.kernel.server.entry.id
    jupyter.started.append(kept_id)
    assert "Ctrl-D leaves it running (--keep)" in kept.describe()
    capsys.readouterr()
    kept.close()
    assert kept_id in jupyter.kernel_ids()
    said = capsys.readouterr().err
    assert f"--kernel-id {kept_id[:8]} attaches to it again" in said


def test_the_audit_and_the_sandbox_are_the_kernels(jupyter: JupyterServer) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id, audit=True)
    try:
        runtime.run("numbers = list(range(10))")
        assert runtime.call("run_python", {"code": "print(sum(numbers))"}).text.strip().startswith("45")
        where, entries = runtime.audit_log(5)
        assert where.startswith(str(jupyter.root))  # written on the server's machine, by the kernel
        assert entries[-1]["capability"] == "run_python" and entries[-1]["origin"] == "assistant"
        walls = runtime.sandbox_walls()
        assert walls and "run_python" in walls[0]
    finally:
        runtime.close()


def test_ctrl_c_interrupts_the_kernel_through_the_server(jupyter: JupyterServer, capsys) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    try:
        runtime.run("import time\nkept = 7")
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        started = time.monotonic()
        result = runtime.run("time.sleep(30)\nafter = 1")
        assert time.monotonic() - started < 15
        assert result.interrupted and "KeyboardInterrupt" in capsys.readouterr().err
        assert runtime.run("kept * 6").output.strip() == "42"
        assert runtime.run("'after' in dir()").output.strip() == "False"
    finally:
        runtime.close()


def test_a_restart_under_you_says_the_variables_are_gone_and_offers_the_snapshot(
    jupyter: JupyterServer, capsys
) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    try:
        runtime.run("rows = [1, 2, 3]")
        saved = runtime.save_variables(None)  # /snapshot
        assert saved.startswith("Saved 1 variable to ")
        jupyter.rest("POST", f"api/kernels/{kernel_id}/restart", {})  # someone restarts it (from a notebook)
        jupyter.wait_state(kernel_id, "idle", 60)
        capsys.readouterr()
        # The first input after the restart learns of it and says so. What that input prints may be lost
        # while the server's new connection to the new kernel joins (then it says that too: the test below),
        # so only the second input's output is read.
        runtime.run("1")
        said = capsys.readouterr().err
        assert said.startswith("The kernel restarted: its variables are gone. /resume brings back those of")
        assert runtime.run("'rows' in dir()").output.strip() == "False"
        assert runtime.load_variables(None).startswith("Loaded")  # /resume's part: the variables come back
        assert runtime.run("rows").output.strip() == "[1, 2, 3]"
        assert runtime.call("get_type", {"expr": "rows"}).ok  # the helper is there again
    finally:
        runtime.close()


def test_an_input_right_after_someone_elses_restart_shows_its_output_or_says_it_was_lost(
    jupyter: JupyterServer, capsys
) -> None:
    """The server tells no other client of a restart, and its subscription to the new kernel's output joins
    a few hundred milliseconds later: an input sent at once runs there, and what it printed either arrives
    or the person is told it was lost — never a silent nothing (it happens in about one round of four)."""
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    try:
        runtime.run("1")
        for round_ in range(5):
            jupyter.rest("POST", f"api/kernels/{kernel_id}/restart", {})
            jupyter.wait_state(kernel_id, "idle", 60)
            capsys.readouterr()
            result = runtime.run(f"print('round {round_}')")
            said = capsys.readouterr().err
            assert said.startswith("The kernel restarted: its variables are gone."), said
            assert f"round {round_}" in result.output or OUTPUT_LOST in said, (said, result.output)
            # and the next input's output arrives
            assert runtime.run("print('after')").output.strip() == "after"
    finally:
        runtime.close()


def test_a_kernel_that_dies_while_running_is_restarted_by_the_server(jupyter: JupyterServer) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    try:
        runtime.run("before = 1")
        with pytest.raises(KernelUnavailable, match="restarted while running this input; its variables are"):
            runtime.run("import os\nos._exit(1)")
        assert runtime.run("'before' in dir()").output.strip() == "False"
        assert runtime.run("after = 2\nafter").output.strip() == "2"
    finally:
        runtime.close()


def test_a_kernel_shut_down_under_you_is_one_sentence(jupyter: JupyterServer) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    try:
        runtime.run("a = 1")
        jupyter.rest("DELETE", f"api/kernels/{kernel_id}")  # shut down from a notebook's Kernel menu
        deadline = time.monotonic() + 30
        while runtime.kernel.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(KernelUnavailable) as caught:
            runtime.run("a")
        assert str(caught.value) == f"The server no longer runs kernel {kernel_id[:8]} (it was shut down)."
        result = runtime.call("get_type", {"expr": "a"})
        assert not result.ok and result.error == str(caught.value)
    finally:
        runtime.close()


def test_status_shows_the_link_and_its_round_trip(jupyter: JupyterServer) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = attach_to(jupyter, kernel_id)
    front = Recorder()
    ctrl = assemble(runtime, front)
    try:
        runtime.call("get_type", {"expr": "len"})
        ctrl.handle("/status")
        text = front.of("notice")[-1].text
        lines = text.splitlines()
        assert lines[0].startswith(f"attached to kernel {kernel_id[:8]}")
        assert lines[1].startswith("Kernel: ")  # idle, or still busy with the call's own bookkeeping
        assert lines[1].endswith(", last activity just now, 1 connection(s) on the server.")
        assert "Link: websocket (v1.kernel.websocket.jupyter.org), " in lines[2]
        assert " ms a round trip to the server; a request to pyaichat's helper in the kernel: " in lines[2]
        assert jupyter.token not in text
    finally:
        runtime.close()


def test_the_legacy_json_protocol(tmp_path: Path) -> None:
    """A server that does not offer ``v1.kernel.websocket.jupyter.org`` (older ones, a gateway)."""
    from server_process import start_server

    only_legacy = ("--ZMQChannelsWebsocketConnection.kernel_ws_protocol=",)
    legacy = start_server(tmp_path / "legacy", extra=only_legacy)
    try:
        kernel_id = legacy.start_kernel()
        runtime = attach_to(legacy, kernel_id)
        try:
            assert runtime.kernel.client.subprotocol is None
            assert runtime.run("print('old', 'style'); 6 * 7").output == "old style\n42\n"
            assert runtime.call("get_repr", {"expr": "list(range(3))"}).text.endswith("[0, 1, 2]")
        finally:
            runtime.close()
    finally:
        legacy.stop()


def test_kernel_messages_keep_their_buffers_in_the_legacy_form() -> None:
    from pyaichat.runtime.jupyter_server.socket_channels import decode_legacy

    header = {"msg_id": "m", "msg_type": "comm_msg", "date": "2026-01-01T00:00:00Z"}
    msg = {"header": header, "parent_header": {}, "content": {"a": 1}, "channel": "iopub"}
    body = json.dumps(msg).encode()
    import struct

    frame = struct.pack("!3I", 2, 12, 12 + len(body)) + body + b"\x00\x01"
    msg = decode_legacy(frame)
    assert msg["channel"] == "iopub" and msg["content"] == {"a": 1} and msg["buffers"] == [b"\x00\x01"]
    assert msg["msg_type"] == "comm_msg"
