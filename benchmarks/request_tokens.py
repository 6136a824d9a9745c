"""Request tokens: what the first request of five typical questions costs, and how much of it is the stable
prefix (system prompt and tool list) that a provider's or a server's prompt cache can reuse.

Run: ``.venv/bin/python benchmarks/request_tokens.py [--smollm2] [--json]`` (a few seconds; ``--smollm2``
adds about a minute: it starts the real SmolLM2 server of ``tests/realmodel`` and asks it to count). Prints
figures, asserts nothing. To compare with another checkout, run the same script with that checkout's sources
first on the path: ``PYTHONPATH=/tmp/lean-before/src .venv/bin/python benchmarks/request_tokens.py``.

Each question is asked as the first of a fresh session (a small ``sales`` DataFrame; one question after a
failed expression) through the real ``Assistant`` and budget with a scripted model, and its first request body
is counted:

* ``native``: the body a function-calling model gets (messages + ``tools``), counted by litellm with
  gpt-4o-mini's tokenizer (o200k, which litellm has) — ``count(body, "gpt-4o-mini")``;
* ``text``: the body of the text tool protocol (the tools described in the system prompt, as a model without
  function calling gets them), same tokenizer;
* ``S2 text`` (``--smollm2``): the text-protocol body as the real SmolLM2 server counted it
  (``usage.prompt_tokens`` of a one-token completion): its own tokenizer and chat template;
* ``S2 json`` (``--smollm2``): SmolLM2's tokens of the native body with its tools as JSON, as a llama.cpp
  server shows tools to a model whose chat template has none (the form of issue 39's 2,774);
* ``prefix``: the stable part of the native body (system message + tools), the same for every question.

For reuse (issue 35 measures its own additions with these): ``first_request(question, protocol)`` gives the
body, ``count(body, model)`` its tokens, ``split(body, model)`` (prefix, rest).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fakes.fake_llm import FakeLLM  # noqa: E402
from pyaichat.agent.assistant import Assistant, Front  # noqa: E402
from pyaichat.configuration.config import Config  # noqa: E402
from pyaichat.proposal import Outcome  # noqa: E402
from pyaichat.session import Session  # noqa: E402

SETUP = (
    "import pandas as pd\n"
    'sales = pd.DataFrame({"region": ["north", "south", "east"], "revenue": [120, 340, 90]})'
)
# (code the user ran first, or None; the question)
QUESTIONS: list[tuple[str | None, str]] = [
    (None, "what columns does sales have?"),
    (None, "which region has the highest revenue in sales?"),
    ('sales["profit"].sum()', "why did that fail?"),
    (None, "how many rows does sales have?"),
    (None, "add a profit column to sales: 20% of revenue"),
]
TOKENIZER_MODEL = "gpt-4o-mini"  # litellm counts it with its own tokenizer (tiktoken o200k)


def first_request(question: str, protocol: str = "native", code: str | None = None) -> dict[str, Any]:
    """The first request body pyaichat sends for ``question`` as the first question of a fresh session
    (``code`` is run before it, in Python mode)."""
    session = Session(echo=lambda value: None)
    config = Config(model="openai/bench", audit=False, tool_protocol=protocol)
    session.settings.replace(config)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        session.run(SETUP)
        if code:
            session.run(code)
    fake = FakeLLM(native=protocol == "native", model="openai/bench").text("ok")
    assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    result = assistant.ask(question, Front(lambda e: None, lambda proposal: Outcome(proposal, "declined")))
    assert result is not None and result.requests, "no request was made"
    return result.requests[0]


def count(body: dict[str, Any], model: str = TOKENIZER_MODEL) -> int:
    """The request's prompt tokens as litellm counts them for ``model`` (messages and tools)."""
    import litellm

    return int(litellm.token_counter(model=model, messages=body["messages"], tools=body.get("tools") or None))


def split(body: dict[str, Any], model: str = TOKENIZER_MODEL) -> tuple[int, int]:
    """(tokens of the stable prefix — the system message and the tools —, tokens of the rest)."""
    import litellm

    prefix = int(
        litellm.token_counter(model=model, messages=body["messages"][:1], tools=body.get("tools") or None)
    )
    return prefix, count(body, model) - prefix


def smollm2_count(base_url: str, body: dict[str, Any]) -> int:
    """The prompt tokens the SmolLM2 server counted for ``body`` (its tokenizer and chat template; a template
    without tools, so native tools are not shown to the model)."""
    payload = {"model": "smollm2", "messages": body["messages"], "max_tokens": 1, "temperature": 0}
    if body.get("tools"):
        payload["tools"] = body["tools"]
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as resp:
        return int(json.loads(resp.read())["usage"]["prompt_tokens"])


def smollm2_json_count(base_url: str, body: dict[str, Any]) -> int:
    """SmolLM2's tokens for ``body`` with its tools as JSON after the messages, as a llama.cpp server that
    shows tools to a model whose chat template has no tools section (``llama-server --jinja``) gives them
    (issue 39's 2,774 was counted this way)."""
    chatml = "".join(
        f"<|im_start|>{m['role']}\n{m.get('content') or ''}<|im_end|>\n" for m in body["messages"]
    )
    text = chatml + (json.dumps(body["tools"], ensure_ascii=False) if body.get("tools") else "")
    request = urllib.request.Request(
        f"{base_url.removesuffix('/v1')}/extras/tokenize/count",
        data=json.dumps({"input": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as resp:
        return int(json.loads(resp.read())["count"])


def measure(smollm2_url: str | None) -> list[dict[str, Any]]:
    rows = []
    for code, question in QUESTIONS:
        native = first_request(question, "native", code)
        text = first_request(question, "text", code)
        prefix, rest = split(native)
        row = {
            "question": question,
            "native": count(native),
            "text": count(text),
            "prefix": prefix,
            "rest": rest,
            "tools": len(native.get("tools") or []),
            "system_chars": len(native["messages"][0]["content"]),
        }
        if smollm2_url:
            row["smollm2"] = smollm2_count(smollm2_url, text)
            row["smollm2_json"] = smollm2_json_count(smollm2_url, native)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smollm2", action="store_true", help="also count with the real SmolLM2 server")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    import pyaichat

    if args.smollm2:
        from realmodel.local_server import LocalModelServer, server_available

        why_not = server_available()
        if why_not:
            sys.exit(f"Cannot run: {why_not}.")
        with tempfile.TemporaryDirectory() as tmp, LocalModelServer(log_path=Path(tmp) / "server.log") as srv:
            rows = measure(srv.base_url)
    else:
        rows = measure(None)
    if args.json:
        print(json.dumps({"source": str(Path(pyaichat.__file__).parent), "rows": rows}, indent=1))
        return
    print(f"pyaichat from {Path(pyaichat.__file__).parent}; tokens of the first request of a fresh session")
    print(f"native, prefix, rest, text: counted by litellm with {TOKENIZER_MODEL}'s tokenizer")
    if args.smollm2:
        print("S2 text: the SmolLM2 server's count of the text-protocol request (what it reads)")
        print("S2 json: SmolLM2's tokens of the native request with its tools as JSON (llama-server --jinja)")
    head = f"{'question':<46} {'native':>7} {'prefix':>7} {'rest':>5} {'text':>6}"
    head += f" {'S2 text':>8} {'S2 json':>8}" if args.smollm2 else ""
    print(head)
    print("-" * len(head))
    for r in rows:
        line = f"{r['question']:<46.46} {r['native']:>7,} {r['prefix']:>7,} {r['rest']:>5,} {r['text']:>6,}"
        line += f" {r['smollm2']:>8,} {r['smollm2_json']:>8,}" if args.smollm2 else ""
        print(line)
    print(f"tools offered: {rows[0]['tools']}; system prompt: {rows[0]['system_chars']:,} characters")


if __name__ == "__main__":
    main()
