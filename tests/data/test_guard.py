"""Stopping runaway code never breaks a library: the guard raises only in the user's own frames, and the
session picture calls nothing of unknown cost (a Python ``__len__``), shows a user ``__repr__`` only under a
small budget, and never asks again an object that overran."""

from __future__ import annotations

import functools
import threading
import time

import pytest

from pyaichat.capabilities import call, guard
from pyaichat.config import Config
from pyaichat.session import Session


def test_overtime_is_never_raised_inside_dask_locks_and_pools(partitions):
    """A trace-function exception landing in ``queue.get`` left Dask's lock released twice (``RuntimeError:
    release unlocked lock``). Library frames are not interrupted any more: ``len`` runs to its end."""
    partitions.seconds = 0.002
    errors: list[BaseException] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)
    try:
        for _ in range(6):
            ddf = partitions.frame(80)
            assert guard.guarded(functools.partial(len, ddf), budget=0.01) == 800
    finally:
        threading.excepthook = hook
    assert errors == []
    assert len(partitions.frame(8)) == 80  # the threaded scheduler still works


def test_user_code_is_still_stopped_at_its_budget():
    def spin():
        while True:
            pass

    started = time.perf_counter()
    with pytest.raises(guard.Overtime):
        guard.guarded(spin, budget=0.05)
    assert time.perf_counter() - started < 1


class RemoteLen:
    """A ``__len__`` that is a slow remote call, and a ``__repr__`` that is fine."""

    calls = 0

    def __len__(self) -> int:
        RemoteLen.calls += 1
        time.sleep(1)
        return 3

    def __repr__(self) -> str:
        return "RemoteLen()"


class SlowRepr:
    calls = 0

    def __repr__(self) -> str:
        SlowRepr.calls += 1
        time.sleep(0.5)  # in C: only abandoning it bounds it
        return "slow"


def test_the_session_picture_calls_no_python_len_and_bounds_a_slow_repr():
    remote, slow = RemoteLen(), SlowRepr()
    session = Session({"remote": remote, "slow": slow, "items": [1, 2, 3]})
    session.config = Config(audit=False)
    from pyaichat.capabilities.digest import session_digest

    started = time.perf_counter()
    first = session_digest(session, session.config)
    took = time.perf_counter() - started
    assert RemoteLen.calls == 0 and "RemoteLen: RemoteLen()" in first
    assert "SlowRepr: <repr of test_guard.SlowRepr took too long>" in first
    assert "items: list, 3 items: [1, 2, 3]" in first
    assert took < 0.4  # the 0.5 s repr was abandoned at its budget
    listed = call(session, "list_globals", {}).text
    assert "repr of test_guard.SlowRepr skipped: it was too slow before" in listed  # not asked again
    assert SlowRepr.calls == 1 and RemoteLen.calls == 0


def test_an_explicit_request_may_run_the_users_len_under_the_deadline():
    session = Session({"remote": RemoteLen()})
    session.config = Config(audit=False)
    before = RemoteLen.calls
    result = call(session, "get_type", {"expr": "remote"})
    assert result.ok and RemoteLen.calls == before + 1  # asked for: bounded, as before


def test_a_user_repr_that_computes_a_dask_frame_is_abandoned_not_broken(partitions):
    """get_repr on an object whose repr runs a Dask job: the capability deadline abandons it; the pool stays
    usable and no traceback appears."""
    partitions.seconds = 0.5
    ddf = partitions.frame(4)

    class Wrapper:
        def __repr__(self) -> str:
            return f"Wrapper({len(ddf)} rows)"

    session = Session({"w": Wrapper()})
    session.config = Config(audit=False, tool_timeout=0.3)
    errors: list[BaseException] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)
    try:
        result = call(session, "get_repr", {"expr": "w"})
        assert not result.ok and "Stopped after 0.3 s" in result.error
        time.sleep(2.5)  # the abandoned job finishes on its own
    finally:
        threading.excepthook = hook
    assert errors == []
    partitions.seconds = 0.0
    assert len(partitions.frame(2)) == 20
