"""Provenance: how well ``untrusted.instruction_in`` notices instruction-like text in a tool result, and what
it costs on every result.

Quality: the labelled lines of ``tests/agent/provenance_corpus`` (its README says how they were written and
labelled, and how they are split into a development part, used to tune the detector, and a held-out part,
not looked at while tuning). Each line is given to the detector as a whole tool result and, to see that
the line is found among data, in the middle of a small table of ordinary rows. Recall is the share of
instruction-like lines found, the false-line rate the share of ordinary lines found; both per split and per
category.

Cost: microseconds per tool result (median of ``--repeat`` passes) over tool results as the assistant sees
them — a DataFrame's repr and ``describe()``, ``list_globals``, a NumPy docstring, SQL rows, a traceback, an
MCP tool's JSON — each cut at ``max_output_chars`` (4,000 characters), and per corpus line.

Run: ``.venv/bin/python benchmarks/provenance.py [--repeat R]``; ``PYTHONPATH=OTHER/src`` measures another
tree (the code before a change). The CPU time of the measuring thread is what the call costs; the wall clock
beside it also holds the scheduler's share on a loaded machine. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from pyaichat import untrusted

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "agent" / "provenance_corpus"
ROWS = (
    "   region  month  revenue\n0   north      1   1203.5\n1   south      1    987.0\n"
    "2    east      1   1111.2\n{line}\n3    west      1    640.9\n4   north      2   1302.7"
)


def corpus() -> list[dict[str, str]]:
    lines = []
    for name, label in (("injections.jsonl", "injection"), ("ordinary.jsonl", "ordinary")):
        with open(CORPUS / name, encoding="utf-8") as fh:
            lines += [{**json.loads(row), "label": label} for row in fh if row.strip()]
    return lines


def quality(lines: list[dict[str, str]]) -> None:
    """Recall and false-line rate, alone and among rows, by split and by category."""
    for context in ("alone", "among rows"):
        print(f"\n== each line {context} ==")
        table: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
        for row in lines:
            text = row["text"] if context == "alone" else ROWS.format(line=row["text"])
            found = untrusted.instruction_in(text) is not None
            for split in (row["split"], "all"):
                table[(split, row["label"], row["category"])].append(found)
                table[(split, row["label"], "*")].append(found)
        for split in ("dev", "held_out", "all"):
            hits = table[(split, "injection", "*")]
            false = table[(split, "ordinary", "*")]
            print(
                f"{split:>9}: recall {sum(hits) / len(hits):6.1%} ({sum(hits)}/{len(hits)}), "
                f"false lines {sum(false) / len(false):5.1%} ({sum(false)}/{len(false)})"
            )
        print("  per category (dev | held-out):")
        for label in ("injection", "ordinary"):
            for category in sorted({c for (_, lab, c) in table if lab == label and c != "*"}):
                cells = []
                for split in ("dev", "held_out"):
                    got = table[(split, label, category)]
                    cells.append(f"{sum(got):>2}/{len(got):<2}")
                what = "found" if label == "injection" else "falsely found"
                print(f"    {label:>9} {category:<20} {what:<13} {cells[0]} | {cells[1]}")


def tool_results() -> dict[str, str]:
    """Tool results as the assistant reads them, each at most 4,000 characters."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(45)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east", "west"], 500),
            "revenue": rng.normal(1000, 200, 500).round(2),
            "note": rng.choice(["ok", "late delivery", "call back on Monday", "refund approved"], 500),
            "customer": [f"Customer {i:04d}" for i in range(500)],
        }
    )
    names = "\n".join(f"{n}: DataFrame (500 rows × 4 columns)" for n in (f"df_{i}" for i in range(80)))
    sql = "\n".join(
        f"({i}, 'user{i}@example.org', '2024-0{i % 9 + 1}-1{i % 9}', {i * 3.5})" for i in range(120)
    )
    trace = "\n".join(
        f'  File "/home/ann/work/etl/step_{i}.py", line {10 + i}, in run\n'
        "    result = transform(frame, **options)"
        for i in range(30)
    )
    mcp = json.dumps(
        [
            {"sha": f"{i:040x}", "author": "Ann Example", "message": f"Fix issue #{i} in the exporter"}
            for i in range(40)
        ]
    )
    found = {
        "DataFrame repr": repr(frame),
        "describe()": repr(frame.describe(include="all")),
        "list_globals": names,
        "NumPy docstring": np.linalg.lstsq.__doc__ or "",
        "pandas docstring": pd.DataFrame.merge.__doc__ or "",
        "SQL rows": sql,
        "traceback": "Traceback (most recent call last):\n" + trace + "\nKeyError: 'customer_id'",
        "MCP JSON": mcp,
        "short value": "float64 1003.27",
    }
    return {name: text[:4000] for name, text in found.items()}


def cost(lines: list[dict[str, str]], repeat: int) -> None:
    """Microseconds per call of ``instruction_in``, and of ``span`` (every result is wrapped too): the
    thread's CPU time (what the call itself costs, whatever else the machine runs) and the wall clock."""
    print(f"\n== cost (median of {repeat} passes, µs per call: CPU | wall) ==")
    results = tool_results()
    for name, text in [*results.items(), ("corpus lines (each)", None)]:
        texts = [text] if text is not None else [row["text"] for row in lines]
        for what, function in (("instruction_in", untrusted.instruction_in), ("span", untrusted.span)):
            for text_ in texts:  # warm: compiled patterns, tables
                function(text_)
            cpu, wall = [], []
            for _ in range(repeat):
                started, clock = time.perf_counter(), time.thread_time()
                for text_ in texts:
                    function(text_)
                cpu.append((time.thread_time() - clock) / len(texts) * 1e6)
                wall.append((time.perf_counter() - started) / len(texts) * 1e6)
            size = f"{len(texts[0]):>5} chars" if text is not None else f"{len(texts):>5} lines"
            median_cpu, median_wall = statistics.median(cpu), statistics.median(wall)
            print(f"  {name:<20} {size}  {what:<15} {median_cpu:8.1f} | {median_wall:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--no-cost", action="store_true", help="quality only")
    args = parser.parse_args()
    print(f"pyaichat from {Path(untrusted.__file__).parent}")
    lines = corpus()
    quality(lines)
    if not args.no_cost:
        cost(lines, args.repeat)


if __name__ == "__main__":
    main()
