"""The suggestion model's calls run in a helper process of their own: started with the first suggestion (never
at start-up), so that litellm never loads in the REPL for them; gone when the REPL ends — at Ctrl-D, and when
the REPL is killed outright (no orphan holding litellm's memory).

Every wait is for something to happen (a screen, a request at the server, a process to go), bounded."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

pexpect = pytest.importorskip("pexpect")

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import NEW_PY, leave, output, spawn_suggesting  # noqa: E402
from timeouts import HANG_GUARD  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from /proc"),
]

BOUND = 60.0  # seconds: the helper's first answer pays litellm's import there


def helpers_of(parent: int) -> list[int]:
    """Live processes below ``parent`` running the suggestion helper: its child, or its grandchild where the
    REPL is the supervisor that keeps checkpoints and the session is the supervisor's child (issue 48)."""
    parents: dict[int, int] = {}
    helpers = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        if fields[0] != "Z" and b"infill_helper" in command:
            helpers.append(int(entry))
    found = []
    for pid in helpers:
        above = parents.get(pid)
        for _ in range(3):  # the session, then the supervisor
            if above == parent:
                found.append(pid)
                break
            above = parents.get(above) if above is not None else None
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def wait_gone(pid: int, bound: float) -> bool:
    deadline = time.monotonic() + bound
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_for_requests(server: ScriptedServer, n: int) -> None:
    deadline = time.monotonic() + BOUND
    while len(server.requests) < n:
        assert time.monotonic() < deadline, f"the server got {len(server.requests)} of {n} requests"
        time.sleep(0.02)


def test_the_helper_starts_with_the_first_suggestion_and_ends_with_the_session(tmp_path):
    with ScriptedServer() as server:
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            child.send("x = 41\r")  # one write: no pause with code on the line, nothing to suggest
            child.expect(NEW_PY)
            assert helpers_of(child.pid) == []  # suggestions are on, but nothing was asked yet
            server.text(" + 1  # the answer")
            child.send("y = x")
            child.expect_exact("+ 1  # the answer")  # the ghost text, from the helper's request
            (helper,) = helpers_of(child.pid)
            child.sendcontrol("c")
            child.expect(NEW_PY)
            child.send("import sys; print('litellm' in sys.modules)\r")
            child.expect(output("False"))  # the REPL never loaded litellm for the suggestion
            child.expect(NEW_PY)
            child.send("/suggest\r")
            child.expect(NEW_PY)
            assert f"helper process (pid {helper}" in child.before
            child.send("/cost\r")
            child.expect(NEW_PY)
            assert "Suggestions: 1 request(s), 11 prompt + 7 completion tokens" in child.before
            leave(child)
        finally:
            child.close()
        assert wait_gone(helper, 10.0), "the helper outlived the session"


def test_no_helper_is_left_behind_when_the_repl_is_killed(tmp_path):
    with ScriptedServer() as server:
        server.fault("slow", delay=HANG_GUARD)  # a request in flight when the REPL dies
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            child.send("total = 6 * ")
            wait_for_requests(server, 1)
            (helper,) = helpers_of(child.pid)
            os.kill(child.pid, signal.SIGKILL)  # no exit handler, no closing of anything
            assert wait_gone(helper, 30.0), "the helper was orphaned"
        finally:
            child.close(force=True)
