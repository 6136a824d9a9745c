"""``pyaichat mcp`` trusts only a session it can prove: a record planted by another process of the same user —
naming a live process that is not serving, a TCP endpoint of its own, or a socket it listens on itself — is
refused with one sentence, and the planted endpoint never hears the token; what a killed session left behind
is removed by the next reader."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from serve_helpers import bridge_env, environment, stdio_client, text

from pyaichat.mcpserve import discovery

pytestmark = pytest.mark.e2e

# An attacker's endpoint: it listens where it is told, and writes down everything anyone sends it.
LISTEN = """
import json, socket, sys
kind, where, heard = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "unix":
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(where)
else:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
sock.listen(8)
print(json.dumps(sock.getsockname()), flush=True)
while True:
    conn, _ = sock.accept()
    conn.settimeout(3)
    try:
        data = conn.recv(65536)
    except OSError:
        data = b""
    with open(heard, "ab") as fh:
        fh.write(data)
    try:
        conn.sendall(b'{"op":"welcome","protocol":1,"info":{},"tools":[]}\\n')
    except OSError:
        pass
    conn.close()
"""


class Planted:
    """An attacker process of this user: a live pid (``sleep``) and an endpoint of its own in a record."""

    def __init__(self, state: Path, kind: str, inside: bool = True) -> None:
        with environment(state):
            self.directory = discovery.ensure_private_dir(discovery.records_dir())
        self.victim = subprocess.Popen(["sleep", "120"])  # a live process that serves nothing
        self.heard = state / "heard.bin"
        self.heard.write_bytes(b"")
        place = self.directory if inside else str(state)
        where = os.path.join(place, f"{self.victim.pid}.sock")
        self.attacker = subprocess.Popen(
            [sys.executable, "-c", LISTEN, kind, where, str(self.heard)], stdout=subprocess.PIPE, text=True
        )
        assert self.attacker.stdout is not None
        address = json.loads(self.attacker.stdout.readline())
        endpoint = {"unix": address} if kind == "unix" else {"tcp": address}
        record = {
            "protocol": 1,
            "pid": self.victim.pid,
            "cwd": os.getcwd(),
            "started_ts": time.time(),
            "token": "stolen-by-nobody",
            "endpoint": endpoint,
            "where": "pyaichat REPL",
        }
        path = Path(self.directory) / f"{self.victim.pid}.json"
        path.write_text(json.dumps(record))
        path.chmod(0o600)

    def close(self) -> None:
        for proc in (self.attacker, self.victim):
            proc.kill()
            proc.wait(10)


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "state"


def agent_call(state: Path) -> tuple[str, bool, str]:
    async def agent() -> tuple[str, bool, str]:
        async with stdio_client(bridge_env(state)) as client:
            result = await client.call_tool("eval_expr", {"expr": "1 + 1"})
            listing = await client.call_tool("pyaichat_sessions", {})
            return text(result), bool(result.is_error), text(listing)

    return anyio.run(agent)


@pytest.mark.parametrize(
    ("kind", "inside", "why"),
    [
        (
            "unix",
            True,
            "the process listening on its socket is pid {attacker}, not the session's pid {victim}",
        ),
        ("tcp", True, "it names a TCP endpoint"),
        ("unix", False, "its socket is not the session's own in the private records directory"),
    ],
    ids=["another-process-socket", "tcp-endpoint", "socket-outside-the-directory"],
)
def test_a_planted_record_is_refused_in_one_sentence_and_hears_nothing(
    state: Path, kind: str, inside: bool, why: str
) -> None:
    planted = Planted(state, kind, inside)
    try:
        said, is_error, listing = agent_call(state)
    finally:
        planted.close()
    reason = why.format(attacker=planted.attacker.pid, victim=planted.victim.pid)
    sentence = f"pyaichat mcp refused the session record of pid {planted.victim.pid}: {reason}"
    assert is_error and said.startswith(sentence) and said.count(".") == 1, said  # one sentence
    assert sentence in listing
    assert planted.heard.read_bytes() == b""  # no hello, no token: nothing reached the planted endpoint


def test_what_a_killed_session_left_is_removed_by_the_next_reader(tmp_path: Path) -> None:
    directory = discovery.ensure_private_dir(str(tmp_path / "records"))
    gone = subprocess.Popen(["true"])
    gone.wait(10)
    alive = os.getpid()
    listener = socket.socket(socket.AF_UNIX)
    for pid in (gone.pid, alive):
        Path(directory, f"{pid}.json").write_text(json.dumps({"pid": pid, "started_ts": 1}))
        Path(directory, f"{pid}-http.log").write_text("")
    listener.bind(str(Path(directory, f"{gone.pid}.sock")))
    try:
        records = discovery.read_records(directory)
    finally:
        listener.close()
    assert [r["pid"] for r in records] == [alive]
    assert sorted(os.listdir(directory)) == sorted([f"{alive}.json", f"{alive}-http.log"])
