"""Servers that misbehave (our fault server, for real, over stdio): each failure is one sentence, told once,
and the assistant goes on without the server; nothing a server says runs anything without the person; what
reaches the model and the audit log is masked and bounded; closing the assistant ends the servers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp_helpers import calls_made, fault

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder, never_approve
from fakes.sent import observed
from pyaichat.agent.assistant import Front
from pyaichat.capabilities import audit
from pyaichat.proposal import Outcome, Proposal

pytestmark = pytest.mark.e2e


def ask(assistant, question: str = "q", approve_tool=None) -> tuple[object, Recorder]:
    rec = Recorder()
    return assistant.ask(
        question, Front(rec.emit, approve_tool or never_approve, interactive=approve_tool is not None)
    ), rec


def warnings(rec: Recorder) -> list[str]:
    return [e.text for e in rec.of("notice") if e.level == "warning"]


def tool_names(fake: FakeLLM, request: int = 0) -> list[str]:
    return [t["function"]["name"] for t in fake.requests[request]["tools"] or []]


def tool_results(fake: FakeLLM) -> list[str]:
    """The tool results of the last turn (earlier turns are replayed before its question)."""
    messages = fake.requests[-1]["messages"]
    question = max(i for i, m in enumerate(messages) if "## Question" in str(m.get("content")))
    return [observed(m["content"]) for m in messages[question:] if m.get("role") == "tool"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


# -- start-up ------------------------------------------------------------------------------------------------
def test_servers_start_with_the_first_question_and_end_with_the_assistant(make_assistant, tmp_path) -> None:
    pids = tmp_path / "pids"
    assistant, fake, _ = make_assistant(
        {"fault": fault(env={"FAULT_PID_FILE": str(pids)}, trust="read-only")}
    )
    assert assistant.servers is not None and not assistant.servers.manager.started
    assert not pids.exists()  # making the assistant (and the session) starts nothing
    fake.tool("fault__echo", {"text": "hello"}).text("It said hello.")
    result, rec = ask(assistant)
    assert result.answer == "It said hello." and tool_results(fake) == ["hello"]
    assert "starting MCP servers: fault" in [e.detail for e in rec.of("state") if e.state == "starting"]
    (pid,) = map(int, pids.read_text().split())
    fake.text("again")
    ask(assistant)
    assert pids.read_text().split() == [str(pid)]  # once per session
    assert alive(pid)
    assistant.close()
    assert not alive(pid)


def test_a_server_installed_in_this_environment_but_not_on_path_is_given_its_full_path(
    make_assistant, monkeypatch
) -> None:
    """``pip install mcp-server-time`` into pyaichat's venv, not activated: the command is not on PATH, and
    the sentence gives the path to copy into the config."""
    import sysconfig

    here = os.path.join(sysconfig.get_path("scripts"), "mcp-server-time")
    assert os.access(here, os.X_OK)  # the test extra installs it into this environment
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assistant, fake, _ = make_assistant({"time": {"command": "mcp-server-time"}})
    fake.text("answer")
    (told,) = warnings(ask(assistant)[1])
    assert (
        f"the command 'mcp-server-time' was not found. This environment has it: command = \"{here}\"." in told
    )


@pytest.mark.parametrize(
    ("entry", "sentence"),
    [
        (
            fault("crash-on-start"),
            "exited while starting; the last line it wrote: fault server: cannot start",
        ),
        (fault("hang-on-start", start_timeout=1.5), "did not start and list its tools within 1.5 s"),
        (
            fault("garbage-on-start"),
            "wrote something that is not MCP (JSON-RPC) on its output, so it was stopped",
        ),
        (
            {"command": "/no/such/mcp-server"},
            "could not start: the command '/no/such/mcp-server' was not found.",
        ),
        (
            {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}},
            "uses ${NOT_SET_ANYWHERE}, but NOT_SET_ANYWHERE is",
        ),
    ],
    ids=["crash", "hang", "garbage", "missing", "unset-variable"],
)
def test_a_server_that_cannot_start_is_one_sentence_once_and_the_assistant_goes_on(
    make_assistant, entry, sentence
) -> None:
    assistant, fake, _ = make_assistant({"bad": entry, "good": fault(trust="read-only")})
    fake.text("first answer").text("second answer")
    first, rec1 = ask(assistant)
    second, rec2 = ask(assistant)
    assert (first.answer, second.answer) == ("first answer", "second answer")
    (told,) = warnings(rec1)
    assert told.startswith("The MCP server 'bad' ") and sentence in told, told
    assert told.endswith("The assistant goes on without it.") and "\n" not in told
    assert warnings(rec2) == []  # once
    names = tool_names(fake)
    assert "good__echo" in names and not any(n.startswith("bad__") for n in names)
    status = "\n".join(assistant.servers.status_lines())
    assert "  bad: failed, trust ask" in status and "last error: The MCP server 'bad' " in status
    assert "  good: ready, trust read-only, 16 tools, 0 calls" in status


@pytest.mark.parametrize(
    ("tool", "sentence"),
    [
        (
            "crash",
            "exited during a call to crash; the last line it wrote: fault server: crashing in the middle",
        ),
        (
            "hang",
            "did not answer a call to hang within 1.5 s (call_timeout in the server's own entry), so it was "
            "stopped.",
        ),
        (
            "garbage",
            'wrote something that is not MCP (JSON-RPC) on its output, so it was stopped: \'{"jsonrpc"',
        ),
    ],
)
def test_a_server_that_fails_during_a_call_is_told_to_the_model_and_the_user_once(
    make_assistant, tool, sentence
) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only", call_timeout=1.5)})
    fake.tool(f"fault__{tool}").text("The tool failed, so I cannot say.")
    result, rec = ask(assistant)
    assert result.answer == "The tool failed, so I cannot say."
    (observation,) = tool_results(fake)
    assert observation.startswith("Error: The MCP server 'fault' ") and sentence in observation, observation
    (end,) = rec.of("tool_end")
    assert not end.ok and sentence in (end.error or "")
    (told,) = warnings(rec)
    assert sentence in told
    assert "fault: failed" in "\n".join(assistant.servers.status_lines())
    fake.text("next")  # the next need: the server comes back, said in one line (issue 36)
    _, rec2 = ask(assistant)
    (line,) = warnings(rec2)
    assert line.startswith("Restarting the MCP server 'fault' (at most once a minute): ") and sentence in line
    assert line.endswith("→ The MCP server 'fault' is running again (16 tools).")
    assert "fault__echo" in tool_names(fake, -1)


# -- bounds --------------------------------------------------------------------------------------------------
def test_a_flood_on_stderr_never_reaches_the_terminal(make_assistant, capfd) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only")})
    fake.tool("fault__flood_stderr", {"mb": 20}).tool("fault__echo", {"text": "still here"}).text("ok")
    result, _ = ask(assistant)
    assert tool_results(fake) == ["done", "still here"] and result.answer == "ok"
    out, err = capfd.readouterr()
    assert "stderr flood" not in out + err


def test_a_huge_result_is_cut_to_the_output_limit(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only")}, max_output_chars=500)
    fake.tool("fault__big", {"chars": 2_000_000}).text("big")
    _, rec = ask(assistant)
    (text,) = tool_results(fake)
    assert len(text) < 600 and text.endswith("more characters cut")
    (end,) = rec.of("tool_end")
    assert end.ok and end.truncated


# -- environment and secrets ---------------------------------------------------------------------------------
def test_a_spawned_server_gets_a_clean_environment_and_its_secrets_never_reach_the_model(
    make_assistant, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-own-key-0123456789abcdef")
    monkeypatch.setenv("PROJECT_SETTING", "visible-only-to-pyaichat")
    token = "tok_live_9f8e7d6c5b4a39281706"
    assistant, fake, _ = make_assistant(
        {"fault": fault(trust="read-only", env={"SERVICE_TOKEN": token, "REGION": "eu-west"})}, audit=True
    )
    fake.tool("fault__env").tool("fault__echo", {"text": f"the token is {token}"}).text(f"done {token}")
    ask(assistant)
    env_text, echo_text = tool_results(fake)
    names = {line.partition("=")[0] for line in env_text.splitlines()}
    assert names <= {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "USER",
        "SERVICE_TOKEN",
        "REGION",
        "LC_CTYPE",
    }
    assert "OPENAI_API_KEY" not in names and "PROJECT_SETTING" not in names
    assert "SERVICE_TOKEN=<redacted MCP server secret>" in env_text and "REGION=eu-west" in env_text
    assert echo_text == "the token is <redacted MCP server secret>"
    sent = "\n".join(assistant.sent_json())
    assert token not in sent and "<redacted MCP server secret>" in sent
    logged = audit.log_path().read_text()
    assert token not in logged and '"server": "fault"' in logged and '"tool": "echo"' in logged
    assert token not in "\n".join(assistant.servers.status_lines())


# -- the person decides --------------------------------------------------------------------------------------
def test_an_injected_instruction_runs_nothing_without_the_person(make_assistant, notes) -> None:
    # The server is not marked read-only: its claims (readOnlyHint on delete_everything) count for nothing.
    assistant, fake, _ = make_assistant({"fault": fault(env=notes)})
    fake.tool("fault__read_notes").tool("fault__delete_everything", {"confirm": True}).text("Done as asked.")
    ask(assistant)  # piped: no one can approve
    offered = tool_names(fake)
    assert "fault__read_notes" not in offered and "fault__delete_everything" not in offered
    results = tool_results(fake)
    assert all(r.startswith("Error: fault__") and "needs the user's approval" in r for r in results)
    assert 'not marked trust = "read-only"' in results[1] and "(piped input); it did not run." in results[1]
    assert not Path(notes["FAULT_NOTE_FILE"]).exists() and calls_made(notes) == []

    asked: list[Proposal] = []

    def no(request: Proposal) -> Outcome:
        asked.append(request)
        return Outcome(request, "declined")

    fake.tool("fault__read_notes").tool("fault__delete_everything", {"confirm": True}).text("Done as asked.")
    ask(assistant, approve_tool=no)
    assert [r.tool for r in asked] == ["fault__read_notes", "fault__delete_everything"]
    assert "IMPORTANT SYSTEM INSTRUCTION" in asked[0].explanation  # the person sees what the model saw
    assert asked[1].arguments == {"confirm": True} and "(MCP server 'fault':" in asked[1].explanation
    assert tool_results(fake)[1].startswith("Error: The user declined the call to fault__delete_everything")
    assert not Path(notes["FAULT_NOTE_FILE"]).exists() and calls_made(notes) == []


def test_an_approved_call_runs_with_the_arguments_the_person_chose(make_assistant, notes) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(env=notes, trust="read-only")})
    fake.tool("fault__write_note", {"text": "from the model"}).text("Noted.")

    def edit(request: Proposal) -> Outcome:
        assert (
            "(MCP server 'fault': the tool does not declare itself read-only (readOnlyHint).)"
            in request.explanation
        )
        return Outcome(request, "edited", arguments={"text": "from the person"})

    _, _ = ask(assistant, approve_tool=edit)
    assert "fault__write_note" in tool_names(fake)
    assert Path(notes["FAULT_NOTE_FILE"]).read_text() == 'write_note: {"text": "from the person"}\n'
    (result,) = tool_results(fake)
    assert result == '(The user edited the arguments before running it: {"text": "from the person"})\nwritten'

    # an approver that runs the call itself (the proposal path does): it runs once, with its arguments
    def run_it(request: Proposal) -> Outcome:
        assert request.call is not None
        request.call({"text": "through the panel"})
        return Outcome(request, "edited", arguments={"text": "through the panel"})

    fake.tool("fault__write_note", {"text": "from the model"}).text("Noted.")
    ask(assistant, approve_tool=run_it)
    lines = Path(notes["FAULT_NOTE_FILE"]).read_text().splitlines()
    assert lines[1:] == ['write_note: {"text": "through the panel"}']
    assert tool_results(fake)[0].endswith("\nwritten")


# -- images --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sees", "privacy", "sent"), [(True, "sample", True), (True, "schema", False), (False, "full", False)]
)
def test_a_tool_image_reaches_only_a_model_that_sees_and_a_privacy_that_allows(
    make_assistant, sees, privacy, sent
) -> None:
    assistant, fake, _ = make_assistant(
        {"fault": fault(trust="read-only")}, llm=FakeLLM(images=sees), privacy=privacy
    )
    fake.tool("fault__image", {"side": 16}).text("A red square.")
    ask(assistant)
    last = fake.requests[-1]["messages"]
    parts = [p for m in last if isinstance(m.get("content"), list) for p in m["content"]]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    (text,) = tool_results(fake)
    if sent:
        assert (
            len(urls) == 1 and urls[0].startswith("data:image/png;base64,") and "[image 1: image/png]" in text
        )
    else:
        assert (
            urls == [] and "left out: " + ("privacy level 'schema'" if sees else "this model cannot") in text
        )


def test_describe_tool_gives_the_full_schema_of_a_tool_offered_briefly(make_assistant) -> None:
    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only")}, mcp_tool_tokens=10)
    fake.tool("describe_tool", {"name": "fault__echo"}).tool("describe_tool", {"name": "nope"}).text("ok")
    ask(assistant)
    assert "describe_tool" in tool_names(fake)
    described, unknown = tool_results(fake)
    assert json.loads(described)["parameters"]["properties"] == {"text": {"type": "string"}}
    assert unknown.startswith("Error: No tool named 'nope'; known: fault__echo, fault__time_now")


# -- Ctrl-C --------------------------------------------------------------------------------------------------
def test_ctrl_c_during_a_call_stops_the_answer_and_keeps_the_server(make_assistant, notes) -> None:
    import signal
    import threading

    assistant, fake, _ = make_assistant({"fault": fault(env=notes, trust="read-only")})
    fake.tool("fault__slow", {"seconds": 3})
    calls = Path(notes["FAULT_CALLS_FILE"])
    main = threading.main_thread().ident
    assert main is not None

    def press_ctrl_c_once_the_call_has_started() -> None:
        while not calls.exists():
            threading.Event().wait(0.01)
        signal.pthread_kill(main, signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c_once_the_call_has_started)
    presser.start()
    result, rec = ask(assistant)
    presser.join()
    assert result.interrupted and result.stopped_by == "interrupt"
    assert [e.text for e in rec.of("answer")] == [""]
    fake.tool("fault__echo", {"text": "still serving"}).text("ok")  # answered once the slow call is done
    ask(assistant)
    assert tool_results(fake) == ["still serving"]
    assert "fault: ready" in "\n".join(assistant.servers.status_lines())


def test_a_call_after_the_servers_are_closed_is_one_sentence_and_leaves_no_coroutine_behind(
    make_assistant,
) -> None:
    """The manager's loop is gone: the call is refused in words, and no coroutine is left never awaited (a
    RuntimeWarning printed over the prompt at the next garbage collection)."""
    import gc
    import warnings as py_warnings

    from pyaichat.mcptools.connection import ServerProblem

    assistant, fake, _ = make_assistant({"fault": fault(trust="read-only")})
    fake.tool("fault__echo", {"text": "hello"}).text("It said hello.")
    ask(assistant)
    manager = assistant.servers.manager
    assistant.close()
    with py_warnings.catch_warnings(record=True) as seen:
        py_warnings.simplefilter("always")
        with pytest.raises(ServerProblem):
            manager.call("fault", "echo", {"text": "late"})
        gc.collect()
    assert not [w for w in seen if "never awaited" in str(w.message)]


# -- servers that come back (issue 36) -----------------------------------------------------------------------
def test_a_crashed_server_comes_back_at_most_once_a_minute_and_by_command(make_assistant, tmp_path) -> None:
    pids = tmp_path / "pids"
    assistant, fake, _ = make_assistant(
        {"fault": fault(env={"FAULT_PID_FILE": str(pids)}, trust="read-only")}
    )
    fake.tool("fault__crash").tool("fault__echo", {"text": "back"}).text("It came back.")
    _, rec = ask(assistant)
    crashed, echoed = tool_results(fake)
    assert "exited during a call to crash" in crashed and echoed == "back"  # restarted on the next need
    assert any(w.startswith("Restarting the MCP server 'fault'") for w in warnings(rec))
    assert len(pids.read_text().split()) == 2

    fake.tool("fault__crash").tool("fault__echo", {"text": "again"}).text("Down.")
    ask(assistant)
    crashed, not_sent = tool_results(fake)
    assert not_sent == (
        "Error: echo was not sent: the MCP server 'fault' was stopped after an earlier failure (The MCP "
        "server 'fault' exited during a call to crash; the last line it wrote: fault server: crashing in "
        "the middle of a call); /tools restart fault starts it again (it is restarted on its own at most "
        "once a minute)."
    )
    assert len(pids.read_text().split()) == 2  # within the minute: not restarted on its own

    assert assistant.servers.restart("fault") == "The MCP server 'fault' is running again (16 tools)."
    fake.tool("fault__echo", {"text": "by command"}).text("Back by command.")
    ask(assistant)
    assert tool_results(fake) == ["by command"] and len(pids.read_text().split()) == 3
    assert assistant.servers.restart("nope") == "There is no MCP server 'nope' (configured: fault)."


def test_a_tool_the_model_was_not_offered_gets_the_list_it_was_offered_or_why_its_server_is_down(
    make_assistant,
) -> None:
    assistant, fake, _ = make_assistant(
        {"good": fault(trust="read-only"), "bad": {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}}}
    )
    fake.tool("bad__boom").tool("nosuch").text("ok")
    ask(assistant)
    down, unknown = tool_results(fake)
    assert down == (
        "Error: bad__boom is not available: The MCP server 'bad' uses ${NOT_SET_ANYWHERE}, but "
        "NOT_SET_ANYWHERE is not set in your environment."
    )
    assert unknown.startswith("Error: There is no tool named 'nosuch'. The tools offered to you: ")
    assert "get_repr" in unknown and "good__echo" in unknown and "describe_tool" not in unknown.split(": ")[0]
