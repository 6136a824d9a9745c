"""The rule for outside calls: they run while the session is idle, one at a time, and the person comes first.

Every wait here is ordered by events, not by sleeping: a test passes or fails on what the gate allows, never
on how fast a thread happens to run.
"""

from __future__ import annotations

import threading

import pytest

from pyaichat.mcpserve.gate import BUSY, SessionBusy, SessionGate

WAIT = 10.0  # a bound for a wait that must end (a failure, never a pass, depends on it)


def attached() -> SessionGate:
    gate = SessionGate()
    gate.attach()
    return gate


def test_before_serving_the_gate_is_a_counter_and_refuses_outside_calls() -> None:
    gate = SessionGate()
    with gate:
        assert gate.busy
        with gate:  # nested: a %ai cell runs /mcp through the controller
            assert gate.busy
        assert gate.busy
    assert not gate.busy
    with pytest.raises(SessionBusy), gate.outside(0):
        pass


def test_an_idle_session_answers_at_once() -> None:
    gate = attached()
    ran = []
    with gate.outside(0):
        ran.append(1)
    assert ran == [1]


def test_a_call_during_the_persons_input_waits_its_bound_then_is_told_busy() -> None:
    gate = attached()
    gate.enter()
    try:
        with pytest.raises(SessionBusy) as info, gate.outside(0.05):
            pass
        assert str(info.value) == BUSY
    finally:
        gate.leave()
    with gate.outside(0):  # and idle again afterwards
        pass


def test_a_waiting_call_runs_as_soon_as_the_input_ends() -> None:
    gate = attached()
    gate.enter()
    waiting, ran = threading.Event(), threading.Event()

    def call() -> None:
        waiting.set()
        with gate.outside(WAIT):
            ran.set()

    worker = threading.Thread(target=call)
    worker.start()
    assert waiting.wait(WAIT)
    assert not ran.is_set()  # it cannot have run: the input holds the gate
    gate.leave()
    assert ran.wait(WAIT)
    worker.join(WAIT)


def test_the_person_waits_only_for_the_call_already_running_and_no_new_call_starts_meanwhile() -> None:
    gate = attached()
    in_call, release, entered = threading.Event(), threading.Event(), threading.Event()
    second: list[str] = []

    def first_call() -> None:
        with gate.outside(0):
            in_call.set()
            release.wait(WAIT)

    def person() -> None:
        gate.enter()
        entered.set()

    calls = threading.Thread(target=first_call)
    calls.start()
    assert in_call.wait(WAIT)
    person_thread = threading.Thread(target=person)
    person_thread.start()
    # the person waits for the running call; a new call must not slip in ahead of them
    while gate._wanting == 0 and not entered.is_set():
        threading.Event().wait(0.001)
    try:
        with gate.outside(0.01):
            second.append("ran")
    except SessionBusy:
        second.append("busy")
    assert second == ["busy"]
    assert not entered.is_set()
    release.set()
    assert entered.wait(WAIT)
    assert gate.busy
    gate.leave()
    calls.join(WAIT)
    person_thread.join(WAIT)


def test_outside_calls_run_one_at_a_time() -> None:
    gate = attached()
    inside = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with gate.outside(0):
            inside.set()
            release.wait(WAIT)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(WAIT)
    with pytest.raises(SessionBusy), gate.outside(0.01):
        pass
    release.set()
    holder.join(WAIT)
    with gate.outside(0):
        pass
