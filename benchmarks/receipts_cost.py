"""Receipts' cost: how long checking one answer's numbers takes (``agent.receipts.check``), for answers of
about 2,000 characters against a turn's results at their largest (each tool result at the
``max_output_chars`` cap of 4,000 characters, most of it numbers: ``describe()`` tables, value counts), and
for the labelled corpus's real answers against their own turns (``tests/agent/receipts_quality/``).

Run: ``.venv/bin/python benchmarks/receipts_cost.py [--results N] [--repeat R] [--before SRC]``. Prints the
median and the 95th percentile of checking one answer (the budget is 2 ms per answer of 2,000 characters),
the time to index one tool result (paid during the turn, as each result arrives: ``Evidence.add``), and the
first answer's time with the indexing (the regular expressions compile then, once per process). On a
shared, loaded machine the wall-clock p95 is the scheduler's (another process holds the core for a time
slice); the thread's CPU time beside it is the check's own. ``--before SRC`` times the checker of another
source tree in the same run, interleaved (``git worktree add /tmp/receipts-base 27ba4b4``, then
``--before /tmp/receipts-base/src``): on a loaded machine only such a pair is a comparison. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "agent" / "receipts_quality"))

import corpus  # noqa: E402
from receipts_quality import load_checker  # noqa: E402


def results(mod: ModuleType, n: int, rng: random.Random) -> list:
    """``n`` tool results of about 4,000 characters each: aligned tables of numbers, as pandas prints them."""
    seen = []
    for i in range(n):
        lines = ["rows:", "           price        qty      total"]
        while sum(len(line) + 1 for line in lines) < 4000:
            label = f"r{len(lines)}"
            values = [rng.uniform(-1e4, 1e4) for _ in range(3)]
            lines.append(f"{label:<8}" + "".join(f"{v:>11.5f}" for v in values))
        seen.append(mod.Seen(f"eval_expr(df{i}.describe())", "\n".join(lines), f"df{i}.describe()"))
    seen.append(mod.Seen("eval_expr(df.price.mean())", "float64 11.974", "df.price.mean()"))
    return seen


def answer(seen: list, rng: random.Random, size: int = 2000) -> str:
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


PICTURE = "## Session\nVariables (3):\n  df: DataFrame 1200×4: region str, price float64, qty int64\n"
QUESTION = "what is the mean price?"


def synthetic(mods: list[ModuleType], n_results: int, repeat: int) -> None:
    """The budget's own measure: dense answers against turns at their largest; each checker in turn, per
    answer (interleaved, so the load falls on both alike)."""
    rng = random.Random(35)
    state = []
    for mod in mods:
        seen = results(mod, n_results, random.Random(35))
        started = time.perf_counter()
        evidence = mod.Evidence(PICTURE)
        adds = []
        for item in seen:  # during the turn: as each tool result arrives
            t0 = time.perf_counter()
            evidence.add(item)
            adds.append((time.perf_counter() - t0) * 1000)
        state.append((mod, seen, evidence, adds, started))
    answers = [answer(state[0][1], rng) for _ in range(repeat)]
    for mod, seen, evidence, adds, started in state:
        first = mod.check(answers[0], evidence, question=QUESTION)
        first_ms = (time.perf_counter() - started) * 1000
        chars = sum(len(s.text) for s in seen)
        print(
            f"\n## synthetic ({mod.__name__}): {len(seen)} results ({chars:,} characters), {repeat} answers"
            f" of ~{len(answers[0]):,} characters, {len(first.receipts)} numbers checked in the first"
        )
        print(f"first answer with indexing (compiles the regular expressions): {first_ms:.2f} ms")
        add_ms = statistics.median(adds)
        print(f"indexing one result as it arrives: median {add_ms:.3f} ms, max {max(adds):.3f} ms")
    times: dict[str, list[float]] = {mod.__name__: [] for mod in mods}
    cpu: dict[str, list[float]] = {mod.__name__: [] for mod in mods}
    for text in answers:
        for mod, _seen, evidence, _adds, _started in state:
            started, used = time.perf_counter(), time.thread_time()
            mod.check(text, evidence, question=QUESTION)
            times[mod.__name__].append((time.perf_counter() - started) * 1000)
            cpu[mod.__name__].append((time.thread_time() - used) * 1000)
    for mod in mods:
        report(f"synthetic, {mod.__name__}", times[mod.__name__], cpu[mod.__name__])


def real(mods: list[ModuleType], repeat: int = 5) -> None:
    """The labelled corpus's answers of 400 characters or more, each against its own turn: the least of
    ``repeat`` timings, scaled to 2,000 characters."""
    turns = corpus.read_turns()
    answers = [a for a in corpus.read_answers() if len(a.text) >= 400]
    per: dict[str, list[float]] = {mod.__name__: [] for mod in mods}
    for a in answers:
        turn = turns[a.turn]
        for mod in mods:
            evidence = mod.Evidence(turn["picture"])
            for (name, args), r in zip(turn["calls"], turn["results"], strict=True):
                of = getattr(mod.Seen, "of", None)
                evidence.add(
                    of(name, args, r["call"], r["text"]) if of else mod.Seen(r["call"], r["text"], r["expr"])
                )
            best = float("inf")
            for _ in range(repeat):
                used = time.thread_time()
                mod.check(a.text, evidence, question=turn["question"])
                best = min(best, time.thread_time() - used)
            per[mod.__name__].append(best * 1000 * 2000 / len(a.text))
    for mod in mods:
        cpu = sorted(per[mod.__name__])
        p95 = cpu[int(len(cpu) * 0.95) - 1]
        print(
            f"\n## the corpus's answers of 400 characters or more ({len(cpu)}), {mod.__name__}: CPU time per "
            f"2,000 characters: median {statistics.median(cpu):.3f} ms, p95 {p95:.3f} ms"
        )


def report(title: str, times: list[float], cpu: list[float]) -> None:
    times, cpu = sorted(times), sorted(cpu)
    p95 = times[int(len(times) * 0.95) - 1]
    cpu95 = cpu[int(len(cpu) * 0.95) - 1]
    print(f"\n## {title}")
    print(f"per answer: median {statistics.median(times):.3f} ms, p95 {p95:.3f} ms, max {times[-1]:.3f} ms")
    print(f"per answer, CPU time of this thread: median {statistics.median(cpu):.3f} ms, p95 {cpu95:.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=int, default=8, help="tool results in the turn (default 8)")
    parser.add_argument("--repeat", type=int, default=300, help="answers to time (default 300)")
    parser.add_argument("--checker-src", type=Path, default=ROOT / "src")
    parser.add_argument("--before", type=Path, help="a source tree whose checker to time beside")
    args = parser.parse_args()
    mods = [load_checker(args.checker_src, "receipts_now")]
    if args.before:
        mods.insert(0, load_checker(args.before, "receipts_before"))
    synthetic(mods, args.results, args.repeat)
    real(mods)


if __name__ == "__main__":
    main()
