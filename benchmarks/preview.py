"""Preview cost, printed as tables (no assertions; the budget: a preview of a proposal costs at most 1.5×
running it plainly, plus the bare fork round trip).

1. Per proposal, in a session of about 1 GB resident (a 20-million-row frame, a 200 MB array, a list): the
   code run plainly (``exec`` on a shallow copy of the namespace, in this process), a bare fork-and-exit round
   trip, and the whole ``preview`` (the snapshot of every name, fork, privatising shared memory, the walls,
   the run, the comparison, the result back), with the budget ``1.5 × plain + fork`` and the ratio to it.
   "in child" is the code's own run time inside the preview: writing the session's memory there costs a
   copy-on-write fault per 4 KiB page. Each figure is the median of N runs, the three interleaved so they see
   the same machine load.
2. The snapshot's own cost against the number of names (``x = 1`` previewed in sessions of 100 to 10,000
   small variables next to the 1 GB of data).
3. What the watch on what a preview cannot see adds (``watch.Watch``: attributes of modules and classes,
   the environment, threads, audit hooks): step by step where each runs (``Watch()`` in the parent,
   ``arm`` and ``collect`` in a forked child), and overall: the same previews with the watch and with a
   watch that does nothing, interleaved pair by pair in this process, so machine load affects both alike,
   0.1 s apart (the previous child's address space is torn down by then, as while a person reads a panel).

4. ``--versus SRC``: before/after pair by pair against another tree (``git archive main | tar -x -C /tmp/m``,
   then ``--versus /tmp/m/src``): table 1 in fresh processes, alternating sides.

Run: ``.venv/bin/python benchmarks/preview.py [--quick] [--size-mb 1024] [--watch-only | --proposals-only]
[--versus SRC --pairs 4] [--assistant-loaded]`` (``--assistant-loaded``: litellm and httpx imported first, as
in a REPL whose assistant has answered; the watch then covers ~3,500 modules)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from pyaichat.capabilities.sandbox import confine
from pyaichat.capabilities.sandbox import preview as preview_module
from pyaichat.capabilities.sandbox.preview import preview

PROPOSALS: list[tuple[str, str]] = [
    ("trivial", "x = 1"),
    ("new column", "df['ratio'] = df['a'] / (df['b'] + 1)"),
    ("filter", "top = df[df['a'] > 0.999]"),
    ("array in place", "arr += 1"),
    ("groupby", "means = df.groupby('k')['a'].mean()"),
    ("describe", "summary = df[['a', 'b']].describe()"),
    ("drop inplace", "df.drop(columns=['c'], inplace=True)"),
    ("list append", "lst.append(1)"),
]


def session_namespace(size_mb: int) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    rows = max(1, size_mb - 200) * 2**20 // 40  # five 8-byte columns
    rng = np.random.default_rng(0)
    return {
        "__name__": "__main__",
        "np": np,
        "pd": pd,
        "df": pd.DataFrame(
            {
                "a": rng.random(rows),
                "b": rng.random(rows),
                "c": rng.random(rows),
                "k": rng.integers(0, 1000, rows),
                "t": np.arange(rows, dtype=np.int64),
            }
        ),
        "arr": np.ones(200 * 2**20 // 8),
        "lst": list(range(1000)),
    }


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(func: Callable[[], object]) -> float:
    started = time.perf_counter()
    func()
    return (time.perf_counter() - started) * 1000


def bare_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def plain(namespace: dict[str, Any], code: str) -> Callable[[], object]:
    compiled = compile(code, "<plain>", "exec")
    return lambda: exec(compiled, dict(namespace))  # names it creates vanish; in-place work is real


def proposals_table(namespace: dict[str, Any], repeat: int) -> dict[str, list[float]]:
    """The table, printed; returned as ``{proposal: [plain, fork, preview]}`` medians (for ``--versus``)."""
    print(f"\n## Preview vs running plainly, {rss_mb():,.0f} MB resident (median of {repeat}, ms)\n")
    print("| proposal | plain | bare fork | preview | budget 1.5×plain+fork | preview / budget | in child |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    medians: dict[str, list[float]] = {}
    for name, code in PROPOSALS:
        plains, forks, previews, insides = [], [], [], []
        for _ in range(repeat):
            fresh = dict(namespace, df=namespace["df"].copy(deep=False), lst=list(namespace["lst"]))
            plains.append(timed(plain(fresh, code)))  # ``drop(inplace=True)`` drops from a shallow copy
            forks.append(timed(bare_fork))
            found = []
            previews.append(timed(lambda c=code, out=found: out.append(preview(namespace, c, timeout=60.0))))
            assert found[0].status == "previewed" and found[0].ok, found[0]
            insides.append(found[0].duration_ms or 0.0)
        p, f, v = statistics.median(plains), statistics.median(forks), statistics.median(previews)
        budget = 1.5 * p + f
        medians[name] = [p, f, v]
        print(
            f"| {name} | {p:.1f} | {f:.1f} | {v:.1f} | {budget:.1f} | {v / budget:.2f} "
            f"| {statistics.median(insides):.1f} |"
        )
    return medians


def names_table(namespace: dict[str, Any], repeat: int) -> None:
    print("\n## Snapshot cost against the number of names (`x = 1`, median of", repeat, "runs, ms)\n")
    print("| names | bare fork | preview | preview − fork |")
    print("|---:|---:|---:|---:|")
    for count in (100, 1000, 10_000):
        ns = dict(namespace)
        for i in range(count):
            ns[f"v{i}"] = [i] if i % 3 == 0 else {"k": i} if i % 3 == 1 else float(i)
        forks, previews = [], []
        for _ in range(repeat):
            forks.append(timed(bare_fork))
            previews.append(timed(lambda ns=ns: preview(ns, "x = 1", timeout=60.0)))
        f, v = statistics.median(forks), statistics.median(previews)
        print(f"| {count:,} | {f:.1f} | {v:.1f} | {v - f:.1f} |")


class NoWatch:
    """A watch that looks at nothing: the preview as it was before it said what it cannot see."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        pass

    def arm(self) -> None:
        pass

    def collect(self) -> Any:
        from pyaichat.capabilities.sandbox.unseen import Unseen  # not in a tree from before the watch

        return Unseen()


def watch_table(namespace: dict[str, Any], repeat: int) -> None:
    print(f"\n## What the watch adds (median of {repeat} pairs, interleaved, each first half the time, ms)\n")
    print("| proposal | without the watch | with it | added | ratio |")
    print("|---|---:|---:|---:|---:|")
    real = preview_module.Watch
    for name, code in PROPOSALS[:3] + PROPOSALS[-1:]:
        without, with_it = [], []
        for i in range(repeat):
            for watched in (False, True) if i % 2 else (True, False):  # each goes first half of the time
                preview_module.Watch = real if watched else NoWatch  # type: ignore[misc]
                time.sleep(0.1)  # the last child's address space is gone, as when a person reads a panel
                took = timed(lambda c=code: preview(namespace, c, timeout=60.0))
                (with_it if watched else without).append(took)
        preview_module.Watch = real  # type: ignore[misc]
        a, b = statistics.median(without), statistics.median(with_it)
        diffs = statistics.median(w - o for o, w in zip(without, with_it, strict=True))
        print(f"| {name} | {a:.1f} | {b:.1f} | {diffs:.2f} | {b / a:.2f} |")


def watch_steps(namespace: dict[str, Any], repeat: int) -> None:
    """The watch's own steps, timed where they run: ``Watch()`` in the parent, ``arm`` and ``collect`` in a
    forked child (with nothing run between them: what any preview pays)."""
    from pyaichat.capabilities.sandbox.watch import Watch

    parent = [timed(lambda: Watch(namespace)) for _ in range(repeat)]
    arms, collects = [], []
    for _ in range(repeat):
        watch = Watch(namespace)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            arm = timed(watch.arm)
            collect = timed(watch.collect)
            os.write(write_fd, f"{arm} {collect}".encode())
            os._exit(0)
        os.close(write_fd)
        arm, collect = map(float, os.read(read_fd, 100).split())
        os.close(read_fd)
        os.waitpid(pid, 0)
        arms.append(arm)
        collects.append(collect)
    print(f"\n## The watch's own steps (median of {repeat}, ms)\n")
    print("| Watch() in the parent | arm in the child | collect in the child | watched dicts |")
    print("|---:|---:|---:|---:|")
    steps = [statistics.median(parent), statistics.median(arms), statistics.median(collects)]
    print("| " + " | ".join(f"{step:.3f}" for step in steps) + f" | {len(Watch(namespace).targets)} |")


def versus(before_src: str, pairs: int, size_mb: int, assistant_loaded: bool = False) -> None:
    """Before/after, pair by pair: the proposals table run in a fresh process on ``before_src`` (a tree's
    ``src``, e.g. ``git archive main``) and on this tree's, alternately (each side goes first half of the
    time), so machine load affects both alike. Per proposal: the preview's median on each side, the median of
    the pairs' ratios, and the after side's preview against its own budget."""
    import json
    import subprocess
    import tempfile

    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    runs: dict[str, list[dict[str, list[float]]]] = {"before": [], "after": []}
    loads = []
    for i in range(pairs):
        for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                env = dict(os.environ, PYTHONPATH=before_src if side == "before" else here)
                command = [sys.executable, __file__, "--proposals-only", "--quick", "--size-mb", str(size_mb)]
                command += ["--assistant-loaded"] if assistant_loaded else []
                subprocess.run([*command, "--json", out.name], env=env, check=True, stdout=subprocess.DEVNULL)
                runs[side].append(json.load(out))
            loads.append(os.getloadavg()[0])
    print(
        f"\n## Before ({before_src}) vs after ({here}), {pairs} pairs, "
        f"1-min load {min(loads):.1f}–{max(loads):.1f}"
    )
    print(
        "\nPreview medians in ms (each side: the median over its runs of each run's median of 5); each side's"
    )
    print("budget is 1.5 × its own plain run + its own bare fork.\n")
    print("| proposal | before | after | after/before (median of pairs) | before / budget | after / budget |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in PROPOSALS:
        medians = {}
        for side in ("before", "after"):
            plain_ms, fork_ms, took = (
                statistics.median(run[name][k] for run in runs[side]) for k in range(3)
            )
            medians[side] = (took, took / (1.5 * plain_ms + fork_ms))
        pairs_ratio = statistics.median(
            a[name][2] / b[name][2] for a, b in zip(runs["after"], runs["before"], strict=True)
        )
        (b, b_budget), (a, a_budget) = medians["before"], medians["after"]
        print(f"| {name} | {b:.1f} | {a:.1f} | {pairs_ratio:.2f} | {b_budget:.2f} | {a_budget:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--size-mb", type=int, default=1024, help="resident size of the session's data")
    parser.add_argument("--watch-only", action="store_true", help="only the table of what the watch adds")
    parser.add_argument("--proposals-only", action="store_true", help="only the table of proposals")
    parser.add_argument("--json", help="also write the proposals table's medians to this file")
    parser.add_argument(
        "--versus", metavar="SRC", help="before/after against another tree's src, pair by pair"
    )
    parser.add_argument("--pairs", type=int, default=4, help="with --versus: how many pairs")
    parser.add_argument(
        "--assistant-loaded",
        action="store_true",
        help="load litellm and httpx first, as the REPL does once the assistant answered (the watch covers "
        "every module loaded: ~3,500 modules instead of ~1,000)",
    )
    args = parser.parse_args()
    if args.assistant_loaded:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import httpx  # noqa: F401
        import litellm  # noqa: F401
    walls = confine.probe()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print("Kernel walls:", "; ".join(confine.status()))
    if not walls.complete:
        print("No preview here: the kernel walls are not up.")
        return
    if args.versus:
        versus(args.versus, args.pairs, args.size_mb, args.assistant_loaded)
        return
    namespace = session_namespace(args.size_mb)
    repeat = 5 if args.quick else 11
    preview(namespace, "x = 1", timeout=60.0)  # warm: the rulesets, the imports
    if not args.watch_only:
        medians = proposals_table(namespace, repeat)
        if args.json:
            import json

            with open(args.json, "w") as fh:
                json.dump(medians, fh)
        if args.proposals_only:
            return
        names_table(namespace, repeat)
    watch_steps(namespace, repeat * 4)
    watch_table(namespace, repeat * 4)


if __name__ == "__main__":
    main()
