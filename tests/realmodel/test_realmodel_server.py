"""The model server of this suite names its own death: a server that dies is reported with its signal and the
end of its log, not as "cannot reach the provider" in every test after it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from realmodel.local_server import LocalModelServer, ServerDied


def test_the_suites_server_answered_a_real_completion(model_server: LocalModelServer) -> None:
    # start() made one real completion before any test ran; the server is still the one it checked
    assert not model_server.dead() and model_server.check_completion(timeout=60) is not None


def test_a_server_killed_by_a_signal_is_named_with_the_signal_and_its_log(
    model_server: LocalModelServer, tmp_path: Path
) -> None:
    # model_server: skipped (or failed, in CI) where no server can run. This test starts its own (the
    # suite's lives on), checks it, then kills it as a CPU fault would
    server = LocalModelServer(log_path=tmp_path / "server.log")
    server.start()
    try:
        os.killpg(server.process.pid, signal.SIGSEGV)
        with pytest.raises(ServerDied) as info:
            server.check_completion(timeout=30)
    finally:
        server.stop()
    message = str(info.value)
    assert message.startswith("the llama.cpp server died with SIGSEGV during its first completion")
    assert str(server.log_path) in message and "llama" in message.lower()
