"""The one proposal path (``pyaichat.proposals``), through its two ways in: ``decide`` on the front end's
thread, and ``submit`` from another thread (an outside agent's request), against a fake front end.

No test here depends on timing: the second thread hands over through events, and the one test of a timeout
has the front end answer only once the waiting side has withdrawn the proposal.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest

from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.piped import PlainFrontEnd
from pyaichat.proposals import ASSISTANT, Outcome, Pending, Proposal
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

BOUND = 60.0  # a safety net for a broken test, never reached when it works


class FakeFrontEnd:
    """A front end whose person answers with ``answers`` in turn (a decision, or a callable giving one)."""

    interactive = True
    remembers = False

    def __init__(self, *answers: Any, arguments: dict[str, Any] | None = None) -> None:
        self.answers = list(answers)
        self.arguments = arguments
        self.events: list[Any] = []
        self.asked: list[Any] = []
        self.next_input: str | None = None
        self.withdrawn: list[str] = []
        self.withdraw_called = threading.Event()
        self.asking = threading.Event()  # a question is on screen

    def emit(self, event: Any) -> None:
        self.events.append(event)

    def decide(self, proposal: Any) -> str:
        self.asked.append(proposal)
        self.asking.set()
        answer = self.answers.pop(0)
        return answer() if callable(answer) else answer

    def set_next_input(self, code: str) -> None:
        self.next_input = code

    def edit_arguments(self, proposal: Any) -> dict[str, Any] | None:
        return self.arguments

    def withdraw(self, call_id: str, code: str | None = None) -> None:  # from the waiting thread
        self.withdrawn.append(call_id)
        if code is not None and self.next_input == code:  # placed: the input drops it, unchanged
            self.next_input = None
        self.withdraw_called.set()

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def make(front: Any, **settings: Any) -> Controller:
    config = Config(audit=False, sandbox_isolation="inprocess", **settings)  # no preview: fast and certain
    runtime = LocalRuntime(Session(config=config, echo=lambda value: None))
    return assemble(runtime, front)


def ns(ctrl: Controller) -> dict[str, Any]:
    return ctrl.runtime.session.namespace  # type: ignore[attr-defined]


def from_a_second_thread(
    ctrl: Controller, proposal: Proposal, timeout: float = BOUND, after: threading.Event | None = None
) -> dict[str, Any]:
    """Submit ``proposal`` from a second thread, as an MCP server's request would, and serve it on this one
    once the front end has been woken; the second thread's outcome comes back in the dict. ``after``: the
    second thread starts its ``timeout`` only once that has happened."""
    woken = threading.Event()
    ctrl.proposals.on_waiting.append(woken.set)
    got: dict[str, Any] = {}

    def client() -> None:
        pending = ctrl.proposals.submit(proposal)
        got["pending"] = pending
        if after is not None:
            assert after.wait(BOUND)
        got["outcome"] = pending.wait(timeout)

    got["thread"] = threading.Thread(target=client)
    got["thread"].start()
    assert woken.wait(BOUND)
    ctrl.serve_proposals()  # the prompt is idle: the front end's thread asks
    return got


def finish(got: dict[str, Any]) -> Outcome:
    got["thread"].join(BOUND)
    assert not got["thread"].is_alive()
    return got["outcome"]


# -- from another thread ---------------------------------------------------------------------------------
def test_a_proposal_from_another_thread_is_asked_on_the_front_ends_thread_and_runs():
    front = FakeFrontEnd("run")
    ctrl = make(front, model="openai/test")
    ctrl.run_python("x = 20")
    proposal = Proposal.of_code("y = x + 1\nprint('made y')\ny * 2", "Adds one.", source="Claude Desktop")
    outcome = finish(from_a_second_thread(ctrl, proposal))
    assert outcome.status == "ran" and outcome.ran and outcome.code == proposal.code
    assert ns(ctrl)["y"] == 21
    assert outcome.output == "Output:\nmade y\nValue: int 42" and outcome.error is None
    assert outcome.input_number == 2 and ctrl.runtime.history[-1].source == proposal.code
    assert "No preview" in outcome.preview  # what the person saw; here the walls are off on purpose
    (panel,) = [e.proposal for e in front.of("approval_required")]  # the panel names who proposes it
    assert panel.source == "Claude Desktop" and panel.code == proposal.code
    assert front.asked == [panel]
    (approved,) = ctrl.journal.approved  # journaled for /save, as the client's
    assert approved.proposed_by == "Claude Desktop" and approved.model is None and approved.input_number == 2
    assert "The user ran the proposed code as input [2]. It succeeded." in outcome.observation


def test_declined_from_another_thread():
    front = FakeFrontEnd("no")
    ctrl = make(front)
    outcome = finish(from_a_second_thread(ctrl, Proposal.of_code("gone = 1", source="agent")))
    assert outcome.status == "declined" and not outcome.ran and "gone" not in ns(ctrl)
    assert "declined" in outcome.observation and ctrl.journal.approved == []


def test_edited_then_run_by_the_person_returns_the_code_that_ran():
    front = FakeFrontEnd("edit")
    ctrl = make(front)
    got = from_a_second_thread(ctrl, Proposal.of_code("z = 1", source="agent"))
    assert front.next_input == "z = 1" and ctrl.mode.value == "python"
    pending: Pending = got["pending"]
    assert pending.outcome is None  # "edit" is not an answer yet: the client still waits
    ctrl.handle("z = 2  # mine")  # the next input settles it
    outcome = finish(got)
    assert outcome.status == "edited" and outcome.code == "z = 2  # mine" and ns(ctrl)["z"] == 2
    assert outcome.input_number == 1 and "edited the proposed code" in outcome.observation
    assert ctrl.journal.approved == []  # the person's own input, not approved code


@pytest.mark.parametrize("undone_before", [True, False])
def test_undo_after_an_edited_proposal_says_it_was_the_persons_own_input_and_undoes_nothing(undone_before):
    """The person edited the proposal before running it: that code is theirs (the journal and /save say
    so too), and /undo says so plainly instead of speaking of an older proposal — or undoing it."""
    front = FakeFrontEnd("run", "edit")
    ctrl = make(front)
    ctrl.run_python("z = 0")
    finish(from_a_second_thread(ctrl, Proposal.of_code("z = 1", source="claude-code")))  # input [2]
    if undone_before:
        assert ctrl.proposals.undo()[0] and ns(ctrl)["z"] == 0
    got = from_a_second_thread(ctrl, Proposal.of_code("w = 1", source="claude-code"))
    ctrl.handle("w = 2  # mine")  # input [3]
    assert finish(got).status == "edited"
    before = dict(ns(ctrl))
    ok, text = ctrl.proposals.undo()
    assert not ok and text == (
        "Nothing was undone: you edited claude-code's last proposal before running it, so input [3] is your "
        "own code, which /undo does not take back."
    )
    assert ns(ctrl) == before  # the older proposal was not taken back either
    ctrl.handle("/undo")  # the command says too where checkpoints are kept
    assert (
        front.of("notice")[-1].text
        == text + " (Checkpoints are kept only in pyaichat's own REPL (python -m pyaichat).)"
    )


def test_edit_then_run_unchanged_is_approved_and_can_be_undone():
    front = FakeFrontEnd("edit")
    ctrl = make(front)
    ctrl.run_python("z = 0")
    got = from_a_second_thread(ctrl, Proposal.of_code("z = 1", source="agent"))
    ctrl.handle("z = 1")
    outcome = finish(got)
    assert outcome.status == "ran" and ns(ctrl)["z"] == 1 and len(ctrl.journal.approved) == 1
    ok, text = ctrl.proposals.undo()
    assert ok and ns(ctrl)["z"] == 0 and "restored z" in text
    assert ctrl.assistant.memory_state()[1] == [f"The user undid the code agent proposed with /undo. {text}"]


def test_a_question_instead_of_the_placed_code_declines_it():
    front = FakeFrontEnd("edit")
    ctrl = make(front)
    got = from_a_second_thread(ctrl, Proposal.of_code("w = 1", source="agent"))
    ctrl.handle("/history")
    assert finish(got).status == "declined" and "w" not in ns(ctrl)


def test_no_answer_in_time_withdraws_it_and_a_late_yes_runs_nothing():
    front = FakeFrontEnd()
    ctrl = make(front)

    def late_yes() -> str:  # the person presses r only after the client stopped waiting
        assert front.withdraw_called.wait(BOUND)
        return "run"

    front.answers.append(late_yes)
    proposal = Proposal.of_code("late = 1", source="agent")
    got = from_a_second_thread(ctrl, proposal, timeout=0, after=front.asking)  # time is up while it asks
    outcome = finish(got)
    assert outcome.status == "unanswered" and not outcome.ran and "late" not in ns(ctrl)
    assert front.withdrawn == [outcome.proposal.call_id]
    assert "withdrawn: no one answered in time. Nothing ran." in front.of("notice")[-1].text
    assert "did not run" in outcome.observation


def test_a_cancelled_proposal_placed_in_the_input_leaves_it_and_running_that_input_approves_nothing():
    """Its caller cancelled it after the person chose edit (the code waits in their input): the code leaves
    the input (the front end drops it if unchanged), one line says so, and whatever they run next is their
    own input, not an approval."""
    front = FakeFrontEnd("edit")
    ctrl = make(front)
    got = from_a_second_thread(ctrl, Proposal.of_code("placed = 1", source="cursor"))
    assert front.next_input == "placed = 1"
    outcome = got["pending"].withdraw("cursor cancelled its proposal, so it was withdrawn.", take_back=True)
    assert outcome.status == "unanswered" and front.next_input is None
    assert front.withdrawn == [outcome.proposal.call_id]
    ctrl.serve_proposals()
    assert front.of("notice")[-1].text == "cursor cancelled its proposal, so it was withdrawn."
    ctrl.handle("placed = 2")  # the person's own input
    assert finish(got).status == "unanswered" and ns(ctrl)["placed"] == 2
    assert ctrl.journal.approved == []


def test_a_proposal_no_one_served_in_time_is_never_asked():
    front = FakeFrontEnd("run")
    ctrl = make(front)
    pending = ctrl.proposals.submit(Proposal.of_code("never = 1", source="agent"))
    assert ctrl.proposals.waiting == 1
    assert pending.wait(0.01).status == "unanswered"  # no one served it: the front end was busy
    assert ctrl.proposals.waiting == 0
    ctrl.serve_proposals()
    assert front.asked == [] and "never" not in ns(ctrl)
    assert "withdrawn" in front.of("notice")[-1].text


def test_piped_input_shows_it_and_tells_the_truth():
    out = io.StringIO()
    ctrl = make(PlainFrontEnd(out))
    outcome = finish(
        from_a_second_thread(ctrl, Proposal.of_code("p = 1", "Sets p.", source="Claude Desktop"))
    )
    assert outcome.status == "not_asked" and "p" not in ns(ctrl)
    text = out.getvalue()
    assert "Claude Desktop proposes code (not run in piped mode):\nSets p.\np = 1\n" in text
    assert "could not be asked" in outcome.observation and "declined" not in outcome.observation


# -- a tool call that needs approval ---------------------------------------------------------------------
def test_a_tool_call_runs_with_its_arguments_or_the_edited_ones():
    calls: list[dict[str, Any]] = []

    def call(arguments: dict[str, Any]) -> str:
        calls.append(arguments)
        return f"created issue {arguments['title']!r}"

    front = FakeFrontEnd("run", "edit", "no", arguments={"title": "better"})
    ctrl = make(front)
    tool = Proposal.of_tool("github.create_issue", {"title": "bug"}, call, source="github")
    ran = ctrl.proposals.decide(tool)
    assert ran.status == "ran" and ran.output == "created issue 'bug'" and ran.arguments == {"title": "bug"}
    panel = front.of("approval_required")[0].proposal
    assert (
        panel.tool == "github.create_issue"
        and panel.arguments == {"title": "bug"}
        and not front.of("preview")
    )
    edited = ctrl.proposals.decide(
        Proposal.of_tool("github.create_issue", {"title": "bug"}, call, source="github")
    )
    assert edited.status == "edited" and edited.arguments == {"title": "better"}
    assert 'changed to {"title": "better"}' in edited.observation
    declined = ctrl.proposals.decide(
        Proposal.of_tool("github.create_issue", {"title": "x"}, call, source="github")
    )
    assert (
        declined.status == "declined" and "declined the call to github.create_issue" in declined.observation
    )
    assert calls == [{"title": "bug"}, {"title": "better"}]


def test_a_failing_tool_call_is_its_outcome_not_an_exception():
    def call(arguments: dict[str, Any]) -> str:
        raise ConnectionError("server went away")

    ctrl = make(FakeFrontEnd("run"))
    outcome = ctrl.proposals.decide(Proposal.of_tool("s.t", {}, call, source="s"))
    assert outcome.status == "failed" and outcome.error == "ConnectionError: server went away"


# -- the assistant's own, on the same path ----------------------------------------------------------------
def test_the_assistants_proposal_is_journaled_with_its_model_and_undo_tells_it():
    front = FakeFrontEnd("run")
    ctrl = make(front, model="openai/test")
    ctrl.run_python("a = 1")
    outcome = ctrl.proposals.decide(Proposal.of_code("a = 2", "Two."))
    assert outcome.proposal.source == ASSISTANT and not front.of("approval_required")[0].proposal.outside
    (approved,) = ctrl.journal.approved
    assert (approved.model, approved.proposed_by, approved.explanation) == (
        "openai/test",
        "assistant",
        "Two.",
    )
    ok, text = ctrl.proposals.undo()
    assert ok and ns(ctrl)["a"] == 1
    assert ctrl.assistant.memory_state()[1] == [
        f"The user undid the last approved proposal with /undo. {text}"
    ]
    assert ctrl.journal.approved[0].undone == text


def test_a_proposal_needs_something_to_do():
    with pytest.raises(ValueError):
        Proposal.of_code("  ")
    with pytest.raises(ValueError):
        Proposal("tool", tool="t")  # no call to run it


def test_when_the_session_ends_whoever_waits_is_told():
    front = FakeFrontEnd("edit")
    ctrl = make(front)
    got = from_a_second_thread(ctrl, Proposal.of_code("q = 1", source="agent"))  # placed in the input
    queued = ctrl.proposals.submit(Proposal.of_code("r = 1", source="agent"))  # never asked
    ctrl.close()
    assert finish(got).status == "declined" and queued.wait(BOUND).status == "unanswered"
    assert "q" not in ns(ctrl) and "r" not in ns(ctrl)
