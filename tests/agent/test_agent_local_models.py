"""What the loop does with local-model habits: loops, tool calls written as text, the reply cap, small
windows."""

from __future__ import annotations

from typing import Any

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder, never_approve
from fakes.turn_env import timed_env
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.budget import LEAN_TOOLS
from pyaichat.agent.llm import LLMReply
from pyaichat.agent.loop import Turn
from pyaichat.agent.repetition import LOOP_NOTE


def ask(assistant: Assistant, question: str) -> tuple[Any, Recorder]:
    rec = Recorder()
    return assistant.ask(question, Front(rec.emit, never_approve)), rec


def shown(rec: Recorder) -> str:
    return "".join(e.text for e in rec.of("answer_chunk"))


def test_a_looping_reply_is_cut_early_with_one_sentence(assistant, fake, session):
    session.run("df = None")
    line = "The type of the variable `df` is `NoneType`.\n"
    fake.text(line * 200)
    result, rec = ask(assistant, "what is df?")
    assert result.stopped_by == "repetition" and result.note == LOOP_NOTE
    assert result.answer == line.strip()
    assert shown(rec).count("NoneType") <= 4  # the user saw a few lines, not two hundred
    (answer,) = rec.of("answer")
    assert answer.note == LOOP_NOTE
    assert result.messages[-1]["role"] == "assistant"  # the conversation stays valid for the next question
    fake.text("df is None.")
    again, _ = ask(assistant, "and now?")
    assert again.answer == "df is None."


def test_a_loop_after_a_tool_call_keeps_what_the_tool_found(assistant, fake, session):
    session.run("x = 41")
    fake.tool("get_repr", {"expr": "x"}).text("x x x x x x x x " * 30)
    result, _ = ask(assistant, "x?")
    assert result.stopped_by == "repetition"
    assert [s.kind for s in result.steps] == ["llm", "tool", "llm"]


def test_a_hermes_tool_call_written_as_text_is_run_and_its_prose_shown(assistant, fake, session):
    session.run("sales = {'north': 10, 'south': 20}")
    fake.text(
        "Let me look at sales.\n<tool_call>\n"
        '{"name": "get_repr", "arguments": {"expr": "sales"}}\n</tool_call>'
    ).text("south has the highest revenue (20).")
    result, rec = ask(assistant, "which region has the highest revenue?")
    (end,) = rec.of("tool_end")
    assert end.name == "get_repr" and end.ok and "'south': 20" in end.text
    assert result.answer == "south has the highest revenue (20)."
    assert "Let me look at sales." in shown(rec) and "<tool_call>" not in shown(rec)
    # the call the model wrote as text goes back as text, with the result as an observation
    second = fake.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": fake_text_of(second[-2])}
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith('<observation tool="get_repr">')


def fake_text_of(message: dict[str, Any]) -> str:
    assert "<tool_call>" in message["content"]
    return message["content"]


def test_a_pythonic_call_in_the_text_protocol_is_run(session, config):
    session.run("x = 41")
    fake = FakeLLM(native=False)
    fake.text('get_repr(expr="x")').text("41.")
    result, rec = ask(Assistant(config, session, llm_factory=lambda cfg: fake), "x?")
    assert [e.name for e in rec.of("tool_end")] == ["get_repr"] and result.answer == "41."


def test_an_unknown_tool_in_a_tagged_call_is_never_run(assistant, fake, session):
    fake.text('<tool_call>{"name": "shell", "arguments": {"cmd": "rm -rf /"}}</tool_call>').text("ok")
    result, rec = ask(assistant, "q")
    (end,) = rec.of("tool_end")
    assert not end.ok and "no tool named 'shell'" in end.error
    assert result.answer == "ok"


def test_a_reply_cut_by_the_cap_says_so(assistant, fake):
    fake.enqueue(LLMReply(text="The answer is long and", finish_reason="length"))
    result, _ = ask(assistant, "q")
    assert result.answer == "The answer is long and" and result.stopped_by == "max_tokens"
    assert "max_tokens" in result.note


def WindowedLLM(window: int) -> FakeLLM:
    """A scripted model that reports a context window."""
    return FakeLLM(window=window)


def test_a_small_window_gets_the_lean_tool_set(config, session):
    fake = WindowedLLM(window=1600)  # room for about 1,200 prompt tokens: the lean set, not every tool
    fake.text("ok")
    result, _ = ask(Assistant(config, session, llm_factory=lambda cfg: fake), "q")
    assert result.answer == "ok"
    names = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert names == set(LEAN_TOOLS)


def test_a_window_too_small_for_anything_is_one_clear_sentence(config, session):
    fake = WindowedLLM(window=600)
    result, _ = ask(Assistant(config, session, llm_factory=lambda cfg: fake), "q")
    assert fake.requests == []  # nothing was sent that the server would silently truncate
    assert result.stopped_by == "context_tokens"
    assert "600-token window" in result.note and result.note.count(".") == 1


def test_a_large_window_keeps_every_tool(config, session):
    fake = WindowedLLM(window=32_000)
    fake.text("ok")
    ask(Assistant(config, session, llm_factory=lambda cfg: fake), "q")
    assert len(fake.requests[0]["tools"]) > len(LEAN_TOOLS)


def test_the_request_prefix_is_byte_identical_across_steps_and_turns(assistant, fake, session):
    import json

    session.run("x = 41")
    fake.tool("get_repr", {"expr": "x"}).text("41.")
    ask(assistant, "x?")
    session.run("y = 2")  # the session picture changes between turns
    fake.text("2.")
    ask(assistant, "y?")
    first, second, third = fake.requests
    prefix = json.dumps([first["tools"], first["messages"][0]])
    assert json.dumps([second["tools"], second["messages"][0]]) == prefix
    assert json.dumps([third["tools"], third["messages"][0]]) == prefix
    # the second turn's request starts with the whole first turn as it was sent, minus its session picture
    assert third["messages"][1]["content"] == "x?"
    assert "y: int" in third["messages"][-1]["content"]


def test_the_window_is_asked_for_after_the_model_library_is_loaded(config, session):
    order: list[str] = []

    class Ordered(FakeLLM):
        def prepare(self) -> None:
            order.append("prepare")

        def context_window(self) -> int | None:
            order.append("window")
            return self.window

    fake = Ordered(window=32_000)
    fake.text("ok")
    rec = Recorder()
    Assistant(config, session, llm_factory=lambda cfg: fake).ask("q", Front(rec.emit, never_approve))
    assert order[:2] == ["prepare", "window"]
    assert rec.of("state")[0].detail == "loading the model library"


def test_notes_about_a_cut_reply_are_not_fed_back_to_the_model(assistant, fake):
    """SmolLM2 copied "(the answer reached the reply length cap …)" from its memory into its next answer."""
    fake.enqueue(LLMReply(text="A long answer", finish_reason="length"))
    fake.text("line one is here now\n" * 20).text("ok")
    ask(assistant, "q1")
    ask(assistant, "q2")
    ask(assistant, "q3")
    remembered = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "assistant"]
    assert remembered == ["A long answer", "line one is here now"]


def test_a_stream_cut_at_the_deadline_is_the_deadlines_sentence():
    """The HTTP read timeout fires between chunks as a "stream cut": at the deadline that is the bound."""
    from pyaichat.errors import LLMStreamCut

    now = [0.0]
    fake = FakeLLM()

    def cut() -> LLMReply:
        now[0] = 11.0  # the 10 s deadline passed while the stream was silent
        raise LLMStreamCut("The provider broke off its reply in the middle; ask again.")

    fake.enqueue(cut)
    env, rec = timed_env(fake, now, run_tool=None)
    result = Turn(env, "q").run()
    assert result.stopped_by == "turn_timeout" and not rec.of("error")
    assert result.steps[-1].detail == "cut at the turn's deadline"  # /trace: the bound, not a provider fault
