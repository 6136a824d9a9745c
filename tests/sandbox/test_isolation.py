"""The forked child: environment, descriptors, limits, deadline, death and oversized results."""

from __future__ import annotations

import os
import resource
import time

import pytest

from pyaichat.capabilities.sandbox import isolation_mode
from pyaichat.capabilities.sandbox.isolation import CHILD_NOFILE, fork_available, run_forked
from pyaichat.errors import CapabilityTimeout

pytestmark = pytest.mark.skipif(not fork_available(), reason="no fork on this platform")


def test_child_limits_and_descriptors(tmp_path) -> None:
    keep = open(tmp_path / "open-in-parent.txt", "w")  # noqa: SIM115  (must be open across the fork)
    keep_fd = keep.fileno()
    try:

        def job() -> dict:
            fds = (
                sorted(int(n) for n in os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else []
            )
            return {
                "ok": True,
                "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
                "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
                "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                "fds": fds,
                "env": len(os.environ),
            }

        result = run_forked(job, 2.0)
    finally:
        keep.close()
    assert result["fsize"] == 0
    assert 0 < result["cpu"] <= 3
    assert result["nofile"] <= 64
    assert result["env"] == 0
    if result["fds"]:
        assert keep_fd not in result["fds"]


def test_a_session_with_many_files_open_still_gives_the_child_a_small_descriptor_limit() -> None:
    # a test runner's worker or a notebook server has files open above the child's limit: the result pipe the
    # parent makes then gets a high number, which must not raise the child's limit (it is moved down instead)
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(100)]
    try:

        def job() -> dict:
            return {"ok": True, "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}

        result = run_forked(job, 5.0)
    finally:
        for fd in held:
            os.close(fd)
    assert max(held) > 64
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    expected = CHILD_NOFILE if hard == resource.RLIM_INFINITY else min(CHILD_NOFILE, hard)
    assert result == {"ok": True, "nofile": expected}


def test_file_writes_fail_in_the_child(tmp_path) -> None:
    target = tmp_path / "w.txt"

    def job() -> dict:
        try:
            with open(target, "w") as fh:
                fh.write("x" * 10)
            return {"ok": True, "wrote": True}
        except OSError as exc:
            return {"ok": True, "wrote": False, "err": type(exc).__name__}

    result = run_forked(job, 2.0)
    assert result["wrote"] is False or target.stat().st_size == 0


def test_deadline_kills_the_child() -> None:
    started = time.monotonic()
    with pytest.raises(CapabilityTimeout):
        run_forked(lambda: (time.sleep(30), {})[1], 0.3)
    assert time.monotonic() - started < 3


def test_child_death_is_reported() -> None:
    import signal

    result = run_forked(lambda: (os.kill(os.getpid(), signal.SIGKILL), {})[1], 2.0)
    assert result["ok"] is False
    assert "SIGKILL" in result["error"]


def test_oversized_result_is_refused() -> None:
    result = run_forked(lambda: {"ok": True, "text": "x" * (2 << 20)}, 2.0)
    assert result["ok"] is False
    assert "too large" in result["error"]


def test_parent_state_untouched_and_no_zombie() -> None:
    marker = {"v": 1}

    def job() -> dict:
        marker["v"] = 2
        return {"ok": True}

    before = _children()
    run_forked(job, 2.0)
    assert marker["v"] == 1
    _assert_no_child_left(before)


def _children() -> set[int]:
    """This process's children, running or zombie (their ``ppid`` in ``/proc``).

    Not ``waitpid(-1)``: it reaps or waits for *any* child, and a process running several test files (a
    pytest-xdist worker) may hold a server a fixture of another file started.
    """
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == me:
                found.add(int(entry))
    return found


def _assert_no_child_left(before: set[int]) -> None:
    """Answered children are collected in the background (the caller does not wait for their exit)."""
    deadline = time.monotonic() + 3
    while left := _children() - before:
        assert time.monotonic() < deadline, f"a sandbox child was left behind: {sorted(left)}"
        time.sleep(0.01)


def test_isolation_mode_setting() -> None:
    assert isolation_mode("inprocess") == "inprocess"
    assert isolation_mode("auto") == "fork"
    assert isolation_mode("fork") == "fork"


def test_fork_with_other_threads_alive() -> None:
    """A thread holding a lock at fork time must not deadlock the child (it only runs lock-free work)."""
    import threading

    lock = threading.Lock()
    lock.acquire()
    stop = threading.Event()
    t = threading.Thread(target=lambda: (stop.wait(5), lock.release()), daemon=True)
    t.start()
    try:
        assert run_forked(lambda: {"ok": True, "v": 1}, 2.0)["v"] == 1
    finally:
        stop.set()
        t.join()


def test_answered_children_are_collected_without_waiting_for_them() -> None:
    before = _children()
    for _ in range(5):
        assert run_forked(lambda: {"ok": True}, 2.0) == {"ok": True}
    _assert_no_child_left(before)


def test_a_child_that_closes_its_pipe_early_and_keeps_running_is_killed() -> None:
    def job() -> dict:
        for fd in range(3, 64):  # find the result pipe, answer, close it, and keep going
            try:
                os.write(fd, b'{"ok": true, "text": "forged"}')
                os.close(fd)
                break
            except OSError:
                continue
        time.sleep(30)
        return {"ok": True}

    before, started = _children(), time.monotonic()
    # what the job wrote comes back, flagged: it is not the child's own report
    assert run_forked(job, 5.0) == {"ok": True, "text": "forged", "channel": "written"}
    assert time.monotonic() - started < 2
    _assert_no_child_left(before)  # killed, not left sleeping
