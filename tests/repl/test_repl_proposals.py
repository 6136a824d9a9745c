"""An outside agent's proposal at the real prompt (prompt_toolkit pipe input): it is asked about when the
prompt is idle, never in the middle of a line being typed, and the agent learns what happened.

The agent's side runs on a second thread and moves on only when the REPL has reached the state it waits for
(the prompt running, the question on screen): no step depends on how long anything takes.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from repl_keyseq import CTRL_C, CTRL_D

from pyaichat.proposals import Proposal

BOUND = 60.0


def until(condition: Callable[[], bool]) -> None:
    """Wait for a state of the REPL (bounded: a safety net, not a timing)."""
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, "the REPL never got there"
        time.sleep(0.005)


def processed(app: Any) -> None:
    """Wait until the prompt's event loop has run everything scheduled on it so far."""

    async def nothing() -> None:
        return None

    asyncio.run_coroutine_threadsafe(nothing(), app.loop).result(BOUND)


def rendered(app: Any) -> str:
    """What the prompt last drew (the renderer's screen: the output itself is a dummy)."""
    screen = app.renderer._last_screen
    if screen is None:
        return ""
    rows = screen.data_buffer
    return "\n".join("".join(rows[y][x].char for x in sorted(rows[y])) for y in sorted(rows))


def at_prompt(harness: Any) -> bool:
    return harness.repl.prompt.app.is_running and harness.repl.frontend._asking is None


def asking(harness: Any) -> bool:
    return harness.repl.frontend._asking is not None


def run_with_agent(harness: Any, agent: Callable[[], None]) -> dict[str, Any]:
    failed: dict[str, Any] = {}

    def guarded() -> None:
        try:
            agent()
        except BaseException as exc:  # shown by the test, after the REPL is let go
            failed["error"] = exc
            harness.send(CTRL_C + CTRL_D * 3)  # a line left half-typed would keep Ctrl-D from ending it

    thread = threading.Thread(target=guarded)
    thread.start()
    assert harness.repl.run() == 0
    thread.join(BOUND)
    if "error" in failed:
        raise failed["error"]
    return failed


def test_an_idle_prompt_makes_way_for_an_outside_proposal(harness):
    got: dict[str, Any] = {}

    def agent() -> None:
        until(lambda: at_prompt(harness))
        pending = harness.ctrl.proposals.submit(Proposal.of_code("made = 7", "Makes 7.", source="Agent X"))
        until(lambda: asking(harness))  # the empty prompt made way: the panel and the question are up
        harness.send("r")
        got["outcome"] = pending.wait(BOUND)
        until(lambda: at_prompt(harness))
        harness.send(CTRL_D)

    run_with_agent(harness, agent)
    outcome = got["outcome"]
    assert outcome.status == "ran" and harness.namespace["made"] == 7 and outcome.input_number == 1
    screen = harness.output()
    assert "Proposed code by Agent X (not run yet)" in screen and "Makes 7." in screen


def test_a_line_being_typed_is_never_interrupted(harness):
    got: dict[str, Any] = {}

    def agent() -> None:
        until(lambda: at_prompt(harness))
        harness.send("x = ")
        until(lambda: harness.repl.prompt.default_buffer.text == "x = ")
        pending = harness.ctrl.proposals.submit(Proposal.of_code("y = 1", source="Agent X"))
        processed(harness.repl.prompt.app)  # the wake-up has been handled: the line is left alone
        got["typing"] = (harness.repl.prompt.app.is_running, harness.repl.prompt.default_buffer.text)
        got["waiting"] = harness.ctrl.proposals.waiting
        harness.send("5\r")  # the line ends; then the proposal is asked about
        until(lambda: asking(harness))
        harness.send("n")
        got["outcome"] = pending.wait(BOUND)
        until(lambda: at_prompt(harness))
        harness.send(CTRL_D)

    run_with_agent(harness, agent)
    assert got["typing"] == (True, "x = ") and got["waiting"] == 1
    assert harness.namespace["x"] == 5 and "y" not in harness.namespace
    assert got["outcome"].status == "declined"


def test_an_edited_proposal_reaches_the_agent_with_the_code_that_ran(harness):
    got: dict[str, Any] = {}

    def agent() -> None:
        until(lambda: at_prompt(harness))
        pending = harness.ctrl.proposals.submit(Proposal.of_code("z = 1", source="Agent X"))
        until(lambda: asking(harness))
        harness.send("e")
        until(lambda: at_prompt(harness) and harness.repl.prompt.default_buffer.text == "z = 1")
        harness.send("\x7f2\r")  # Backspace: the person's version is z = 2
        got["outcome"] = pending.wait(BOUND)
        until(lambda: at_prompt(harness))
        harness.send(CTRL_D)

    run_with_agent(harness, agent)
    outcome = got["outcome"]
    assert outcome.status == "edited" and outcome.code == "z = 2" and harness.namespace["z"] == 2


def test_a_proposal_no_one_answers_in_time_closes_its_question_and_runs_nothing(harness):
    got: dict[str, Any] = {}

    def agent() -> None:
        until(lambda: at_prompt(harness))
        pending = harness.ctrl.proposals.submit(Proposal.of_code("late = 1", source="Agent X"))
        until(lambda: asking(harness))
        got["outcome"] = pending.wait(0)  # the agent's time is up while the question is on screen
        until(lambda: at_prompt(harness))  # the question closed by itself
        harness.send(CTRL_D)

    run_with_agent(harness, agent)
    assert got["outcome"].status == "unanswered" and "late" not in harness.namespace
    assert "withdrawn: no one answered in time. Nothing ran." in harness.output()


def test_a_proposal_withdrawn_while_the_person_types_is_told_after_their_line(harness):
    """No one answered in time while a line was being typed: the toolbar stops saying one waits (the prompt
    is redrawn) and, once the line has run, the person is told, with no other proposal needed to say it."""
    got: dict[str, Any] = {}

    def agent() -> None:
        until(lambda: at_prompt(harness))
        harness.send("x = ")
        until(lambda: harness.repl.prompt.default_buffer.text == "x = ")
        app = harness.repl.prompt.app
        pending = harness.ctrl.proposals.submit(Proposal.of_code("y = 1", source="Agent X"))
        until(lambda: "1 proposal waiting" in rendered(app))  # the toolbar says so
        got["outcome"] = pending.wait(0)  # the agent's time is up while the person types
        until(lambda: "proposal waiting" not in rendered(app))  # the prompt is redrawn without it
        got["typing"] = harness.repl.prompt.default_buffer.text
        got["waiting"] = harness.ctrl.proposals.waiting
        harness.send("5\r")
        until(lambda: at_prompt(harness) and "x" in harness.namespace)
        harness.send(CTRL_D)

    run_with_agent(harness, agent)
    assert got["outcome"].status == "unanswered" and "y" not in harness.namespace
    assert got["typing"] == "x = " and got["waiting"] == 0
    screen = harness.output()
    assert "The proposal from Agent X was withdrawn: no one answered in time. Nothing ran." in screen
