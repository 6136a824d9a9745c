"""Time to the first token with the real local model: the first question of a session and a later one, and how
much of each request the server's prompt cache took (its own count of the tokens it evaluated).

Run: ``.venv/bin/python benchmarks/first_token.py [--before SRC] [--pairs 5] [--protocol auto text]``
(several minutes on 2 cores). It starts the SmolLM2-135M server of ``tests/realmodel`` (llama-cpp-python,
n_ctx 4096, 2 threads) once, then runs one fresh pyaichat session per sample in a child process: the server's
prompt cache is first filled with an unrelated prompt (so the session's first request finds nothing of its
own there, as after a restart or another program's requests), litellm is imported (a one-off the REPL does in
the background when Assistant mode is entered), and then the questions are asked through the real
``Assistant`` and litellm client, as a user's Enter asks them.

* ``TTFT``: from ``Assistant.ask`` to the first streamed token of the reply (the prompt's evaluation is
  most of it); ``answer``: to the first answer text the user sees.
* ``prompt``: the request's tokens as the server counted them (cached + evaluated); ``evaluated``: those
  it computed — the rest came from its prompt cache. llama.cpp logs both (``N prefix-match hit, remaining
  M prompt tokens to eval``; ``prompt eval time = … / M tokens``: llama.cpp's own timing of the prompt,
  ``prompt_n`` in llama-server's ``timings``).

With ``--before SRC`` (e.g. ``/tmp/lean-before/src``: ``git worktree add /tmp/lean-before 9c8cc44``) every
sample is a pair, that checkout's sources then this one's, one after the other, so a machine whose load drifts
weighs on both alike; the load average is printed with each pair. Medians of the pairs, and of the pairwise
ratios. ``--prefix`` instead runs one session of ten questions and a two-step turn and prints each request's
prompt and evaluated tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyaichat.agent.assistant import Front

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["OPENAI_API_KEY"] = "sk-local"

SETUP = (
    "import pandas as pd\n"
    'sales = pd.DataFrame({"region": ["north", "south", "east"], "revenue": [120, 340, 90]})'
)
QUESTIONS = [
    "what columns does sales have?",
    "which region has the highest revenue in sales?",
    "how many rows does sales have?",
    "what is the total revenue in sales?",
    "is there a region called west in sales?",
    "what type is sales?",
    "what is the mean revenue in sales?",
    "which regions have revenue over 100?",
    "sort sales by revenue, which comes first?",
    "what is the revenue of the south region?",
]
MULTI_STEP = "use the get_repr tool to show me sales"


# -- the child: one fresh session --------------------------------------------------------------------------
def child(base_url: str, protocol: str, questions: int, max_tokens: int, multi_step: bool) -> None:
    from pyaichat.agent.assistant import Assistant
    from pyaichat.agent.llm import LiteLLMClient, LLMReply, Request, ToolCall
    from pyaichat.configuration.config import Config
    from pyaichat.proposal import Outcome
    from pyaichat.session import Session

    class TimedClient(LiteLLMClient):
        """The real client, noting when each request's first streamed text arrives; ``script`` replaces the
        model's reply to one request by a tool call (a multi-step turn whatever the small model says)."""

        def __init__(self, config: Config) -> None:
            super().__init__(config)
            self.firsts: list[float] = []
            self.script: LLMReply | None = None

        def stream(self, request: Request, *, timeout: float) -> Any:
            inner = super().stream(request, timeout=timeout)
            script, self.script = self.script, None
            return _Timed(inner, self.firsts, script)

    config = Config(
        model="openai/smollm2",
        api_base=base_url,
        audit=False,
        temperature=0,
        seed=1,
        max_tokens=max_tokens,
        max_steps=3,
        tool_protocol=protocol,
        context_window=4096,
    )
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        session.run(SETUP)
    clients: list[TimedClient] = []

    def factory(cfg: Config) -> TimedClient:
        clients.append(TimedClient(cfg))
        return clients[-1]

    assistant = Assistant(config, session, llm_factory=factory)
    assistant.client().prepare()
    asked = [*QUESTIONS[:questions]] + ([MULTI_STEP] if multi_step else [])
    for n, question in enumerate(asked, 1):
        client = clients[-1]
        if question == MULTI_STEP:
            text = '<tool name="get_repr">{"expr": "sales"}</tool>'
            client.script = (
                LLMReply(text=text)
                if assistant.client().tool_protocol() == "text"
                else LLMReply(tool_calls=[ToolCall("call_1", "get_repr", '{"expr": "sales"}')])
            )
        answer: list[float] = []
        client.firsts.clear()
        began = time.perf_counter()
        declined = lambda proposal: Outcome(proposal, "declined")  # noqa: E731
        result = assistant.ask(question, Front(_first_answer(answer, began), declined))
        steps = [s for s in result.steps if s.kind == "llm"]
        print(
            json.dumps(
                {
                    "n": n,
                    "question": question,
                    "ttft": client.firsts[0] - began if client.firsts else None,
                    "answer": answer[0] if answer else None,
                    "requests": len(steps),
                    "protocol": result.protocol,
                    "error": result.error,
                }
            ),
            flush=True,
        )


def _first_answer(answer: list[float], began: float) -> Any:
    """An event sink noting when the first answer text is shown (seconds after ``began``)."""

    def emit(event: Any) -> None:
        if getattr(event, "type", "") == "answer_chunk" and not answer:
            answer.append(time.perf_counter() - began)

    return emit


class _Timed:
    def __init__(self, inner: Any, firsts: list[float], script: Any) -> None:
        self.inner, self.firsts, self.script = inner, firsts, script

    def __iter__(self) -> Iterator[Any]:
        noted = False
        for item in self.inner:
            if isinstance(item, str) and not noted:
                self.firsts.append(time.perf_counter())
                noted = True
            if self.script is None:
                yield item

    def close(self) -> None:
        self.inner.close()

    def reply(self) -> Any:
        reply = self.inner.reply()
        if self.script is not None:
            self.script.usage = reply.usage
            return self.script
        return reply

    def __enter__(self) -> _Timed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the parent: the server, the samples, the table ---------------------------------------------------------
def evict(base_url: str, nonce: int) -> None:
    """Fill the server's prompt cache with an unrelated prompt."""
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": f"Say the number {nonce} and nothing else."}],
        "max_tokens": 1,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as resp:
        resp.read()


def run_child(
    server: Any, src: str | None, protocol: str, args: argparse.Namespace, multi: bool
) -> list[dict]:
    evict(server.base_url, time.monotonic_ns())
    server.mark()
    env = {**os.environ}
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        sys.executable,
        __file__,
        "--child",
        server.base_url,
        "--protocol",
        protocol,
        "--questions",
        str(args.questions),
        "--max-tokens",
        str(args.max_tokens),
    ] + (["--multi-step"] if multi else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    if out.returncode:
        sys.exit(f"the child failed:\n{out.stderr[-3000:]}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    reuse = iter(server.prompt_reuse())
    for row in rows:  # (cached, evaluated) per request, from the server's own log
        row["reuse"] = [next(reuse, (0, 0)) for _ in range(row["requests"])]
        row["prompt"] = [cached + evaluated for cached, evaluated in row["reuse"]]
    return rows


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--before", help="the sources of the checkout to compare with (its src folder)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--protocol", nargs="+", default=["auto", "text"])
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--prefix", action="store_true", help="ten questions and a 2-step turn, one session")
    parser.add_argument("--multi-step", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.protocol[0], args.questions, args.max_tokens, args.multi_step)
        return

    from realmodel.local_server import LocalModelServer, server_available

    why_not = server_available()
    if why_not:
        sys.exit(f"Cannot run: {why_not}.")
    sides = [("before", args.before), ("after", None)] if args.before else [("this", None)]
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer(log_path=Path(tmp) / "server.log") as server:
        print(f"SmolLM2-135M-Instruct Q4_1, llama-cpp-python, n_ctx {server.n_ctx}, 2 threads; load {load()}")
        if args.prefix:
            args.questions = 10
            for protocol in args.protocol:
                for name, src in sides:
                    show_prefix(run_child(server, src, protocol, args, multi=True), f"{name}, {protocol}")
            return
        for protocol in args.protocol:
            samples: dict[str, list[list[dict]]] = {name: [] for name, _ in sides}
            for pair in range(args.pairs):
                loads = [load()]
                for name, src in sides:
                    samples[name].append(run_child(server, src, protocol, args, multi=False))
                loads.append(load())
                figures = "  ".join(
                    f"{name}: " + " ".join(f"Q{r['n']} {r['ttft']:.2f}s/{r['prompt'][0]}tok" for r in s[-1])
                    for name, s in samples.items()
                )
                print(f"[{protocol}] pair {pair + 1}: {figures}  (load {loads[0]} → {loads[1]})", flush=True)
            summary(protocol, samples, args.questions)


def summary(protocol: str, samples: dict[str, list[list[dict]]], questions: int) -> None:
    print(f"\nprotocol {protocol}: medians of {len(next(iter(samples.values())))} sessions")
    head = f"{'':<8} {'question':<10} {'prompt tok':>10} {'evaluated':>9} {'TTFT s':>7} {'answer s':>8}"
    print(head + ("  after/before TTFT (pairwise median)" if "before" in samples else ""))
    for n in range(questions):
        for name, runs in samples.items():
            rows = [run[n] for run in runs]
            ttft = statistics.median(r["ttft"] for r in rows)
            answers = [r["answer"] for r in rows if r["answer"] is not None]
            shown = f"{statistics.median(answers):>8.2f}" if answers else f"{'-':>8}"
            prompt = statistics.median(r["prompt"][0] for r in rows)
            evaluated = statistics.median(r["reuse"][0][1] for r in rows)
            ratio = ""
            if name == "after" and "before" in samples:
                pairs = zip(samples["before"], runs, strict=True)
                ratio = f"  {statistics.median(a[n]['ttft'] / b[n]['ttft'] for b, a in pairs):.2f}"
            label = "first" if n == 0 else f"Q{n + 1}"
            print(f"{name:<8} {label:<10} {prompt:>10.0f} {evaluated:>9.0f} {ttft:>7.2f} {shown}{ratio}")


def show_prefix(rows: list[dict], label: str) -> None:
    print(f"\n{label}: each request's prompt tokens (server's count) and those it evaluated (prompt_n)")
    print(f"{'question':<48} {'req':>3} {'prompt':>7} {'cached':>7} {'eval':>6} {'TTFT s':>7}")
    for row in rows:
        for i, (prompt, (cached, evaluated)) in enumerate(zip(row["prompt"], row["reuse"], strict=True)):
            q = f"{row['n']}. {row['question']}" if i == 0 else ""
            ttft = f"{row['ttft']:.2f}" if i == 0 and row["ttft"] is not None else ""
            print(f"{q:<48.48} {i + 1:>3} {prompt:>7} {cached:>7} {evaluated:>6} {ttft:>7}")


if __name__ == "__main__":
    main()
