"""Discovery records and the session's endpoint: private to the user, gone when serving stops, stale ones
ignored; a connection without the token, or from another user, gets nothing."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from pyaichat.configuration.config import Config
from pyaichat.ipc import ChannelClosed as LinkClosed
from pyaichat.mcpserve import discovery
from pyaichat.mcpserve.backend import LocalBackend
from pyaichat.mcpserve.endpoint import Endpoint
from pyaichat.mcpserve.gate import SessionGate
from pyaichat.mcpserve.link import SessionLink
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

NOBODY = 65534


def test_the_record_is_private_and_written_whole(tmp_path: Path) -> None:
    directory = str(tmp_path / "records")
    path = discovery.write_record({"pid": os.getpid(), "token": "t", "started_ts": 1.0}, directory)
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(Path(path).read_text())["token"] == "t"
    assert [p for p in os.listdir(directory) if p.endswith(".tmp")] == []
    assert [r["pid"] for r in discovery.read_records(directory)] == [os.getpid()]
    discovery.remove_record(path)
    assert discovery.read_records(directory) == []


def test_a_directory_opened_to_others_is_closed_again(tmp_path: Path) -> None:
    directory = tmp_path / "records"
    directory.mkdir(mode=0o755)
    os.chmod(directory, 0o777)
    discovery.ensure_private_dir(str(directory))
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_stale_records_are_skipped_and_removed_and_junk_is_ignored(tmp_path: Path) -> None:
    directory = str(tmp_path / "records")
    discovery.ensure_private_dir(directory)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    Path(directory, f"{dead.pid}.json").write_text(json.dumps({"pid": dead.pid, "started_ts": 2.0}))
    Path(directory, "junk.json").write_text("{not json")
    Path(directory, "list.json").write_text("[1, 2]")
    me = discovery.write_record({"pid": os.getpid(), "started_ts": 1.0}, directory)
    assert [r["path"] for r in discovery.read_records(directory)] == [me]
    assert not Path(directory, f"{dead.pid}.json").exists()


def test_records_go_to_the_runtime_directory_where_there_is_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert discovery.records_dir() == str(tmp_path / "pyaichat")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert discovery.records_dir() == str(tmp_path / "state" / "pyaichat" / "mcp")


@pytest.fixture
def endpoint(tmp_path: Path):
    session = Session(config=Config(audit=False))
    session.run("x = 41")
    gate = SessionGate()
    gate.attach()
    directory = discovery.ensure_private_dir(str(tmp_path / "r"))
    path = discovery.endpoint_path(directory)
    ep = Endpoint(LocalBackend(LocalRuntime(session), gate), "the-token")
    address = ep.start(path)
    yield ep, address, directory
    ep.stop()


def test_the_endpoint_answers_only_with_the_token(endpoint) -> None:
    ep, address, _ = endpoint
    with pytest.raises(LinkClosed):
        SessionLink.connect(address, "wrong-token", face="test")
    link = SessionLink.connect(address, "the-token", face="test")
    assert any(t["name"] == "eval_expr" for t in link.tools)
    path = address["unix"]

    async def face() -> None:
        said = await link.acall("k", "tester", "test", "eval_expr", {"expr": "x + 1"})
        assert said["text"] == "int\n42"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        ep.stop()
        with pytest.raises(LinkClosed):
            await link.acall("k", "tester", "test", "eval_expr", {"expr": "x"})

    anyio.run(face)
    assert not os.path.exists(path)
    with pytest.raises(LinkClosed):  # the old token, after stop
        SessionLink.connect(address, "the-token", face="test")


def test_a_paused_and_continued_session_serves_its_next_endpoint(endpoint) -> None:
    """/undo stops serving and pauses the process; /redo continues it and serves again at the same path. A
    thread of the stopped endpoint left blocked in accept() restarted it, on SIGCONT, on the number the new
    listener got, and took and closed one of the new face's connections (the face left, and the agent's
    request with it)."""
    import signal
    import time

    ep, address, _ = endpoint
    SessionLink.connect(address, "the-token", face="test")  # served: its accept thread waits for the next
    time.sleep(0.2)
    number = ep._listener.fileno()
    ep.stop()
    again = Endpoint(ep.backend, "the-token")
    again.start(address["unix"])
    try:
        assert again._listener is not None and again._listener.fileno() == number  # the number reused
        subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)  # as a checkpoint's /undo pauses the session; /redo continues it
        time.sleep(0.2)
        for _ in range(3):  # a face opens several: the stale thread waits behind the new one's for one
            link = SessionLink.connect(address, "the-token", face="test")
            assert any(t["name"] == "eval_expr" for t in link.tools)
    finally:
        again.stop()


def test_a_connection_that_says_nothing_or_too_much_is_closed(endpoint) -> None:
    _, address, _ = endpoint
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(address["unix"])
    sock.settimeout(10)
    try:
        sock.sendall(b"x" * (2 << 20))  # a line longer than any request may be, before any hello
        assert sock.recv(100) == b""
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while we were still sending: as refused
    sock.close()


OTHER_USER = """
import json, os, socket, sys
os.setgid(65534); os.setuid(65534)
record, endpoint = sys.argv[1], sys.argv[2]
seen = {}
try:
    open(record).read(); seen["record"] = "read"
except OSError as exc:
    seen["record"] = type(exc).__name__
try:
    s = socket.socket(socket.AF_UNIX); s.connect(endpoint); seen["endpoint"] = "connected"
except OSError as exc:
    seen["endpoint"] = type(exc).__name__
print(json.dumps(seen))
"""


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_on_the_machine_cannot_read_the_record_or_connect(endpoint, tmp_path: Path) -> None:
    _, address, directory = endpoint
    record = discovery.write_record({"pid": os.getpid(), "token": "the-token"}, directory)
    os.chmod(tmp_path, 0o755)  # the other user may walk down to the private directory, not into it
    command = [sys.executable, "-c", OTHER_USER, record, address["unix"]]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"record": "PermissionError", "endpoint": "PermissionError"}
