"""Agent benchmarks: loop overhead per step, tokens sent per turn, and the session picture's cost.

Run: ``.venv/bin/python benchmarks/agent.py`` (about 20 s; prints figures, asserts nothing).

* Loop overhead per step, in process: a scripted model that answers instantly; overhead = wall time of
  ``Assistant.ask`` minus the time inside the model and the tools, divided by the model requests.
* Loop overhead per step over HTTP: the real litellm client against the scripted OpenAI-compatible server on
  127.0.0.1; overhead = wall time minus the server's own handling time minus tool time (so it includes
  litellm's client-side work and the local HTTP round trip).
* Tokens sent per turn for the standard scenario (a DataFrame, a failed merge, "why is `merged` empty?"),
  counted with litellm's tokenizer for gpt-4o-mini on the exact request bodies, with a small and a 10M-row
  DataFrame.
* The session picture with 10,000 variables and a 10M-row DataFrame (budget: ≤ 50 ms, ≤ 2,000 tokens).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["OPENAI_API_KEY"] = "sk-test"

from fakes.fake_llm import FakeLLM  # noqa: E402
from fakes.openai_server import ScriptedServer  # noqa: E402
from pyaichat.agent.assistant import Assistant, Front  # noqa: E402
from pyaichat.agent.llm import LiteLLMClient, load_litellm  # noqa: E402
from pyaichat.agent.llm.loader import import_litellm, prime  # noqa: E402
from pyaichat.capabilities.picture import session_picture  # noqa: E402
from pyaichat.configuration.config import Config  # noqa: E402
from pyaichat.proposal import Outcome, Proposal  # noqa: E402
from pyaichat.session import Session  # noqa: E402

QUESTION = "why is `merged` empty?"
SETUP = """
import pandas as pd
orders = pd.DataFrame({"order_id": range(1, N + 1), "customer_id": [f"C{i % 500:04d}" for i in range(N)],
                       "amount": [round(10 + (i % 97) * 1.5, 2) for i in range(N)]})
customers = pd.DataFrame({"id": [f"c{i:04d}" for i in range(500)], "name": [f"name {i}" for i in range(500)]})
"""
FAILED_MERGE = 'merged = orders.merge(customers, on="id")'  # KeyError: 'id'
EMPTY_MERGE = 'merged = orders.merge(customers, left_on="customer_id", right_on="id")'
STEPS = [
    ("get_repr", {"expr": "merged"}),
    ("eval_expr", {"expr": "orders.customer_id.head(3).tolist()"}),
    ("eval_expr", {"expr": "customers.id.head(3).tolist()"}),
]
ANSWER = (
    "`merged` is empty because the keys never match: `orders.customer_id` holds upper-case ids such as "
    "`C0001` "
    "while `customers.id` holds lower-case ids such as `c0001`.\n\n```python\n"
    "merged = orders.merge(customers.assign(id=customers.id.str.upper()), "
    "left_on='customer_id', right_on='id')\n```"
)


def scenario(rows: int) -> Session:
    session = Session(echo=lambda value: None)
    session.settings.replace(Config(model="openai/gpt-4o-mini", audit=False))
    session.run(SETUP.replace("N + 1", str(rows + 1)).replace("range(N)", f"range({rows})"))
    with contextlib.redirect_stderr(io.StringIO()):  # the failed merge's traceback is expected
        session.run(FAILED_MERGE)
    session.run(EMPTY_MERGE)
    return session


def no_approval(proposal: Proposal) -> Outcome:
    return Outcome(proposal, "declined")


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} ms (min {min(values):.2f}, n={len(values)})"


def in_process_overhead(turns: int = 200) -> list[float]:
    session = scenario(1000)
    fake = FakeLLM(model="fake/model")
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: fake)
    per_step = []
    for _ in range(turns):
        for name, args in STEPS:
            fake.tool(name, args)
        fake.text(ANSWER)
        started = time.perf_counter()
        result = assistant.ask(QUESTION, Front(lambda e: None, no_approval))
        wall = (time.perf_counter() - started) * 1000
        inside = sum(s.duration_ms for s in result.steps)
        per_step.append((wall - inside) / sum(1 for s in result.steps if s.kind == "llm"))
        assistant.clear()
    return per_step


def http_overhead(server: ScriptedServer, turns: int = 20) -> tuple[list[float], list[float]]:
    session = scenario(1000)
    session.settings.replace(api_base=server.base_url)
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: LiteLLMClient(cfg))
    per_step, server_time = [], []
    for turn in range(turns + 1):
        server.reset()
        for name, args in STEPS:
            server.tool(name, args)
        server.text(ANSWER)
        started = time.perf_counter()
        result = assistant.ask(QUESTION, Front(lambda e: None, no_approval))
        wall = (time.perf_counter() - started) * 1000
        assert result is not None and result.answer == ANSWER, result
        srv_ms = sum(r.server_ms for r in server.requests)
        tools_ms = sum(s.duration_ms for s in result.steps if s.kind == "tool")
        if turn:  # the first turn warms connections and caches
            per_step.append((wall - srv_ms - tools_ms) / len(server.requests))
            server_time.append(srv_ms / len(server.requests))
        assistant.clear()
    return per_step, server_time


def tokens_per_turn(server: ScriptedServer, rows: int) -> dict[str, Any]:
    litellm = load_litellm()
    session = scenario(rows)
    session.settings.replace(api_base=server.base_url)
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: LiteLLMClient(cfg))
    server.reset()
    for name, args in STEPS:
        server.tool(name, args)
    server.text(ANSWER)
    assistant.ask(QUESTION, Front(lambda e: None, no_approval))
    counts = []
    for body in server.bodies:
        counts.append(
            litellm.token_counter(model="gpt-4o-mini", messages=body["messages"], tools=body.get("tools"))
        )
    system = server.bodies[0]["messages"][0]["content"]
    tools_tokens = litellm.token_counter(model="gpt-4o-mini", text=json.dumps(server.bodies[0].get("tools")))
    return {
        "requests": len(counts),
        "per_request": counts,
        "total": sum(counts),
        "system_tokens": litellm.token_counter(model="gpt-4o-mini", text=system),
        "tool_schema_tokens": tools_tokens,
    }


def prefix_reuse(server: ScriptedServer) -> list[tuple[str, int, int]]:
    """How much of each request repeats the one before it, as a prompt cache sees it: (which pair, tokens of
    the shared prefix, tokens of the later request). The prefix is the tool schemas plus the leading messages
    that are identical; two turns of the standard scenario, so the first request of turn two is compared
    with the last of turn one."""
    litellm = load_litellm()
    session = scenario(1000)
    session.settings.replace(api_base=server.base_url)
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: LiteLLMClient(cfg))
    server.reset()
    for _ in range(2):
        for name, args in STEPS:
            server.tool(name, args)
        server.text(ANSWER)
        assistant.ask(QUESTION, Front(lambda e: None, no_approval))
    bodies = server.bodies
    out = []
    for i in range(1, len(bodies)):
        before, after = bodies[i - 1], bodies[i]
        shared = 0
        if before.get("tools") == after.get("tools"):
            for a, b in zip(before["messages"], after["messages"], strict=False):
                if a != b:
                    break
                shared += 1
        prefix = after["messages"][:shared]
        tools = after.get("tools")
        shared_tokens = (
            litellm.token_counter(model="gpt-4o-mini", messages=prefix, tools=tools) if shared else 0
        )
        total = litellm.token_counter(model="gpt-4o-mini", messages=after["messages"], tools=tools)
        out.append((f"{i}->{i + 1}", shared_tokens, total))
    return out


def picture_cost() -> tuple[list[float], int, int]:
    import numpy as np
    import pandas as pd

    session = Session(echo=lambda value: None)
    session.settings.replace(Config(audit=False))
    for i in range(10_000):
        session.namespace[f"var_{i}"] = i
    n = 10_000_000
    session.namespace["big"] = pd.DataFrame(
        {"a": np.arange(n), "b": np.zeros(n), "c": np.ones(n, dtype="int8")}
    )
    session.run("small = big.head()")
    times = []
    text = ""
    for _ in range(30):
        started = time.perf_counter()
        text = session_picture(session, session.config)
        times.append((time.perf_counter() - started) * 1000)
    tokens = load_litellm().token_counter(model="gpt-4o-mini", text=text)
    return times, tokens, len(text)


def ctrl_c_latency(server: ScriptedServer, runs: int = 5) -> list[float]:
    """Time from SIGINT (sent while the model's stream is stalled mid-answer) to ``ask`` returning."""
    import signal
    import threading

    from fakes.openai_server import Reply

    session = scenario(10)
    session.settings.replace(api_base=server.base_url)
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: LiteLLMClient(cfg))
    latencies = []
    for _ in range(runs):
        server.reset()
        server.enqueue(Reply(fault="hang", text="The answer is long"))
        sent: list[float] = []

        def interrupt(sent: list[float] = sent) -> None:
            if server.hanging.wait(10):
                time.sleep(0.05)  # let the client block on the stalled stream
                sent.append(time.perf_counter())
                os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        result = assistant.ask(QUESTION, Front(lambda e: None, no_approval))
        latencies.append((time.perf_counter() - sent[0]) * 1000)
        server.release()
        assert result is not None and result.interrupted
    return latencies


def main() -> None:
    started = time.perf_counter()
    litellm = import_litellm()  # the import alone, in this thread (load_litellm would also prime)
    imported = time.perf_counter()
    prime(litellm)
    print(
        f"litellm import: {imported - started:.2f} s, then priming its lazy imports: "
        f"{time.perf_counter() - imported:.2f} s (both in the background once the user enters Assistant mode)"
    )
    steps = in_process_overhead()
    print(f"loop overhead per step, in process (scripted model, 4 requests/turn): {ms(steps)}")
    with ScriptedServer() as server:
        per_step, server_ms = http_overhead(server)
        print(f"loop overhead per step over HTTP, server time excluded: {ms(per_step)}")
        print(f"  (scripted server's own time per request: {ms(server_ms)})")
        print(f"Ctrl-C during a stalled stream to the answer returning: {ms(ctrl_c_latency(server))}")
        for rows in (1_000, 10_000_000):
            t = tokens_per_turn(server, rows)
            print(
                f"tokens sent, standard scenario, orders with {rows:,} rows: "
                f"{t['total']:,} in {t['requests']} "
                f"requests {t['per_request']} (system prompt+picture {t['system_tokens']:,}, "
                f"tool schemas {t['tool_schema_tokens']:,} per request)"
            )
        pairs = prefix_reuse(server)
        shares = [shared / total for _, shared, total in pairs]
        print(
            "prompt prefix reused from the previous request (tool schemas + identical leading messages), "
            "two turns of the standard scenario: "
            + ", ".join(f"{name}: {shared:,}/{total:,}" for name, shared, total in pairs)
            + f"; within a turn min {min(shares[:3]):.0%}, across turns {shares[3]:.0%}"
        )
    times, tokens, chars = picture_cost()
    print(
        f"session picture, 10,000 variables + 10M-row DataFrame: {ms(times)}; "
        f"{tokens:,} tokens ({chars:,} chars)"
    )


if __name__ == "__main__":
    main()
