"""The one budget of a turn: history fitted by the model's own token count, the answer cap, the bounds."""

from __future__ import annotations

import json
from typing import Any

from fakes.fake_llm import FakeLLM
from pyaichat.agent.budget import Budget, Limits, Stop
from pyaichat.agent.llm import Request, Usage
from pyaichat.agent.protocol import NATIVE, TEXT, Prompt, Remembered

NOW = [{"role": "user", "content": "now"}]


def turn(n: int, size: int = 100) -> Remembered:
    messages = [
        {"role": "user", "content": f"q{n}"},
        {"role": "assistant", "tool_calls": [{"id": f"c{n}", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * size},
        {"role": "assistant", "content": f"a{n}"},
    ]
    compact = [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return Remembered(messages, compact)


def budget(llm: Any, history: list[Remembered], **limits: Any) -> Budget:
    prompt = Prompt(system="s", schemas=[], context="picture", history=history)
    made = Budget(llm, Limits(**limits), prompt)
    made.start()
    return made


def request(b: Budget, protocol: Any = NATIVE, **spent: Any) -> Request | Stop:
    return b.next_request(
        protocol,
        NOW,
        step=spent.get("step", 0),
        spent=spent.get("usage", Usage()),
        requests=spent.get("n", 0),
    )


def contents(req: Request) -> list[Any]:
    return [m.get("content") for m in req.messages]


def test_newest_turns_stay_whole_older_ones_are_compacted_then_dropped():
    fake = FakeLLM()
    req = request(budget(fake, [turn(1, 5000), turn(2, 5000), turn(3, 100)], context_tokens=1000))
    assert isinstance(req, Request)
    got = contents(req)
    assert got[0] == "s" and got[-1] == "picture\n\n## Question\nnow"
    assert "x" * 100 in got  # the newest remembered turn is whole
    assert "q2" in got and "a2" in got and "x" * 5000 not in got  # an older one, compacted
    assert fake.count_tokens(req.messages, None) <= 1000


def test_the_text_protocol_replays_native_turns_compacted():
    req = request(budget(FakeLLM(), [turn(1)], context_tokens=1000), TEXT)
    assert isinstance(req, Request)
    assert not any(m.get("role") == "tool" or m.get("tool_calls") for m in req.messages)
    assert [m["content"] for m in req.messages[1:3]] == ["q1", "a1"]


def test_the_oldest_turns_are_dropped_until_the_request_fits():
    req = request(budget(FakeLLM(), [turn(i) for i in range(100)], context_tokens=1000))
    assert isinstance(req, Request)
    assert len(req.messages) < 200 and req.messages[-2]["content"] == "a99"


class CostlyWhole(FakeLLM):
    """Counts a whole request higher than the sum of its parts (as real tokenizers add per-message overhead):
    history chosen by the parts' counts then does not fit, and only the recount of the request shows it."""

    def count_tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        return super().count_tokens(messages, tools) + (15 * len(messages) if len(messages) > 4 else 0)


def test_a_recount_over_the_limit_drops_one_more_turn_instead_of_stopping():
    fake = CostlyWhole()
    history = [turn(i, 200) for i in range(8)]
    req = request(budget(fake, history, context_tokens=700))
    assert isinstance(req, Request)  # not a context stop: older turns went instead
    assert fake.count_tokens(req.messages, None) <= 700
    assert req.messages[-2]["content"] == "a7"  # still the newest remembered turn
    assert "q0" not in contents(req)


def test_this_turn_alone_over_the_limit_is_a_stop_with_one_sentence():
    b = budget(FakeLLM(), [], context_tokens=1000)
    stop = b.next_request(
        NATIVE, [{"role": "user", "content": "why? " * 2000}], step=0, spent=Usage(), requests=0
    )
    assert isinstance(stop, Stop) and stop.bound == "context_tokens"
    assert "context budget of 1,000 tokens" in stop.note and stop.note.count(".") == 1


def test_a_question_too_long_by_itself_is_told_clear_cannot_help_and_to_ask_about_a_variable():
    """``/clear`` forgets earlier turns, which ``_fit`` drops anyway: for a question that does not fit by
    itself the way out is the text in a variable, asked about as ``@it``."""
    b = budget(FakeLLM(window=4096), [turn(1), turn(2)], context_tokens=100_000)
    stop = b.next_request(
        NATIVE, [{"role": "user", "content": "why? " * 20_000}], step=0, spent=Usage(), requests=0
    )
    assert isinstance(stop, Stop) and stop.bound == "context_tokens"
    note = stop.note
    assert "the question itself is about" in note and "4,096-token window" in note
    assert "/clear cannot help" in note and "@it" in note and "larger window" in note
    assert note.count(".") == 1


def test_a_small_question_in_a_tiny_window_is_not_told_to_move_its_text():
    b = Budget(FakeLLM(window=600), Limits(), Prompt("s" * 4000, [], "picture"))
    b.start()
    stop = b.next_request(NATIVE, NOW, step=0, spent=Usage(), requests=0)
    assert isinstance(stop, Stop)
    assert "@it" not in stop.note and "/clear" not in stop.note and "larger window" in stop.note


def test_the_answer_cap_is_the_setting_or_what_the_window_has_left():
    fake = FakeLLM(window=4096)
    b = Budget(fake, Limits(context_tokens=8000, max_tokens=3000), Prompt("s", [], "y" * 11_600))
    b.start()
    assert b.prompt_limit == 4096 - 1024  # room for an answer: a quarter of the window at most
    req = request(b)
    assert isinstance(req, Request)
    tokens = fake.count_tokens(req.messages, req.tools)
    assert tokens > 2900 and req.max_tokens == 4096 - tokens  # less than the setting
    req = request(budget(FakeLLM(), [], max_tokens=200))
    assert isinstance(req, Request) and req.max_tokens == 200  # no window known: the setting


def test_the_money_bound_counts_a_typical_request_once():
    b = Budget(
        FakeLLM(),
        Limits(budget_usd=0.035),
        Prompt("s", [], ""),
        spent_before=Usage(cost_usd=0.02),
        requests_before=2,
    )
    b.start()
    # 0.02 spent in 2 requests: a typical request costs 0.01, and 0.015 is left
    assert isinstance(request(b), Request)
    stop = request(b, usage=Usage(cost_usd=0.01), n=1)  # now 0.03 spent in 3: 0.005 left, less than 0.01
    assert isinstance(stop, Stop) and stop.bound == "budget_usd"


def test_steps_and_time_are_bounds_too():
    now = [0.0]
    b = Budget(FakeLLM(), Limits(max_steps=2, turn_timeout=5), Prompt("s", [], ""), clock=lambda: now[0])
    b.start()
    assert isinstance(request(b, step=1), Request)
    assert request(b, step=2).bound == "max_steps"
    now[0] = 6.0
    assert request(b, step=1).bound == "turn_timeout"


def test_the_request_is_masked():
    prompt = Prompt(
        system="s",
        schemas=[],
        context="token sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        mask=lambda t: t.replace("sk-proj", "<redacted>"),
    )
    b = Budget(FakeLLM(), Limits(), prompt)
    b.start()
    req = request(b)
    assert isinstance(req, Request) and "sk-proj" not in json.dumps(req.messages)
