"""Stopping runaway code never breaks a library: the guard raises only in the user's own frames, and the
session picture calls nothing of unknown cost (a Python ``__len__``), shows a user ``__repr__`` only under a
small budget, and never asks again an object that overran."""

from __future__ import annotations

import functools
import threading
import time

import pytest

from pyaichat.capabilities import call, deadline
from pyaichat.capabilities.summary import type_name
from pyaichat.configuration.config import Config
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
            assert deadline.guarded(functools.partial(len, ddf), budget=0.01) == 800
    finally:
        threading.excepthook = hook
    assert errors == []
    assert len(partitions.frame(8)) == 80  # the threaded scheduler still works


def test_user_code_is_still_stopped_at_its_budget():
    def spin():
        while True:
            pass

    started = time.perf_counter()
    with pytest.raises(deadline.Overtime):
        deadline.guarded(spin, budget=0.05)
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
        time.sleep(5)  # in C: only abandoning it bounds it
        return "slow"


def test_the_session_picture_calls_no_python_len_and_bounds_a_slow_repr():
    remote, slow = RemoteLen(), SlowRepr()
    session = Session({"remote": remote, "slow": slow, "items": [1, 2, 3]})
    session.settings.replace(Config(audit=False))
    from pyaichat.capabilities.picture import session_picture

    started = time.perf_counter()
    first = session_picture(session, session.config)
    took = time.perf_counter() - started
    assert RemoteLen.calls == 0 and "RemoteLen: RemoteLen()" in first
    assert "SlowRepr: <repr of test_guard.SlowRepr took too long>" in first
    assert "items: list, 3 items: [1, 2, 3]" in first
    assert took < 2.5  # the 5 s repr was abandoned at its budget (with room for two busy cores)
    listed = call(session, "list_globals", {}).text
    assert "slow: test_guard.SlowRepr object (its own code skipped: it was too slow before)" in listed
    assert SlowRepr.calls == 0 and RemoteLen.calls == 0  # asked in the walled child only, never here


def test_an_explicit_request_runs_the_users_len_in_the_walled_child_under_its_budget():
    """Describing an object runs its own code in the walled child (issue 40: a read never runs the session's
    code here): bounded at the user-code budget there, said in one sentence, the object here never asked."""
    session = Session({"remote": RemoteLen()})
    session.settings.replace(Config(audit=False))
    before = RemoteLen.calls
    result = call(session, "get_type", {"expr": "remote"})
    assert result.ok and RemoteLen.calls == before
    assert result.text.splitlines()[-1].startswith(
        f"Its __len__ took too long (over {deadline.USER_CODE_BUDGET:g} s) and was abandoned"
    )


def test_a_user_repr_that_computes_a_dask_frame_is_abandoned_not_broken(partitions):
    """get_repr on an object whose repr runs a Dask job: the capability deadline abandons it; the pool stays
    usable and no traceback appears."""
    partitions.seconds = 0.5
    ddf = partitions.frame(4)

    class Wrapper:
        def __repr__(self) -> str:
            return f"Wrapper({len(ddf)} rows)"

    session = Session({"w": Wrapper()})
    session.settings.replace(Config(audit=False, tool_timeout=0.3))
    errors: list[BaseException] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)
    try:
        result = call(session, "get_repr", {"expr": "w"})
        # its own code runs in the walled child, which is killed at the deadline (here the pool is untouched)
        assert not result.ok and "did not finish within" in result.error, result
        time.sleep(2.5)  # the abandoned job finishes on its own
    finally:
        threading.excepthook = hook
    assert errors == []
    partitions.seconds = 0.0
    assert len(partitions.frame(2)) == 20


class Blocking:
    """A ``__len__`` that is a remote call which does not come back (until ``release``), a property that is
    another, and a ``__repr__`` that is fine: every call counted."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.calls: list[str] = []

    def __len__(self) -> int:
        self.calls.append("len")
        self.gate.wait(30)
        return 3

    @property
    def rows(self) -> int:
        self.calls.append("rows")
        self.gate.wait(30)
        return 3

    def __repr__(self) -> str:
        self.calls.append("repr")
        return "Blocking()"


def test_an_object_that_overran_is_asked_once_and_never_again_by_any_capability():
    """get_type asks the slow ``__len__`` once (in the walled child), bounded (not until the tool's deadline),
    and says so; then get_repr, list_globals, get_dir and eval_expr ask nothing of it — nor fork to — and say
    why in one sentence: the child forgets, this process remembers."""
    remote = Blocking()
    session = Session({"remote": remote})
    session.settings.replace(Config(audit=False, tool_timeout=5.0))
    try:
        typed = call(session, "get_type", {"expr": "remote"})
        assert typed.ok, typed.error  # abandoned at its budget, well before the 5 s deadline
        assert typed.text.splitlines()[-1] == (
            f"Its __len__ took too long (over {deadline.USER_CODE_BUDGET:g} s) and was abandoned; "
            "Blocking's own code is not asked again in this session."
        )
        sentence = (
            "Blocking's own code is not asked again: its __len__ took longer than "
            f"{deadline.USER_CODE_BUDGET:g} s earlier in this session."
        )
        shown = call(session, "get_repr", {"expr": "remote"})
        assert shown.ok and shown.text == f"{type_name(remote)}: {sentence}"
        assert call(session, "eval_expr", {"expr": "remote"}).text == f"{type_name(remote)}: {sentence}"
        assert call(session, "list_globals", {}).text.endswith(
            "remote: test_guard.Blocking object (its own code skipped: it was too slow before)"
        )
        assert call(session, "get_dir", {"expr": "remote"}).ok
        again = call(session, "get_type", {"expr": "remote"})
        assert again.ok and again.text == f"{type_name(remote)}: {sentence}"
        assert remote.calls == []  # asked in the walled child only, never in the session
    finally:
        remote.gate.set()


def test_a_property_that_does_not_come_back_is_stopped_at_the_deadline_once_and_never_run_here():
    """A property is the object's own code: it runs in the walled child, which is killed at the tool's
    deadline — once. This process remembers that attribute: asked again, by any capability, it is refused at
    once with the reason, while the object's other reads still work."""
    remote = Blocking()
    session = Session({"remote": remote})
    session.settings.replace(Config(audit=False, tool_timeout=1.0))
    try:
        read = call(session, "get_repr", {"expr": "remote.rows"})
        assert not read.ok and "did not finish within" in read.error, read
        sentence = (
            "Blocking's own code is not asked again: its .rows took longer than 1 s earlier in this session."
        )
        for tool in ("get_repr", "eval_expr", "get_type"):
            started = time.monotonic()
            again = call(session, tool, {"expr": "remote.rows"})
            assert not again.ok and sentence in again.error, (tool, again)
            assert time.monotonic() - started < 0.5  # neither waited for nor forked
        assert call(session, "get_type", {"expr": "remote"}).ok  # the object itself is still read
        # an expression that would read it first is refused too; one that fails before reaching it, not
        assert sentence in (call(session, "eval_expr", {"expr": "remote.rows + 1"}).error or "")
        assert call(session, "eval_expr", {"expr": "[1][5] + remote.rows"}).error == "[1] has no item 5."
        assert remote.calls == []
    finally:
        remote.gate.set()


class Counted:
    """A ``__len__`` and ``__repr__`` written in Python that answer at once, and a property: counted."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __len__(self) -> int:
        self.calls.append("len")
        return 4

    def __repr__(self) -> str:
        self.calls.append("repr")
        return "Counted(4)"

    @property
    def total(self) -> int:
        self.calls.append("total")
        return 10


def test_get_type_and_get_repr_ask_the_object_once_and_run_no_property():
    counted = Counted()
    session = Session({"counted": counted})
    session.settings.replace(Config(audit=False))
    typed = call(session, "get_type", {"expr": "counted"})
    assert typed.ok and typed.text.splitlines()[-1] == "length: 4"
    shown = call(session, "get_repr", {"expr": "counted"})
    assert shown.ok and shown.text == f"{type_name(counted)}, 4 items\nCounted(4)", shown.text
    assert counted.calls == []  # its __len__ and __repr__ ran in the walled child: the property never


def test_a_container_subclass_is_read_through_its_base_type():
    calls: list[str] = []

    class Remote(list):
        def __len__(self) -> int:
            calls.append("len")
            return 0

        def __iter__(self):
            calls.append("iter")
            return iter(())

    rows = Remote([1, 2, 3])
    session = Session({"rows": rows})
    session.settings.replace(Config(audit=False))
    assert call(session, "get_type", {"expr": "rows"}).text.splitlines()[-1] == "length: 3"
    shown = call(session, "get_repr", {"expr": "rows"}).text
    assert shown == f"{type_name(rows)}, 3 items of int\nRemote([1, 2, 3])", shown
    assert f"rows: {type_name(rows)}, 3 items: Remote([1, 2, 3])" in call(session, "list_globals", {}).text
    assert calls == []
