"""A call of an MCP server's tool that needs the person, through the controller: the one proposal path's panel
(the tool, its arguments in full, the server and why it asks), the person's run / edit / no, the call made by
the panel, and the model told what they decided. Our fault server, for real, over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import calls_made, fault

from fakes.fake_llm import FakeLLM
from fakes.sent import observed
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

pytestmark = pytest.mark.e2e


class Person:
    """A front end in a terminal whose person answers each proposal with the next of ``answers``."""

    interactive = True
    remembers = False

    def __init__(self, *answers: str, arguments: dict[str, Any] | None = None) -> None:
        self.answers = list(answers)
        self.arguments = arguments
        self.events: list[Any] = []
        self.asked: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)

    def decide(self, proposal: Any) -> str:
        self.asked.append(proposal)
        return self.answers.pop(0)

    def edit_arguments(self, proposal: Any) -> dict[str, Any] | None:
        return self.arguments

    def set_next_input(self, code: str) -> None:
        raise AssertionError("a tool call is never put into the input")


@pytest.fixture
def controller(notes):
    made: list[Controller] = []

    def make(person: Person) -> tuple[Controller, FakeLLM]:
        servers = {"fault": fault(env=notes, trust="read-only")}
        config = Config(model="fake/model", audit=False, mcp_servers=servers)
        session = Session(echo=lambda value: None, config=config)
        fake = FakeLLM()
        ctrl = assemble(LocalRuntime(session), person, llm_factory=lambda cfg: fake)
        made.append(ctrl)
        return ctrl, fake

    yield make
    for ctrl in made:
        ctrl.close()  # the assistant's servers end with the session


def told(fake: FakeLLM) -> str:
    return [observed(m["content"]) for m in fake.requests[-1]["messages"] if m.get("role") == "tool"][-1]


def test_the_panel_asks_and_the_approved_call_runs_once_as_the_person_chose(controller, notes):
    person = Person("run", "edit", "no", arguments={"text": "from the person"})
    ctrl, fake = controller(person)
    fake.tool("fault__write_note", {"text": "from the model"}).text("Noted.")
    ctrl.ask("note it")
    (panel,) = person.asked
    assert panel.tool == "fault__write_note" and panel.arguments == {"text": "from the model"}
    assert "MCP server 'fault'" in panel.explanation and "readOnlyHint" in panel.explanation
    assert told(fake) == "written"
    assert Path(notes["FAULT_NOTE_FILE"]).read_text() == 'write_note: {"text": "from the model"}\n'

    fake.tool("fault__write_note", {"text": "from the model"}).text("Noted again.")
    ctrl.ask("note it again")
    edited = '(The user edited the arguments before running it: {"text": "from the person"})'
    assert told(fake).startswith(edited)
    fake.tool("fault__write_note", {"text": "third"}).text("Not noted.")
    ctrl.ask("and once more")
    assert "declined the call to fault__write_note" in told(fake)
    written = [call["args"] for call in calls_made(notes) if call["tool"] == "write_note"]
    assert written == [{"text": "from the model"}, {"text": "from the person"}]  # once each; "no": never
    assert ctrl.frontend.events and not [e for e in ctrl.frontend.events if e.type == "preview"]


def test_piped_input_offers_only_what_runs_at_once(controller, notes):
    person = Person()
    person.interactive = False  # no one to ask: the call is refused with a sentence, never shown
    ctrl, fake = controller(person)
    fake.tool("fault__write_note", {"text": "x"}).text("Could not.")
    ctrl.ask("note it")
    assert person.asked == [] and "needs the user's approval" in told(fake)
    assert not Path(notes["FAULT_NOTE_FILE"]).exists()


# -- a server's requests back, through the same panel --------------------------------------------------------
class Asked(Person):
    """A person who also answers a server's questions (a terminal front end can)."""

    def __init__(self, *answers: str, replies: list[Any] | None = None) -> None:
        super().__init__(*answers)
        self.replies = list(replies or [])
        self.questions: list[Any] = []

    def answer_question(self, question: Any) -> Any:
        self.questions.append(question)
        return self.replies.pop(0)


@pytest.fixture
def asking_controller(notes):
    made: list[Controller] = []

    def make(person: Person) -> tuple[Controller, FakeLLM]:
        servers = {"fault": fault(env=notes, trust="read-only", sampling=True, elicitation=True)}
        config = Config(model="fake/model", audit=False, mcp_servers=servers)
        session = Session(echo=lambda value: None, config=config)
        fake = FakeLLM()
        ctrl = assemble(LocalRuntime(session), person, llm_factory=lambda cfg: fake)
        made.append(ctrl)
        return ctrl, fake

    yield make
    for ctrl in made:
        ctrl.close()


def test_a_sampling_request_waits_in_the_proposal_panel_and_goes_to_the_model_on_run(asking_controller):
    person = Person("run", "no")
    ctrl, fake = asking_controller(person)
    fake.tool("fault__ask_sampling", {"text": "Name the report."}).text("Weekly stock.").text("Named.")
    ctrl.ask("name it")
    (panel,) = person.asked
    assert panel.title == "The MCP server 'fault' asks your model fake/model to write a reply (not sent yet)"
    assert panel.tool == "fault: sampling" and panel.arguments["messages"][1]["content"].startswith(
        "Name the"
    )
    assert "Your model (fake/model) would answer" in panel.explanation
    assert fake.requests[1]["messages"] == panel.arguments["messages"]
    assert '"text": "Weekly stock."' in told(fake)
    shown = [e for e in person.events if e.type == "notice" and "answered the MCP server" in e.text]
    assert [e.text for e in shown] == [
        "Your model answered the MCP server 'fault' (10 tokens): Weekly stock."
    ]

    fake.tool("fault__ask_sampling", {"text": "Again."}).text("Not sent.")
    ctrl.ask("again")
    assert len(person.asked) == 2 and "The user declined the sampling request." in told(fake)
    assert len(fake.requests) == 5  # 3 for the first question, 2 for the second: nothing for the server


def test_a_servers_question_is_shown_and_answered_by_the_person(asking_controller):
    from pyaichat.mcptools.approval import Answer

    person = Asked(replies=[Answer("accept", {"warehouse": "Leeds", "format": "csv"})])
    ctrl, fake = asking_controller(person)
    fake.tool("fault__ask_elicitation", {}).text("Thanks.")
    ctrl.ask("make the report")
    (question,) = person.questions
    (event,) = [e for e in person.events if e.type == "question"]
    assert event.source == "fault" and event.message == question.message
    assert event.fields[0] == ("Warehouse", "text, at least 2 characters")
    assert event.fields[1] == ("days (optional)", "an integer from 1 to 31")
    assert event.fields[2] == ("format", "one of: 1 CSV, 2 Excel")
    assert event.fields[3] == ("email_me (optional)", "Mail it as well — yes or no")
    assert '"action": "accept", "content": {"warehouse": "Leeds", "format": "csv"}' in told(fake)


def test_a_front_end_that_cannot_answer_questions_refuses_them(asking_controller):
    person = Person()  # a front end where no one can answer (piped input, a notebook)
    person.interactive = False
    ctrl, fake = asking_controller(person)
    fake.tool("fault__ask_elicitation", {}).text("Could not ask.")
    ctrl.ask("make the report")
    assert "no one can be asked here" in told(fake)
    assert not [e for e in person.events if e.type == "question"]
