"""Receipts' cost: how long checking one answer's numbers takes (``agent.receipts.check``), for answers of
about 2,000 characters against a turn's results at their largest (each tool result at the
``max_output_chars`` cap of 4,000 characters, most of it numbers: ``describe()`` tables, value counts).

Run: ``.venv/bin/python benchmarks/receipts_cost.py [--results N] [--repeat R]``. Prints the median and the
95th percentile of checking one answer (the budget is 2 ms per answer of 2,000 characters), the time to
index one tool result (paid during the turn, as each result arrives: ``Evidence.add``), and the first
answer's time with the indexing (the regular expressions compile then, once per process). On a shared,
loaded machine the wall-clock p95 is the scheduler's (another process holds the core for a time slice);
the thread's CPU time beside it is the check's own. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pyaichat.agent.receipts import Evidence, Seen, check


def results(n: int, rng: random.Random) -> list[Seen]:
    """``n`` tool results of about 4,000 characters each: aligned tables of numbers, as pandas prints them."""
    seen = []
    for i in range(n):
        lines = ["rows:", "           price        qty      total"]
        while sum(len(line) + 1 for line in lines) < 4000:
            label = f"r{len(lines)}"
            values = [rng.uniform(-1e4, 1e4) for _ in range(3)]
            lines.append(f"{label:<8}" + "".join(f"{v:>11.5f}" for v in values))
        seen.append(Seen(f"eval_expr(df{i}.describe())", "\n".join(lines), f"df{i}.describe()"))
    seen.append(Seen("eval_expr(df.price.mean())", "float64 11.974", "df.price.mean()"))
    return seen


def answer(seen: list[Seen], rng: random.Random, size: int = 2000) -> str:
    """An answer of ``size`` characters: prose with numbers (some from the results, some not), a Markdown
    table, a code span and a list."""
    shown = [tok for s in seen for tok in s.text.split() if tok[:1].isdigit() or tok[:1] == "-"]
    parts = [
        "The mean of `price` is 11.97 over 1,200 rows.",
        "| stat | price | qty |\n|---|---|---|\n| mean | 11.97 | 4.4 |\n| max | 15.00 | 9 |",
        "1. Look at `df.head(10)` first.\n2. Then group by region.",
    ]
    while sum(len(p) + 1 for p in parts) < size:
        pick = rng.choice(shown) if rng.random() < 0.7 else f"{rng.uniform(0, 1000):.2f}"
        parts.append(f"Another figure is {pick}, about {rng.randint(1, 99)}% of the total in 2023.")
    return "\n".join(parts)[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=int, default=8, help="tool results in the turn (default 8)")
    parser.add_argument("--repeat", type=int, default=300, help="answers to time (default 300)")
    args = parser.parse_args()
    rng = random.Random(35)
    seen = results(args.results, rng)
    picture = "## Session\nVariables (3):\n  df: DataFrame 1200×4: region str, price float64, qty int64\n"
    answers = [answer(seen, rng) for _ in range(args.repeat)]
    started = time.perf_counter()
    evidence = Evidence(picture)
    adds = []
    for item in seen:  # during the turn: as each tool result arrives
        t0 = time.perf_counter()
        evidence.add(item)
        adds.append((time.perf_counter() - t0) * 1000)
    first = check(answers[0], evidence, question="what is the mean price?")
    first_ms = (time.perf_counter() - started) * 1000
    times, cpu = [], []
    for text in answers:
        started, used = time.perf_counter(), time.thread_time()
        check(text, evidence, question="what is the mean price?")
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - used) * 1000)
    times.sort()
    cpu.sort()
    chars = sum(len(s.text) for s in seen)
    size = len(answers[0])
    print(f"results: {len(seen)} ({chars:,} characters); answers: {len(answers)} of ~{size:,} chars")
    print(f"numbers per answer: {len(first.receipts)} checked ({first.summary()})")
    print(f"first answer with indexing (compiles the regular expressions): {first_ms:.2f} ms")
    add_ms = statistics.median(adds)
    print(f"indexing one result as it arrives: median {add_ms:.3f} ms, max {max(adds):.3f} ms")
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"per answer: median {statistics.median(times):.3f} ms, p95 {p95:.3f} ms, max {times[-1]:.3f} ms")
    cpu95 = cpu[int(len(cpu) * 0.95) - 1]
    print(f"per answer, CPU time of this thread: median {statistics.median(cpu):.3f} ms, p95 {cpu95:.3f} ms")


if __name__ == "__main__":
    main()
