"""``python -m pyaichat`` piped, through the real litellm path, against a real local model (SmolLM2-135M on
llama-cpp-python's server).

What a 135M model *says* cannot be asserted; what pyaichat *does* with it can: every request is valid, capped
and fits the server's window, steps and time stay within their bounds, each question ends in an answer or
one clear sentence, the session is unchanged, and no traceback reaches the user.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fakes.sent import expand_sent
from pyaichat.agent.repetition import LINE_REPEATS
from realmodel.local_server import N_CTX

DATA = (
    "import pandas as pd\n"
    'sales = pd.DataFrame({"region": ["north", "south", "east"], "revenue": [120, 340, 90]})\n'
    "before = sales.to_json()\n"
)
CHECK = (
    'print("==CHECK==", sales.to_json() == before, sorted(k for k in globals() if not k.startswith("_")))\n'
)
KNOWN_NOTES = (
    "Stopped: the model kept repeating itself",
    "The answer reached the reply length cap",
    "Stopped after",
)


def sent_bodies(text: str) -> list[dict[str, Any]]:
    """The JSON bodies ``/sent`` printed (each after a "Request i of n" line)."""
    bodies = []
    decoder = json.JSONDecoder()
    for m in re.finditer(r"^Request (\d+) of \d+(?: \(for [^\n]*\))?\n", text, re.M):
        if m.group(1) == "1":  # a new /sent: its references are to its own requests
            bodies.append([])
        body, _ = decoder.raw_decode(text[m.end() :])
        bodies[-1].append(body)
    return [body for shown in bodies for body in expand_sent(shown)]


def trace_steps(text: str) -> list[tuple[int, int]]:
    """(prompt tokens, completion tokens) the server reported for each model step in ``/trace``."""
    return [
        (int(a), int(b)) for a, b in re.findall(r"model openai/\S+: [\d,]+ ms, (\d+) in / (\d+) out", text)
    ]


def assert_valid_requests(bodies: list[dict[str, Any]], max_tokens: int) -> None:
    assert bodies, "nothing was sent"
    for body in bodies:
        assert body["model"] == "openai/smollm2"
        assert 16 <= body["max_tokens"] <= max_tokens  # every request carries a reply cap
        assert body["temperature"] == 0 and body["seed"] == 1
        messages = body["messages"]
        assert messages[0]["role"] == "system" and messages[1]["role"] in ("user", "assistant")
        roles = [m["role"] for m in messages]
        assert roles[-1] in ("user", "tool"), roles  # the model is always asked to speak next
        assert all(isinstance(m.get("content"), str) or m.get("tool_calls") for m in messages)
    systems = {json.dumps(b["messages"][0]) + json.dumps(b.get("tools")) for b in bodies}
    assert len(systems) <= 2  # one prefix per protocol: the cache-friendly part never changes otherwise


def assert_no_loop_shown(output: str) -> None:
    """Whatever the model emitted, the user never sees a sentence-long line over and over."""
    shown = re.split(r"^Request 1 of \d+$", output, maxsplit=1, flags=re.M)[0]
    lines = [" ".join(line.split()) for line in shown.splitlines() if len(line.split()) >= 4]
    repeated = {line: lines.count(line) for line in set(lines) if lines.count(line) > LINE_REPEATS}
    assert not repeated, repeated


def assert_within_window(output: str, max_steps: int, max_tokens: int) -> None:
    steps = trace_steps(output)
    assert 1 <= len(steps) <= max_steps
    for prompt, completion in steps:
        assert prompt + max_tokens <= N_CTX  # prompt and the whole allowed answer fit the window
        assert completion <= max_tokens


def test_dataframe_question_and_a_follow_up(run_piped):
    script = (
        DATA
        + "/ask which region has the highest revenue in sales?\n/sent\n/trace\n"
        + 'print("==TURN2==")\n'
        + "/ask and which region has the lowest?\n/sent\n/trace\n"
        + CHECK
    )
    run = run_piped(script)
    out = run.stdout
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in out + run.stderr
    first, second = out.split("==TURN2==", 1)

    turn1, turn2 = sent_bodies(first), sent_bodies(second)
    assert_valid_requests(turn1 + turn2, 160)
    assert_within_window(first, 3, 160)
    assert_within_window(second, 3, 160)
    assert_no_loop_shown(first)
    assert_no_loop_shown(second)
    question1 = turn1[0]["messages"][-1]["content"]
    assert "sales: DataFrame 3×2: region str, revenue int64" in question1  # the picture reached the model
    assert question1.endswith("which region has the highest revenue in sales?")

    # the follow-up carries the first turn: its question, then the answer the model gave
    follow = turn2[0]["messages"]
    contents = [m.get("content") or "" for m in follow]
    assert "which region has the highest revenue in sales?" in contents
    assert follow[-1]["content"].endswith("and which region has the lowest?")
    assert any(m["role"] == "assistant" for m in follow[1:-1])

    # an answer (or one clear sentence) per question
    for part in (first, second):
        shown = part.split("/sent")[0] if "/sent" in part else part
        assert shown.strip()
    assert "==CHECK== True ['before', 'pd', 'sales']" in out  # the session is unchanged


def test_question_after_an_exception(run_piped):
    script = (
        DATA + 'sales["profit"].sum()\nprint("==ASK==")\n/ask why did that fail?\n/sent\n/trace\n' + CHECK
    )
    run = run_piped(script)
    assert run.returncode == 0, run.stderr
    before_ask, after_ask = run.stdout.split("==ASK==", 1)
    assert "KeyError" in before_ask + run.stderr  # the user's own error, shown in Python mode
    assert "Traceback" not in after_ask
    bodies = sent_bodies(after_ask)
    assert_valid_requests(bodies, 160)
    assert_within_window(after_ask, 3, 160)
    assert_no_loop_shown(after_ask)
    question = bodies[0]["messages"][-1]["content"]
    assert "Last error" in question and "KeyError" in question and "profit" in question
    assert "==CHECK== True ['before', 'pd', 'sales']" in after_ask


def test_the_turn_deadline_stops_a_slow_answer_and_the_session_goes_on(run_piped):
    script = (
        DATA
        + "/ask write a very long story about every row of sales, in great detail\n/trace\n"
        + "print(6 * 7)\n"
        + CHECK
    )
    run = run_piped(script, turn_timeout="3", max_tokens="1500")
    out = run.stdout
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in out + run.stderr
    (total,) = re.findall(r"^Total ([\d,]+) ms", out, re.M)
    # The deadline held. The HTTP read timeout is per read, so a server silent at the deadline (evaluating
    # the prompt, or starved of CPU) is noticed at most one read timeout (the time left, ≤ 3 s) later.
    assert int(total.replace(",", "")) <= 3000 + 3000 + 1000
    assert "broke off" not in out  # a cut at the deadline is the deadline's sentence, not a provider fault
    # one clear sentence says why it ended (unless the model finished on its own within 3 s)
    ended = [note for note in KNOWN_NOTES if note in out]
    assert len(ended) <= 1
    for note in ended:  # on a line of its own, after whatever answer there was
        assert re.search("^" + re.escape(note), out, re.M), out
    assert_no_loop_shown(out)
    assert "\n42\n" in out and "==CHECK== True ['before', 'pd', 'sales']" in out


def test_the_second_request_reuses_the_servers_prompt_cache(run_piped, model_server):
    model_server.mark()
    script = DATA + "/ask what columns does sales have?\n/ask how many rows does sales have?\n/sent\n"
    run = run_piped(script, tool_protocol="text")
    assert run.returncode == 0 and "Traceback" not in run.stdout + run.stderr
    reuse = model_server.prompt_reuse()
    assert len(reuse) >= 2
    cached, _ = reuse[1]
    system_tokens = model_server.tokenize_count(sent_bodies(run.stdout)[0]["messages"][0]["content"])
    assert system_tokens and cached >= system_tokens * 0.95  # at least the system prompt came from the cache
