"""The agent loop with a scripted in-process model: states, tools, bounds, errors, Ctrl-C, approvals."""

from __future__ import annotations

import json
from typing import Any

from fakes.fake_llm import FakeLLM, Interrupt
from fakes.recorder import Recorder, never_approve
from fakes.turn_env import timed_env
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LLMReply, Usage
from pyaichat.agent.loop import EDIT_ANSWER, Turn, TurnEnv
from pyaichat.capabilities.catalog import CapabilityResult
from pyaichat.controller import Mode
from pyaichat.errors import LLMServerError
from pyaichat.proposal import Outcome


def ask(assistant: Assistant, question: str, approve: Any = never_approve) -> tuple[Any, Recorder]:
    rec = Recorder()
    result = assistant.ask(question, Front(rec.emit, approve))
    return result, rec


def assert_valid_conversation(messages: list[dict[str, Any]]) -> None:
    """Every tool call has exactly one result before the next assistant or user message."""
    open_ids: set[str] = set()
    for msg in messages:
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in open_ids, msg
            open_ids.discard(msg["tool_call_id"])
            continue
        assert not open_ids, f"tool calls without results: {open_ids}"
        if msg.get("tool_calls"):
            open_ids = {c["id"] for c in msg["tool_calls"]}
    assert not open_ids


def test_two_step_answer_runs_the_tool_and_streams_the_answer(assistant, fake, session):
    session.run("x = 41")
    fake.tool("get_repr", {"expr": "x"}).text("x is 41, so x + 1 is 42.")
    result, rec = ask(assistant, "what is x + 1?")
    assert result.answer == "x is 41, so x + 1 is 42."
    states = [e.state for e in rec.of("state")]
    assert states[:3] == ["starting", "idle", "thinking"]
    assert "calling" in states and "observing" in states and "answering" in states
    assert states[-1] == "done"
    (end,) = rec.of("tool_end")
    assert end.ok and "41" in end.text
    assert "".join(e.text for e in rec.of("answer_chunk")).strip() == result.answer
    second = fake.requests[1]["messages"]
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": second[-2]["tool_calls"][0]["id"],
        "content": f"<data>\n{end.text}\n</data>",  # what a tool returned is data (``untrusted``)
    }
    assert rec.of("usage")[0].prompt_tokens == 200


def test_loading_the_model_library_is_announced_before_the_first_step(assistant, fake):
    loaded: list[str] = []
    fake.prepare = lambda: loaded.append("litellm")  # the real client imports litellm here (seconds, once)
    fake.text("Hello.")
    result, rec = ask(assistant, "hi")
    first = rec.of("state")[0]
    assert (first.state, first.detail) == ("starting", "loading the model library")
    assert loaded == ["litellm"] and result.answer == "Hello."


def test_several_tool_calls_in_one_reply_each_get_a_result(assistant, fake, session):
    session.run("a = 1\nb = 2")
    fake.tools(("get_repr", {"expr": "a"}), ("get_repr", {"expr": "b"})).text("3")
    _, rec = ask(assistant, "a + b?")
    assert [e.name for e in rec.of("tool_end")] == ["get_repr", "get_repr"]
    msgs = fake.requests[1]["messages"]
    assert [m["role"] for m in msgs[-3:]] == ["assistant", "tool", "tool"]
    assert_valid_conversation(msgs[1:])


def test_unknown_tool_bad_json_and_bad_arguments_become_observations(assistant, fake):
    fake.tools(("no_such_tool", {}), ("get_repr", "{not json"), ("get_repr", {"wrong": 1})).text("ok")
    result, rec = ask(assistant, "go")
    assert result.answer == "ok" and result.error is None
    tool_msgs = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert "no capability named 'no_such_tool'" in tool_msgs[0]["content"]
    assert "not valid JSON" in tool_msgs[1]["content"]
    assert "Invalid arguments for get_repr" in tool_msgs[2]["content"]
    assert all(m["content"].startswith("Error") for m in tool_msgs)
    assert [e.ok for e in rec.of("tool_end")] == [False, False, False]


def test_a_model_that_calls_tools_forever_stops_at_max_steps(assistant, fake, config):
    assistant.settings.replace(config.replace(max_steps=3))
    for _ in range(5):
        fake.tool("list_globals", {})
    result, rec = ask(assistant, "loop")
    assert len(fake.requests) == 3
    assert result.stopped_by == "max_steps"
    (answer,) = rec.of("answer")
    assert answer.stopped_by == "max_steps" and "max_steps" in answer.note
    assert "list_globals" in answer.text  # the best answer so far: what was found
    assert_valid_conversation(result.messages)


def test_the_turn_deadline_stops_with_the_best_answer_so_far(session, config):
    from pyaichat.agent.llm import ToolCall

    now = [0.0]

    def after(seconds: float, reply: LLMReply) -> Any:
        def later() -> LLMReply:
            now[0] += seconds  # the model took this long to answer
            return reply

        return later

    call = [ToolCall("c1", "list_globals", "{}")]
    fake = FakeLLM().enqueue(
        after(6, LLMReply(text="Looking at your globals first.", tool_calls=call)),
        after(6, LLMReply(tool_calls=[ToolCall("c2", "list_globals", "{}")])),
        LLMReply(text="never asked"),
    )

    env, rec = _timed_env(fake, now)
    result = Turn(env, "q").run()
    assert result.stopped_by == "turn_timeout" and len(fake.requests) == 2
    assert result.answer == "Looking at your globals first."
    assert "turn_timeout" in rec.of("answer")[0].note


def _timed_env(fake: FakeLLM, now: list[float]) -> tuple[TurnEnv, Recorder]:
    """A turn with a 10 s deadline on a fake clock the scripted replies move (``now[0]``), no real tools."""
    return timed_env(fake, now, run_tool=lambda name, args, images: _ok("x"))


def _ok(text: str) -> CapabilityResult:
    return CapabilityResult(name="tool", ok=True, text=text, duration_ms=1.0)


def test_the_money_budget_stops_before_it_is_exceeded(session, config):
    config = config.replace(budget_usd=0.025)
    fake = FakeLLM(cost=0.01).tool("list_globals", {}).text("first").text("never sent")
    assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    first, _ = ask(assistant, "one")
    assert first.answer == "first"
    second, rec = ask(assistant, "two")
    assert second.stopped_by == "budget_usd" and len(fake.requests) == 2
    assert "budget_usd" in rec.of("answer")[0].note


def test_a_question_larger_than_the_context_budget_is_not_sent(assistant, fake, config):
    assistant.settings.replace(config.replace(context_tokens=1000))
    result, _ = ask(assistant, "why? " * 2000)
    assert result.stopped_by == "context_tokens" and fake.requests == []


def test_text_protocol_runs_tool_blocks_and_feeds_observations_back(session, config):
    session.run("x = 41")
    fake = FakeLLM(native=False)
    fake.text('I will check.\n<tool name="get_repr">{"expr": "x"}</tool>').text("It is 41.")
    assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    result, rec = ask(assistant, "x?")
    assert result.answer == "It is 41." and result.protocol == "text"
    first = fake.requests[0]
    assert first["tools"] is None
    system = first["messages"][0]["content"]
    assert '<tool name="TOOL_NAME">' in system and "- get_repr(expr: string)" in system
    last = fake.requests[1]["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith('<observation tool="get_repr">')
    assert "41" in last["content"]
    shown = "".join(e.text for e in rec.of("answer_chunk"))
    assert "<tool" not in shown and "I will check." in shown


def test_a_tool_call_printed_as_json_is_run(assistant, fake, session):
    session.run("x = 41")
    fake.text('```json\n{"name": "get_repr", "arguments": {"expr": "x"}}\n```').text("41.")
    result, rec = ask(assistant, "x?")
    assert [e.name for e in rec.of("tool_end")] == ["get_repr"]
    assert result.answer == "41."
    assert "{" not in "".join(e.text for e in rec.of("answer_chunk"))
    assert_valid_conversation(fake.requests[1]["messages"][1:])


def test_json_that_is_not_a_tool_call_stays_the_answer(assistant, fake):
    fake.text('{"name": "Ada", "age": 36}')
    result, rec = ask(assistant, "example json?")
    assert result.answer == '{"name": "Ada", "age": 36}'
    assert "".join(e.text for e in rec.of("answer_chunk")) == result.answer
    assert rec.of("tool_start") == []


def test_provider_error_is_one_sentence_and_the_conversation_stays_valid(assistant, fake):
    fake.tool("list_globals", {}).enqueue(LLMServerError("The provider failed (HTTP 500); try again."))
    result, rec = ask(assistant, "q")
    (err,) = rec.of("error")
    assert err.message == "The provider failed (HTTP 500); try again." and err.kind == "provider"
    assert rec.of("state")[-1].state == "failed"
    assert result.messages[-1]["role"] == "assistant"
    assert_valid_conversation(result.messages)
    fake.text("fine now")
    again, _ = ask(assistant, "again")
    assert again.answer == "fine now"
    assert_valid_conversation(fake.requests[-1]["messages"][1:])


def test_ctrl_c_mid_stream_keeps_the_partial_answer(assistant, fake):
    fake.enqueue(Interrupt("The answer is part"))
    result, rec = ask(assistant, "q")
    assert result.interrupted and result.answer == "The answer is part"
    (answer,) = rec.of("answer")
    assert answer.stopped_by == "interrupt" and "Ctrl-C" in answer.note
    assert assistant.memory.turns[-1].messages[-1]["content"].startswith("The answer is part")
    fake.text("next")
    ask(assistant, "next question")
    assert_valid_conversation(fake.requests[-1]["messages"][1:])


def test_ctrl_c_while_the_model_library_loads_says_no_answer_arrived(assistant, fake):
    def slow_import() -> None:
        raise KeyboardInterrupt  # Ctrl-C during the first question's seconds-long litellm import

    fake.prepare = slow_import
    result, rec = ask(assistant, "q")
    assert result.interrupted and result.answer == ""
    (answer,) = rec.of("answer")
    assert answer.note == "Stopped by Ctrl-C before an answer arrived."
    assert rec.of("usage") == []  # nothing reached the model: no "tokens: 0 in · 0 out" line
    del fake.prepare
    fake.text("fine")
    assert ask(assistant, "again")[0].answer == "fine"
    assert_valid_conversation(fake.requests[-1]["messages"][1:])


def test_ctrl_c_at_the_approval_prompt_closes_open_tool_calls(assistant, fake):
    def interrupt(proposal: Any) -> Outcome:
        raise KeyboardInterrupt

    fake.tools(("propose_code", {"code": "y = 1"}), ("list_globals", {}))
    result, _ = ask(assistant, "q", approve=interrupt)
    assert result.interrupted
    assert_valid_conversation(result.messages)
    tool_msgs = [m for m in result.messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == ["Cancelled by the user.", "Cancelled by the user."]


def test_ctrl_c_at_the_approval_prompt_says_declined_and_does_not_repeat_the_text_shown(assistant, fake):
    def interrupt(proposal: Any) -> Outcome:
        raise KeyboardInterrupt

    fake.tool("propose_code", {"code": "y = 1"}, text="I will set y.")
    fake.text("asked again")
    _, rec = ask(assistant, "q", approve=interrupt)
    (answer,) = rec.of("answer")
    assert answer.note == "Declined with Ctrl-C; the model was not asked again."
    assert answer.text == ""  # the text before the proposal is on screen above its panel already
    assert len(fake.requests) == 1 and len(fake.queue) == 1


# -- the approval gate through the controller ----------------------------------------------------------------
def _propose(fake: FakeLLM) -> None:
    fake.tool("propose_code", {"code": "fixed = x * 2", "explanation": "Doubles x."})


def test_approval_run_executes_as_user_input_and_reports_back(ctrl, fake, recorder, session):
    session.run("x = 21")
    recorder.decision = "run"
    _propose(fake)
    fake.text("Done: fixed is 42.")
    ctrl.ask("make fixed")
    (proposal,) = [e.proposal for e in recorder.of("approval_required")]
    assert proposal.code == "fixed = x * 2" and proposal.explanation == "Doubles x."
    assert session.namespace["fixed"] == 42
    assert session.history[-1].source == "fixed = x * 2"
    told = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert f"input [{session.history[-1].number}]" in told and "succeeded" in told


def test_approval_edit_puts_the_code_in_the_python_buffer(ctrl, fake, recorder, session):
    session.run("x = 21")
    recorder.decision = "edit"
    ctrl.set_mode(Mode.ASSISTANT)
    _propose(fake)
    ctrl.ask("make fixed")
    assert recorder.next_input == "fixed = x * 2"
    assert ctrl.mode is Mode.PYTHON
    assert "fixed" not in session.namespace
    assert recorder.of("answer")[-1].text == EDIT_ANSWER
    assert len(fake.requests) == 1


def test_approval_no_leaves_the_session_unchanged(ctrl, fake, recorder, session):
    session.run("x = 21")
    before = dict(session.namespace)
    _propose(fake)
    fake.text("OK, not changed.")
    ctrl.ask("make fixed")
    assert "fixed" not in session.namespace and session.namespace.keys() == before.keys()
    told = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "declined" in told


def test_propose_code_is_a_listed_but_not_executable_capability(session):
    from pyaichat.capabilities import call, get, tool_schemas

    assert get("propose_code") is not None and not get("propose_code").executable
    schema = next(s for s in tool_schemas() if s["function"]["name"] == "propose_code")
    assert set(schema["function"]["parameters"]["properties"]) == {"code", "explanation"}
    result = call(session, "propose_code", {"code": "x = 1"})
    assert not result.ok and "x" not in session.namespace


def test_memory_carries_earlier_turns_and_clear_forgets(assistant, fake):
    fake.text("first answer").text("second answer").text("third")
    ask(assistant, "first question")
    ask(assistant, "second question")
    contents = [m["content"] for m in fake.requests[1]["messages"][1:]]
    # remembered turns as they were asked; the session picture goes with the newest question only
    assert contents[:2] == ["first question", "first answer"]
    assert contents[2].startswith("<data>\n## Session") and contents[2].endswith(
        "## Question\nsecond question"
    )
    assistant.clear()
    ask(assistant, "third question")
    (only,) = fake.requests[2]["messages"][1:]
    assert only["content"].endswith("## Question\nthird question")


def test_secrets_in_the_namespace_never_reach_the_model(assistant, fake, session):
    session.run(
        'OPENAI_API_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"\n'
        'db_url = "postgresql://admin:hunter2secret@db.example.com/prod"'
    )
    fake.tools(("get_repr", {"expr": "db_url"}), ("get_repr", {"expr": "OPENAI_API_KEY"})).text("done")
    ask(assistant, "what is in @db_url and OPENAI_API_KEY?")
    sent = json.dumps([r["messages"] for r in fake.requests])
    assert "hunter2secret" not in sent
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in sent
    assert "db.example.com" in sent  # the non-secret part is still visible


def test_sent_and_trace_describe_the_last_turn(assistant, fake, session):
    session.run("x = 1")
    fake.tool("get_repr", {"expr": "x"}).text("one")
    ask(assistant, "x?")
    bodies = [json.loads(b) for b in assistant.sent_json()]
    assert [b["messages"] for b in bodies] == [r["messages"] for r in fake.requests]
    assert bodies[0]["model"] == "fake/model" and bodies[0]["tools"]
    trace = assistant.trace_text()
    assert "→ get_repr(x)" in trace and "chars" in trace and "ms" in trace


def test_usage_and_cost_accumulate(session, config):
    fake = FakeLLM(cost=0.002).text("a").text("b")
    assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    ask(assistant, "1")
    ask(assistant, "2")
    assert assistant.totals.prompt_tokens == 200 and abs(assistant.totals.cost_usd - 0.004) < 1e-12
    assert "$0.004000" in assistant.cost_text()


def test_no_model_configured_is_one_sentence(session, config):
    config = config.replace(model=None)
    assistant = Assistant(config, session)
    rec = Recorder()
    assert assistant.ask("hi", Front(rec.emit, never_approve)) is None
    (err,) = rec.of("error")
    assert err.kind == "no_model" and "/model" in err.message and "PYAICHAT_MODEL" in err.message


def test_usage_event_reports_model_and_tokens(assistant, fake):
    fake.enqueue(LLMReply(text="x", usage=Usage(1, 2)))
    _, rec = ask(assistant, "q")
    (usage,) = rec.of("usage")
    assert usage.model == "fake/model"


def test_a_model_switch_applies_at_the_next_question(session, config):
    made: list[str] = []

    def factory(cfg: Any) -> FakeLLM:
        made.append(cfg.model)
        return FakeLLM(model=cfg.model).text("hi")

    assistant = Assistant(config, session, llm_factory=factory)
    ask(assistant, "one")
    assistant.settings.replace(
        config.replace(model="other/model")
    )  # /model: the controller hands it the new one
    _, rec = ask(assistant, "two")
    assert made == ["fake/model", "other/model"] and rec.of("usage")[0].model == "other/model"


def test_an_empty_reply_is_named_not_shown_as_nothing(assistant, fake):
    fake.text("")
    result, rec = ask(assistant, "q")
    assert result.answer.startswith("(The model returned an empty reply")
    assert rec.of("answer")[0].text == result.answer


def test_a_stream_running_past_the_deadline_is_cut_with_its_text_kept(session):
    now = [0.0]

    def late_reply() -> LLMReply:
        now[0] = 100.0  # the reply starts streaming after the deadline
        return LLMReply(text="Partial words that keep coming")

    env, rec = _timed_env(FakeLLM().enqueue(late_reply), now)
    result = Turn(env, "q").run()
    assert result.stopped_by == "turn_timeout"
    shown = "".join(e.text for e in rec.of("answer_chunk"))
    assert shown and "Partial words that keep coming".startswith(shown)
    assert result.answer == shown and rec.of("error") == []


def test_repeated_tool_call_ids_are_made_unique(assistant, fake):
    from pyaichat.agent.llm import ToolCall

    same = [ToolCall("call_0", "list_globals", "{}")]
    fake.enqueue(LLMReply(tool_calls=same), LLMReply(tool_calls=list(same))).text("done")
    result, _ = ask(assistant, "q")
    ids = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert_valid_conversation(result.messages)


def test_a_failing_call_is_not_run_twice_but_may_run_again_once_the_user_ran_code():
    ran: list[dict[str, Any]] = []

    def run_tool(name: str, args: dict[str, Any], *, images: bool) -> CapabilityResult:
        ran.append(args)
        return CapabilityResult(name=name, ok=False, error="NameError: name 'x' is not defined")

    fake = FakeLLM()
    fake.tools(("eval_expr", {"expr": "x", "n": 1}), ("eval_expr", {"n": 1, "expr": "x"}))  # the same call
    fake.tool("propose_code", {"code": "x = 1"})
    fake.tool("eval_expr", {"expr": "x", "n": 1}).text("done")
    env, rec = timed_env(fake, [0.0], run_tool)
    env.decide = lambda proposal: Outcome(proposal, "ran")
    result = Turn(env, "q").run()
    assert result.answer == "done" and len(ran) == 2  # once before the proposal ran, once after
    second = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"][1]["content"]
    assert "already failed" in second and "name 'x' is not defined" in second
    assert [e.error for e in rec.of("tool_end")][1] == "not run again: the same call failed above"
