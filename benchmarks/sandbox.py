"""Sandbox cost, printed as tables (no assertions; the budgets are in the README's sandbox section).

1. Compute: 12 mixed snippets run with plain ``exec`` and in the sandbox (guards, checked operators;
   in-process mode adds deadline ticks), per-snippet ratio and the median ratio, for both isolation modes.
   Compute time is measured around the ``exec`` itself so the fork's fixed cost (table 2) is not counted
   twice. "fork, walled" is fork mode's code (the relaxed rules of the kernel wall) timed *inside* a forked
   child with Landlock + seccomp up, against plain ``exec`` in this process; the end-to-end column is a whole
   forked, confined run.
2. Fixed cost of one forked run (a trivial snippet through ``run_forked``) against a bare fork-and-exit round
   trip of the same process, at about 100 MB, 1 GB and 5 GB resident: without the kernel walls, with them,
   the time the child spends raising them, and the time it spends making memory it shares with the session
   private (``shared_memory.privatize``; this process maps one small shared file, as glibc's iconv does).
4. Refusals of the legitimate set (``tests/security/test_legit.py``: LEGIT + LEGIT_WALLED) per mode.
3. ``eval_expr`` of names and attribute paths (budget 50 µs): the evaluation itself (``expression.evaluate``:
   parse cache, the in-process levels, bounded summary) and the whole ``capabilities.call`` (argument
   validation, deadline, masking, result model; audit off).
5. What the child's replacement of the secrets (``scrub``) costs a call that goes to the child (budget: the
   bare fork + 2× the call's own time): per expression, the call's own time (plain ``eval`` here), a bare
   fork round trip, the whole ``capabilities.call`` with the replacement and with it switched off
   (interleaved), in the review's session (``tests/readonly_breaks.py``, with its secrets); then the walk
   itself, cold (the first call after an input) and remembered, in that session and in a large one (10,000
   variables, a 10-million-row frame, a list of a million records): ``--scrub-only``.

Run: ``.venv/bin/python benchmarks/sandbox.py [--quick] [--no-big]``
"""

from __future__ import annotations

import argparse
import builtins
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable

from pyaichat.capabilities.sandbox import confine, shared_memory
from pyaichat.capabilities.sandbox.guards import Guards
from pyaichat.capabilities.sandbox.isolation import run_forked
from pyaichat.capabilities.sandbox.policy import IN_PROCESS, ForkedChild
from pyaichat.capabilities.sandbox.runner import Request, Secrets, prepare

SNIPPETS: list[tuple[str, str]] = [
    ("loop-arith", "total = 0\nfor i in range(300000):\n    total += i % 7"),
    ("comprehension", "sq = [i * i for i in range(300000) if i % 3]"),
    (
        "string-count",
        "words = ('alpha beta gamma delta ' * 30000).split()\ncounts = {}\n"
        "for w in words:\n    counts[w] = counts.get(w, 0) + 1",
    ),
    (
        "sort-key",
        "data = [(i * 7919) % 10007 for i in range(150000)]\nout = sorted(data, key=lambda v: (v % 10, -v))",
    ),
    ("recursion", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nr = fib(22)"),
    (
        "classes",
        "class P:\n    def __init__(self, x):\n        self.x = x\n    def norm(self):\n        return abs(self.x)\n"  # noqa: E501
        "ps = [P(i - 5000) for i in range(80000)]\ns = sum(p.norm() for p in ps)",
    ),
    (
        "dict-group",
        "rows = [{'a': i, 'b': i % 5} for i in range(100000)]\ngroups = {}\n"
        "for r in rows:\n    groups.setdefault(r['b'], []).append(r['a'])",
    ),
    (
        "fstrings",
        "lines = [f'{i:05d}|{i * 0.5:.2f}|{str(i)[::-1]}' for i in range(100000)]\ntext = '\\n'.join(lines)",
    ),
    (
        "numpy-vector",
        "import numpy as np\na = np.arange(3_000_000, dtype=float)\nr = float((np.sqrt(a) * 2).sum()) + float(a.std())",  # noqa: E501
    ),
    (
        "numpy-matmul",
        "import numpy as np\nm = np.random.default_rng(0).random((300, 300))\nfor _ in range(20):\n    m = m @ m.T / 300",  # noqa: E501
    ),
    (
        "pandas-groupby",
        "import pandas as pd\nframe = pd.DataFrame({'k': [i % 100 for i in range(300000)], 'v': range(300000)})\n"  # noqa: E501
        "res = frame.groupby('k')['v'].mean()",
    ),
    (
        "pandas-merge",
        "import pandas as pd\na = pd.DataFrame({'k': range(100000), 'x': range(100000)})\n"
        "b = pd.DataFrame({'k': range(0, 200000, 2), 'y': 1})\nm = a.merge(b, on='k')\nd = m.describe()",
    ),
]

NO_SECRETS = Secrets(lambda name: False, lambda text: False)


def _best_time(func: Callable[[], object], repeat: int) -> float:
    """Best of ``repeat`` runs: the least disturbed by other processes on a shared machine."""
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return min(times)


def plain(source: str) -> Callable[[], object]:
    code = compile(source, "<plain>", "exec")
    return lambda: exec(code, {"__builtins__": builtins, "__name__": "bench"})


WALLS = confine.probe()
FORKED = ForkedChild(WALLS)


UNWALLED = ForkedChild(confine.Walls(0, False, ()))


def sandboxed(source: str, mode: str, walled: bool = False) -> Callable[[], object]:
    policy = IN_PROCESS if mode == "inprocess" else FORKED if walled else UNWALLED
    compiled = policy.compile(source)

    def run() -> None:
        guards = Guards(policy, NO_SECRETS.is_secret_name, NO_SECRETS.looks_secret, time.monotonic() + 60)
        env = guards.globals({})
        exec(compiled.code, env)

    return run


def walled_child_time(source: str, repeat: int) -> float:
    """Best time of the walled sandbox's ``exec``, measured in a forked child behind Landlock + seccomp."""
    run = sandboxed(source, "fork", walled=WALLS.complete)

    def job() -> dict[str, object]:
        return {"ok": True, "t": _best_time(run, repeat)}

    result = run_forked(job, 120.0, WALLS, require_walls=WALLS.complete)
    assert result.get("ok"), result
    return float(result["t"])  # type: ignore[arg-type]


def forked_end_to_end(source: str) -> Callable[[], object]:
    req = Request(source, "exec", FORKED, 60.0, "sample", 4000)
    return lambda: run_forked(prepare(req, {}, NO_SECRETS), 60.0, WALLS, WALLS.complete)


def compute_table(repeat: int) -> None:
    print("\n## Compute: sandbox vs plain exec (best of", repeat, "runs, ms; median over snippets)\n")
    print(f"| {'snippet':15} | plain | fork, walled (in confined child) | ratio | in-process | ratio "
          "| fork end-to-end |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    ratios: dict[str, list[float]] = {"fork": [], "inprocess": []}
    for name, source in SNIPPETS:
        base, fork_t = float("inf"), float("inf")
        for _ in range(repeat):  # interleaved, so both see the same machine load
            base = min(base, _best_time(plain(source), 1))
            fork_t = min(fork_t, walled_child_time(source, 2))  # best of 2 in one child: warm, like plain
        inproc_t = _best_time(sandboxed(source, "inprocess"), repeat)
        e2e = _best_time(forked_end_to_end(source), repeat)
        ratios["fork"].append(fork_t / base)
        ratios["inprocess"].append(inproc_t / base)
        print(
            f"| {name:15} | {base * 1e3:.1f} | {fork_t * 1e3:.1f} | {fork_t / base:.2f}x "
            f"| {inproc_t * 1e3:.1f} | {inproc_t / base:.2f}x | {e2e * 1e3:.1f} |"
        )
    print(
        f"| **median** | | | **{statistics.median(ratios['fork']):.2f}x** | | "
        f"**{statistics.median(ratios['inprocess']):.2f}x** | |"
    )


def bare_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def trivial_forked_run() -> None:
    """What ``sandbox.run`` does for a trivial snippet in fork mode, without the kernel walls."""
    req = Request("1", "exec", UNWALLED, 60.0, "sample", 4000)
    run_forked(prepare(req, {}, NO_SECRETS), 60.0)


def trivial_confined_run() -> None:
    """The same with the walls (as ``sandbox.run`` does it where the kernel has them)."""
    req = Request("1", "exec", FORKED, 60.0, "sample", 4000)
    out = run_forked(prepare(req, {}, NO_SECRETS), 60.0, WALLS, WALLS.complete)
    assert out.get("ok"), out


def raise_walls_time() -> float:
    """What the child spends raising the walls, timed in the child (the ruleset prepared by the parent, as
    ``run_forked`` does)."""
    ruleset = confine.prepare_in_parent(WALLS)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        started = time.perf_counter()
        confine.raise_walls(WALLS, ruleset)
        os.write(write_fd, str(time.perf_counter() - started).encode())
        os._exit(0)
    os.close(write_fd)
    took = float(os.read(read_fd, 100))
    os.close(read_fd)
    os.waitpid(pid, 0)
    return took


def privatize_time() -> float:
    """What the child spends on ``shared_memory.privatize``, timed in the child."""
    shared_memory.prepare()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        started = time.perf_counter()
        shared_memory.privatize((write_fd,))
        os.write(write_fd, str(time.perf_counter() - started).encode())
        os._exit(0)
    os.close(write_fd)
    took = float(os.read(read_fd, 100))
    os.close(read_fd)
    os.waitpid(pid, 0)
    return took


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fixed_cost_table(sizes_mb: list[int], repeat: int) -> None:
    import numpy as np

    walls = " + ".join(n for n, up in (("Landlock", WALLS.landlock_abi), ("seccomp", WALLS.seccomp)) if up)
    print(
        "\n## Fixed cost of one forked run vs a bare fork-and-exit "
        f"(best of N, ms; walls: {walls or 'none'})\n"
    )
    print("| resident | bare fork+exit | forked run, no walls | ratio | forked run, walls up | ratio "
          "| raising the walls (in child) | privatising shared memory (in child) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    trivial_forked_run()  # warm caches (compile, imports)
    trivial_confined_run()
    for size in sizes_mb:
        extra = max(0, size - int(rss_mb()))
        ballast = np.ones(extra * 2**20 // 8) if extra else None  # touched pages: really resident
        reps = repeat if size < 4000 else max(3, repeat // 3)
        bare_times, our_times, walled_times, raise_times, private_times = [], [], [], [], []
        for _ in range(reps):  # interleaved, so all see the same machine load
            bare_times.append(_best_time(bare_fork, 1))
            our_times.append(_best_time(trivial_forked_run, 1))
            walled_times.append(_best_time(trivial_confined_run, 1))
            raise_times.append(raise_walls_time())
            private_times.append(privatize_time())
        bare, ours, walled = min(bare_times), min(our_times), min(walled_times)
        print(
            f"| {rss_mb():,.0f} MB | {bare * 1e3:.1f} | {ours * 1e3:.1f} | {ours / bare:.2f}x "
            f"| {walled * 1e3:.1f} | {walled / bare:.2f}x | {statistics.median(raise_times) * 1e3:.2f} "
            f"| {statistics.median(private_times) * 1e3:.2f} |"
        )
        del ballast
        gc.collect()


def refusals_table() -> None:
    """How many snippets of the legitimate set each mode refuses (or answers wrongly)."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "security"))
    import test_legit  # type: ignore[import-not-found]
    from sbx_helpers import make_session  # type: ignore[import-not-found]

    from pyaichat.capabilities import call

    print("\n## Refusals of the legitimate set (tests/security/test_legit.py)\n")
    print("| mode | LEGIT refused | LEGIT_WALLED refused | refused ids |")
    print("|---|---:|---:|---|")
    for mode in ("fork", "inprocess"):
        session = make_session(mode)
        counts, ids = [], []
        for cases in (test_legit.LEGIT, test_legit.LEGIT_WALLED):
            bad = []
            for cid, code, want in cases:
                result = call(session, "run_python", {"code": code})
                if not (result.ok and want in result.text):
                    bad.append(cid)
            counts.append(f"{len(bad)}/{len(cases)}")
            ids += bad
        print(f"| {mode} | {counts[0]} | {counts[1]} | {', '.join(ids) or '-'} |")


def eval_expr_table(runs: int = 2000) -> None:
    import numpy as np
    import pandas as pd

    from pyaichat.capabilities import call, expression
    from pyaichat.capabilities.catalog import CapabilityContext
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    session = Session(echo=lambda value: None)
    session.settings.replace(Config(audit=False))
    session.namespace.update(
        n=42,
        name="orders.csv",
        xs=list(range(1000)),
        arr=np.arange(1_000_000.0),
        df=pd.DataFrame({"id": range(1000), "total": np.linspace(0, 1, 1000)}),
    )
    ctx = CapabilityContext(session, session.config)
    print(f"\n## eval_expr: names and attribute paths (median of {runs}, µs)\n")
    print("| expression | evaluation | whole call() |")
    print("|---|---:|---:|")

    def timed(func: Callable[[], object]) -> float:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            func()
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1e6

    for expr in ("n", "name", "xs", "arr.shape", "df.shape", "df.columns"):
        bare = timed(lambda e=expr: expression.evaluate(ctx, e))
        whole = timed(lambda e=expr: call(session, "eval_expr", {"expr": e}))
        print(f"| `{expr}` | {bare:.0f} | {whole:.0f} |")


CHILD_CALLS = [
    "(lambda v: v['primary'][::-1])(vault)",
    "(lambda: sum(range(1000)))()",
    "reveal()[::-1]",
    "df.describe()",
    "(lambda: sorted(str(i) for i in range(20000)))()",
]


def scrub_table(runs: int) -> None:
    import numpy as np
    import pandas as pd

    from pyaichat.capabilities import call
    from pyaichat.capabilities.catalog import CapabilityContext
    from pyaichat.capabilities.sandbox import scrub, secrets_for
    from pyaichat.capabilities.sandbox.secret_places import Places
    from pyaichat.capabilities.secret_values import refresh
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "tests"))
    from readonly_breaks import CHILD_SETUP, setup_source  # type: ignore[import-not-found]

    session = Session(echo=lambda value: None)
    session.settings.replace(Config(audit=False, tool_timeout=30.0))
    assert session.run(setup_source("/tmp") + CHILD_SETUP).ok
    real_plan = scrub.plan

    def off(*args: object, **kwargs: object) -> Places:
        return Places()

    def timed(func: Callable[[], object]) -> float:
        started = time.perf_counter()
        func()
        return time.perf_counter() - started

    print(f"\n## A call in the child: the replacement of the secrets (median of {runs}, ms; audit off)\n")
    print("| expression | own time | bare fork | budget (fork + 2× own) | call, replacing | call, not "
          "replacing | ratio to budget |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for expr in CHILD_CALLS:
        code = compile(expr, "<bench>", "eval")
        own = statistics.median(timed(lambda c=code: eval(c, dict(session.namespace))) for _ in range(runs))
        with_times, without_times, forks = [], [], []
        call(session, "eval_expr", {"expr": expr})  # warm: the walk, the compiled code
        for _ in range(runs):  # interleaved, so all see the same machine load
            forks.append(timed(bare_fork))
            scrub.plan = real_plan
            with_times.append(timed(lambda e=expr: call(session, "eval_expr", {"expr": e})))
            scrub.plan = off
            without_times.append(timed(lambda e=expr: call(session, "eval_expr", {"expr": e})))
        scrub.plan = real_plan
        fork, on, no = (statistics.median(t) for t in (forks, with_times, without_times))
        budget = fork + 2 * own
        print(f"| `{expr}` | {own * 1e3:.2f} | {fork * 1e3:.1f} | {budget * 1e3:.1f} | {on * 1e3:.1f} "
              f"| {no * 1e3:.1f} | {on / budget:.2f}x |")  # fmt: skip

    big = Session(echo=lambda value: None)
    big.settings.replace(Config(audit=False))
    n = 10_000_000
    names = np.array(["alpha", "beta", "gamma", "delta"], dtype=object)
    big.namespace.update(
        frame=pd.DataFrame({"id": np.arange(n), "x": np.linspace(0, 1, n), "name": np.tile(names, n // 4)}),
        records=[{"name": f"user{i}", "email": f"u{i}@example.com", "n": i} for i in range(1_000_000)],
        api_key="sk-proj-benchmarkbenchmarkbenchmark01",
        **{f"v{i}": (i if i % 3 else f"text value {i}") for i in range(10_000)},
    )
    print("\n## The walk that finds the secrets, in this process before the fork (median of 5, ms)\n")
    print("| session | objects looked at | cold (first call after an input) | remembered | found | cut |")
    print("|---|---:|---:|---:|---:|---|")
    for label, s in (("the review's", session), ("10,000 variables, 10M-row frame, 1M records", big)):
        ctx = CapabilityContext(s, s.config)
        refresh(s, s.config)
        secrets = secrets_for(ctx)

        def walk(stamp: object, ns: object = s.namespace, found: object = secrets) -> Places:
            return real_plan(ns, found.is_secret_name, found.masker, stamp)  # type: ignore[attr-defined]

        cold, warm = [], []
        places = Places()
        for _ in range(5):
            scrub.forget()
            cold.append(timed(lambda w=walk: w(None)))
            places = walk("stamp")
            warm.append(timed(lambda w=walk: w("stamp")))
        print(f"| {label} | {places.looked:,} | {statistics.median(cold) * 1e3:.1f} | "
              f"{statistics.median(warm) * 1e3:.3f} | {len(places)} | {places.cut} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-big", action="store_true", help="skip the 5 GB fixed-cost row")
    parser.add_argument("--eval-only", action="store_true", help="only the eval_expr table")
    parser.add_argument("--walls-only", action="store_true", help="only the fixed-cost and refusal tables")
    parser.add_argument(
        "--scrub-only", action="store_true", help="only the tables of the child's replacement"
    )
    args = parser.parse_args()
    import numpy  # noqa: F401  (imported once, as in a real session, before timing)
    import pandas  # noqa: F401

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print("Kernel walls:", "; ".join(confine.status()))
    if args.eval_only:
        eval_expr_table()
        return
    if args.scrub_only:
        scrub_table(9 if args.quick else 25)
        return
    sizes = [100, 1024] + ([] if args.no_big else [5 * 1024])
    if not args.walls_only:
        compute_table(3 if args.quick else 7)
    fixed_cost_table(sizes, 5 if args.quick else 15)
    refusals_table()
    if not args.walls_only:
        eval_expr_table(500 if args.quick else 2000)
        scrub_table(9 if args.quick else 25)


if __name__ == "__main__":
    main()
