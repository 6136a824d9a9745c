"""A server's requests back (sampling, elicitation, roots), through the real client path: our fault server
over stdio asks in the middle of a tool call, the SDK hands the request to pyaichat, and the turn answers
it — or refuses it in a sentence that says why. Sampling goes to the person first (the approval seam), then
to the turn's own model; elicitation is a question to the person (the question seam)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import fault, run_piped

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder, never_approve
from fakes.sent import expand_sent, observed
from pyaichat.agent.assistant import Front
from pyaichat.capabilities import audit
from pyaichat.commands.assistant import sent_view
from pyaichat.configuration.config import Config
from pyaichat.configuration.mcp_servers import merged, servers_from_json, servers_from_table
from pyaichat.errors import ConfigError
from pyaichat.mcptools.approval import Answer, Question
from pyaichat.proposal import Outcome, Proposal

pytestmark = pytest.mark.e2e

SECRET = "sk-proj-Zx81Kq02Lm93Np47Qr56St20"


def ask(assistant, *, approve_tool=None, ask_person=None) -> tuple[Any, Recorder]:
    rec = Recorder()
    result = assistant.ask(
        "q",
        Front(
            rec.emit,
            approve_tool or never_approve,
            interactive=approve_tool is not None,
            answer_question=ask_person,
        ),
    )
    return result, rec


def tool_results(fake: FakeLLM) -> list[str]:
    messages = fake.requests[-1]["messages"]
    question = max(i for i, m in enumerate(messages) if "## Question" in str(m.get("content")))
    return [observed(m["content"]) for m in messages[question:] if m.get("role") == "tool"]


def answered(text: str) -> Any:
    return json.loads(text.removeprefix("client answered: "))


def hello(path: Path) -> dict[str, Any]:
    (line,) = path.read_text().splitlines()
    return json.loads(line)


def lines_of(assistant) -> str:
    return "\n".join(assistant.servers.status_lines())


# -- turned on only in the config file ---------------------------------------------------------------------
def test_sampling_and_elicitation_are_turned_on_in_a_table_of_the_config_file_only() -> None:
    (on,) = servers_from_table({"fault": {"command": "x", "sampling": True, "elicitation": True}})
    assert (on.sampling, on.elicitation) == (True, True)
    with pytest.raises(ValueError, match="sampling should be true or false"):
        servers_from_table({"fault": {"command": "x", "sampling": "yes"}})
    # a pasted mcpServers file has no such key: one that says so is not obeyed
    (pasted,) = servers_from_json(
        {"mcpServers": {"fault": {"command": "x", "sampling": True, "elicitation": True}}}, origin="f.json"
    )
    assert (pasted.sampling, pasted.elicitation) == (None, None)
    # a table of the server's name turns them on for the pasted server
    (table,) = servers_from_table({"fault": {"sampling": True}})
    (both,) = merged((table,), (pasted,))
    assert both.sampling is True and both.elicitation is None and both.command == "x"
    with pytest.raises(ConfigError, match="elicitation should be true or false"):
        Config(mcp_servers={"fault": {"command": "x", "elicitation": 1}})


# -- off: refused, in words that say how to turn it on -------------------------------------------------------
def test_what_the_user_did_not_turn_on_is_not_declared_and_is_refused_in_words(make_assistant, tmp_path):
    hellos = {name: tmp_path / f"{name}.hello" for name in ("plain", "rooted", "open")}
    assistant, fake, _ = make_assistant(
        {
            "plain": fault(trust="read-only", env={"FAULT_HELLO_FILE": str(hellos["plain"])}),
            "rooted": fault(
                trust="read-only", roots=[str(tmp_path)], env={"FAULT_HELLO_FILE": str(hellos["rooted"])}
            ),
            "open": fault(
                trust="read-only",
                sampling=True,
                elicitation=True,
                env={"FAULT_HELLO_FILE": str(hellos["open"])},
            ),
        }
    )
    fake.tools(
        ("plain__ask_sampling", {}),
        ("plain__ask_elicitation", {}),
        ("plain__ask_roots", {}),
        ("rooted__ask_roots", {}),
    ).text("ok")
    ask(assistant)
    sampling, elicitation, no_roots, roots = map(answered, tool_results(fake))
    assert sampling["message"] == (
        "pyaichat does not answer sampling requests from the MCP server 'plain': the user has not turned "
        "them on (sampling = true in its [mcp_servers.plain] table)."
    )
    assert "(elicitation = true in its [mcp_servers.plain] table)" in elicitation["message"]
    assert "the user listed none (roots = [...] in its [mcp_servers.plain] table)" in no_roots["message"]
    assert roots["roots"] == [{"uri": f"file://{tmp_path}", "name": tmp_path.name}]
    # what is off is not declared; what is on is
    assert hello(hellos["plain"])["capabilities"] == {}
    assert set(hello(hellos["rooted"])["capabilities"]) == {"roots"}
    assert {"sampling", "elicitation"} <= set(hello(hellos["open"])["capabilities"])
    shown = lines_of(assistant)
    assert (
        "requests back: sampling off (refused 1: sampling = true in its [mcp_servers.plain] table turns it "
        "on), elicitation off (refused 1: elicitation = true in its [mcp_servers.plain] table turns it on), "
        "roots: none listed (refused 1)"
    ) in shown
    assert f"requests back: roots: {tmp_path}" in shown
    assert "requests back: sampling on, elicitation on" in shown


# -- sampling ------------------------------------------------------------------------------------------------
def test_an_approved_sampling_request_is_answered_by_the_turns_model_masked_and_counted(
    make_assistant, notes
) -> None:
    assistant, fake, _ = make_assistant(
        {"fault": fault(trust="read-only", sampling=True, env=notes)}, audit=True, max_tokens=200
    )
    fake.tool("fault__ask_sampling", {"text": f"Name it. The key is {SECRET}.", "max_tokens": 5000})
    fake.text("Order 66 is late.").text("The server got its line.")
    asked: list[Proposal] = []

    def run(request: Proposal) -> Outcome:
        asked.append(request)
        return Outcome(request, "ran")

    result, rec = ask(assistant, approve_tool=run)
    (panel,) = asked
    assert panel.title == "The MCP server 'fault' asks your model fake/model to write a reply (not sent yet)"
    assert "[mcp_servers.fault]" in panel.explanation and "in at most 200 tokens" in panel.explanation
    assert panel.arguments["max_tokens"] == 200  # the server asked for 5,000: the turn's max_tokens bounds it
    shown = panel.arguments["messages"]
    assert shown[0] == {"role": "system", "content": "You write one short line."}
    assert SECRET not in json.dumps(shown) and "The key is <redacted" in shown[1]["content"]
    assert "[image content left out" in shown[1]["content"]
    # what the model received is what the person saw; no tools go with it
    sampled = fake.requests[1]
    assert sampled["messages"] == shown and sampled["tools"] is None and sampled["max_tokens"] == 200
    reply = answered(tool_results(fake)[0])
    assert reply["content"] == {"type": "text", "text": "Order 66 is late."}
    assert (reply["model"], reply["stopReason"], reply["role"]) == ("fake/model", "endTurn", "assistant")
    assert result.answer == "The server got its line."
    # recorded in the turn: /sent names it, /trace lists it, /cost counts it
    assert assistant.sent_labels() == ["", "the MCP server 'fault'", ""]
    bodies = [json.loads(body) for body in assistant.sent_json()]
    assert bodies[1]["messages"] == shown
    view = sent_view(bodies, assistant.sent_labels())  # /sent: the side request whole, the turn's chained
    assert view[1] == bodies[1] and view[2]["messages"][0] == "(messages 1–2: as in request 1)"
    assert expand_sent(view) == bodies
    assert "fake/model for the MCP server 'fault'" in assistant.trace_text()
    assert assistant.totals.prompt_tokens == 300 and assistant.totals.completion_tokens == 30
    notices = [e.text for e in rec.of("notice")]
    assert "Your model answered the MCP server 'fault' (10 tokens): Order 66 is late." in notices
    logged = [json.loads(line) for line in audit.log_path().read_text().splitlines()]
    (entry,) = [e for e in logged if e["capability"] == "mcp_sampling"]
    assert entry["server"] == "fault" and entry["decision"] == "run" and entry["ok"] is True
    assert entry["tokens"] == 110 and SECRET not in json.dumps(logged)
    assert "requests back: sampling on (1 answered)" in lines_of(assistant)


def test_a_declined_or_edited_sampling_request(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", sampling=True)})
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("Declined.")
    ask(assistant, approve_tool=lambda request: Outcome(request, "declined"))
    assert len(fake.requests) == 2  # nothing went to the model for the server
    refused = answered(tool_results(fake)[0])
    assert refused == {"code": -1, "message": "The user declined the sampling request."}

    edited = {"messages": [{"role": "user", "content": "Say only: edited"}], "max_tokens": 3}
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("edited").text("Done.")
    ask(assistant, approve_tool=lambda request: Outcome(request, "edited", arguments=edited))
    assert fake.requests[-2]["messages"] == edited["messages"] and fake.requests[-2]["max_tokens"] == 3

    wrong = {"messages": "say hi"}
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("Done.")
    ask(assistant, approve_tool=lambda request: Outcome(request, "edited", arguments=wrong))
    message = answered(tool_results(fake)[0])["message"]
    assert message.startswith('The sampling request failed: the request needs "messages"')


def test_an_approver_that_sends_it_itself_sends_it_once(make_assistant) -> None:
    """The proposal path runs an approved request through its ``run`` (as it runs a tool call)."""
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", sampling=True)})
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("Once.").text("Done.")

    def run_it(request: Proposal) -> Outcome:
        assert request.call is not None
        out = request.call(request.arguments)
        assert out == "Once."
        return Outcome(request, "ran", arguments=request.arguments)

    ask(assistant, approve_tool=run_it)
    assert len(fake.requests) == 3 and answered(tool_results(fake)[0])["content"]["text"] == "Once."


def test_where_no_one_can_approve_sampling_is_refused_and_the_user_told(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", sampling=True, elicitation=True)})
    fake.tools(("fault__ask_sampling", {}), ("fault__ask_elicitation", {})).text("Could not.")
    _, rec = ask(assistant)  # piped input, a notebook: neither seam
    sampling, elicitation = (answered(r)["message"] for r in tool_results(fake))
    assert sampling == (
        "The MCP server 'fault' asked your model for a completion (sampling); no one can be asked here "
        "(piped input or a notebook), so it was refused."
    )
    assert elicitation.startswith("The MCP server 'fault' asked you a question (elicitation); no one can")
    warned = [e.text for e in rec.of("notice") if e.level == "warning"]
    assert warned == [sampling, elicitation]
    assert len(fake.requests) == 2
    assert "sampling on (1 refused), elicitation on (1 refused)" in lines_of(assistant)


def test_the_money_budget_refuses_a_sampling_request_that_would_go_over(make_assistant) -> None:
    assistant, fake, _ = make_assistant(
        {"fault": fault(trust="read-only", sampling=True)}, llm=FakeLLM(cost=0.001), budget_usd=0.0015
    )
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("over budget")
    result, _ = ask(assistant, approve_tool=lambda request: Outcome(request, "ran"))
    assert len(fake.requests) == 1 and result.stopped_by == "budget_usd"  # neither the server's nor the next
    (told,) = [observed(m["content"]) for m in result.messages if m.get("role") == "tool"]
    assert answered(told)["message"] == (
        "The sampling request failed: another request would go over the session's money budget (budget_usd)."
    )


def test_the_time_the_person_takes_is_not_counted_against_the_calls_deadline(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", sampling=True, call_timeout=1)})
    fake.tool("fault__ask_sampling", {"text": "hello"}).text("Slowly.").text("Done.")

    def slow_person(request: Proposal) -> Outcome:
        time.sleep(2.5)  # longer than the call's deadline: the server is not waiting on its own account
        return Outcome(request, "ran")

    ask(assistant, approve_tool=slow_person)
    assert answered(tool_results(fake)[0])["content"]["text"] == "Slowly."
    assert "fault: ready" in lines_of(assistant)


# -- elicitation ---------------------------------------------------------------------------------------------
def test_a_servers_question_goes_to_the_person_and_their_answer_back(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", elicitation=True)})
    questions: list[Question] = []
    answers = iter(
        [
            Answer("accept", {"warehouse": "Leeds", "days": 3, "format": "xlsx"}),
            Answer("decline"),
            Answer("cancel"),
            Answer("accept"),
        ]
    )

    def person(question: Question) -> Answer:
        questions.append(question)
        return next(answers)

    fake.tools(
        ("fault__ask_elicitation", {}),
        ("fault__ask_elicitation", {}),
        ("fault__ask_elicitation", {}),
        ("fault__ask_elicitation", {"kind": "url"}),
        ("fault__ask_elicitation", {"kind": "nested"}),
    ).text("ok")
    ask(assistant, approve_tool=lambda request: Outcome(request, "declined"), ask_person=person)
    accepted, declined, cancelled, url, nested = map(answered, tool_results(fake))
    assert accepted == {"action": "accept", "content": {"warehouse": "Leeds", "days": 3, "format": "xlsx"}}
    assert declined == {"action": "decline"} and cancelled == {"action": "cancel"}
    assert url == {"action": "accept"}  # consent to open it; pyaichat never opens or fetches it
    assert nested["message"] == (
        "pyaichat cannot ask the user this question: its field 'address' is of a type pyaichat cannot ask "
        "for ('object')."
    )
    form = questions[0]
    assert form.server == "fault" and form.message == "Which warehouse should the report cover?"
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("warehouse", "string", True),
        ("days", "integer", False),
        ("format", "choice", True),
        ("email_me", "boolean", False),
    ]
    assert questions[3].url == "https://tracker.example.org/oauth/authorize?client=pyaichat"
    assert len(questions) == 4  # the nested form is never shown
    assert "elicitation on (4 answered, 1 refused)" in lines_of(assistant)


def test_an_answer_that_does_not_fit_the_form_is_never_sent(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", elicitation=True)})
    fake.tool("fault__ask_elicitation", {}).text("ok")
    wrong = Answer("accept", {"warehouse": "Leeds", "days": 99, "format": "xlsx"})
    ask(assistant, approve_tool=lambda request: Outcome(request, "declined"), ask_person=lambda q: wrong)
    refused = answered(tool_results(fake)[0])
    assert "days" not in json.dumps(refused.get("content")) and "failed to answer" in refused["message"]


# -- piped: the real command, no one to ask ------------------------------------------------------------------
def test_piped_input_refuses_a_servers_requests_and_says_so(srv, tmp_path: Path) -> None:
    entry = fault()
    config = (
        "[mcp_servers.fault]\n"
        f"command = {json.dumps(entry['command'])}\nargs = {json.dumps(entry['args'])}\n"
        'trust = "read-only"\nsampling = true\nelicitation = true\n'
    )
    srv.tools(("fault__ask_sampling", {"text": "hello"}), ("fault__ask_elicitation", {}))
    srv.text("The server could not get either.")
    proc = run_piped(tmp_path, srv, "/ask Make the report\n/tools\n", config=config)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert (
        "The MCP server 'fault' asked your model for a completion (sampling); no one can be asked here "
        "(piped input or a notebook), so it was refused."
    ) in out
    assert "The MCP server 'fault' asked you a question (elicitation); no one can be asked here" in out
    assert "The server could not get either." in out
    assert "requests back: sampling on (1 refused), elicitation on (1 refused)" in out
    assert len(srv.bodies) == 2 and "Traceback" not in proc.stderr


# -- a server built with the SDK ----------------------------------------------------------------------------
def test_a_server_built_with_the_sdk_asks_through_its_resolvers(make_assistant) -> None:
    """The SDK's MCPServer asks with ``Elicit`` and ``Sample`` (batched in an InputRequiredResult at the
    2026-07-28 protocol, requests sent mid-call before it): the same seams answer."""
    import sys

    from mcp_helpers import HERE

    entry = {"command": sys.executable, "args": [str(HERE / "sdk_server.py")], "trust": "read-only"}
    assistant, fake, _ = make_assistant({"asking": {**entry, "sampling": True, "elicitation": True}})
    fake.tools(("asking__deploy", {}), ("asking__title", {"topic": "stock levels"}))
    fake.text("Stock Levels At A Glance").text("Done.")
    asked: list[Question] = []

    def person(question: Question) -> Answer:
        asked.append(question)
        return Answer("accept", {"environment": "staging"})

    ask(assistant, approve_tool=lambda request: Outcome(request, "ran"), ask_person=person)
    deployed, titled = tool_results(fake)
    assert deployed == "deployed to staging with 2 replicas"
    assert titled == "title by fake/model: Stock Levels At A Glance"
    (question,) = asked
    assert question.message == "Where should it be deployed?"
    assert [(f.name, f.required, f.default) for f in question.fields] == [
        ("environment", True, None),
        ("replicas", False, 2),
    ]
    assert fake.requests[1]["messages"] == [
        {"role": "user", "content": "A five-word title about stock levels."}
    ]
