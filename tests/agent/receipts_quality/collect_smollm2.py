"""Collect real model answers for the receipts-quality corpus: the local SmolLM2-135M model (the one the
realmodel tests serve, ``tests/realmodel/local_server.py``: llama-cpp-python's server on 127.0.0.1, offline)
answers each turn of ``turns.json`` after reading the turn's picture and tool results, and its answers are
written to ``smollm2_raw.json`` as they came, for labelling by hand (``answers/smollm2.txt``).

The model reads pyaichat's own system prompt, the session picture and the question, then the turn's tool calls
and results as the text protocol shows them (a 135M model does not call tools reliably; here it only writes
the answer of a turn whose calls were made for it). Answers are sampled with fixed seeds (an even seed at
temperature 0.2, an odd one at 0.8); answers of seeds already in ``smollm2_raw.json`` are kept, not asked
again.

Run: ``.venv/bin/python tests/agent/receipts_quality/collect_smollm2.py [--seeds 46,47,48,49]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from realmodel.local_server import ALIAS, LocalModelServer  # noqa: E402


def messages(turn: dict, system: str) -> list[dict[str, str]]:
    """What the model reads: the system prompt, the picture and question, then the turn's calls and their
    results."""
    out = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{turn['picture']}\n\n{turn['question']}"},
    ]
    if turn["results"]:
        calls = "\n".join(f'<tool name="{name}">{json.dumps(args)}</tool>' for name, args in turn["calls"])
        out.append({"role": "assistant", "content": calls})
        shown = "\n\n".join(f"Result of {r['call']}:\n<data>\n{r['text']}\n</data>" for r in turn["results"])
        out.append({"role": "user", "content": shown + "\n\nNow answer the question."})
    return out


def complete(base_url: str, msgs: list[dict[str, str]], seed: int, temperature: float) -> str:
    body = {"model": ALIAS, "messages": msgs, "max_tokens": 260, "seed": seed, "temperature": temperature}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as resp:
        return str(json.loads(resp.read())["choices"][0]["message"].get("content") or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="46,47", help="comma-separated seeds, one answer per turn each")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    turns = json.loads((HERE / "turns.json").read_text())
    system = (ROOT / "prompts" / "system.md").read_text()
    out_path = HERE / "smollm2_raw.json"
    collected: list[dict] = json.loads(out_path.read_text()) if out_path.exists() else []
    have = {(c["turn"], c["seed"]) for c in collected}
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer(log_path=Path(tmp) / "server.log") as server:
        for tid, turn in turns.items():
            for seed in seeds:
                if (tid, seed) in have:
                    continue
                temperature = (0.2, 0.8)[seed % 2]
                text = complete(server.base_url, messages(turn, system), seed, temperature)
                collected.append({"turn": tid, "seed": seed, "temperature": temperature, "answer": text})
                print(f"{tid} #{seed}: {text[:100]!r}", flush=True)
    out_path.write_text(json.dumps(collected, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(collected)} answers written to {out_path}")


if __name__ == "__main__":
    main()
