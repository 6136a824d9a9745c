"""The read-only proof's slow mode: thousands of generated expressions through ``capabilities.call``, every
failure kept (not only the first), and where each expression was read.

It runs the grammar and the checks of ``tests/security/test_readonly_proof.py`` (fingerprints, the watched
folder, secrets in the text) but records a failure and carries on, on a fresh session, so one run lists every
kind of break it met. Run it against another checkout to see what that one lets through, e.g. the code before
the in-process level was closed::

    .venv/bin/python benchmarks/readonly_proof.py --examples 3000
    git archive <commit> src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/readonly_proof.py

Prints: how many calls were answered in-process, in the walled child (a fork), or refused; the longest time a
call kept a ticking thread from running (GIL held); and each failure (what changed, which secret showed, a
GIL held past the bound) with the expression, grouped by kind. Every known break goes through all five
tools first.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
KINDS = r"\) (changed [\w ]+?:|changed the environment|showed a secret|held the GIL)"
sys.path.insert(0, str(HERE / "tests" / "security"))
sys.path.insert(0, str(HERE / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import test_readonly_proof as proof_module  # type: ignore[import-not-found]
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    import pyaichat

    proof = proof_module.Proof(Path(proof_module.WATCH))
    forks = [0]
    real_fork = os.fork

    def counting_fork() -> int:
        forks[0] += 1
        return real_fork()

    os.fork = counting_fork  # type: ignore[assignment]
    warnings.simplefilter("ignore", SyntaxWarning)  # what an older checkout prints for odd expressions
    where: collections.Counter[str] = collections.Counter()
    failures: dict[str, list[str]] = collections.defaultdict(list)

    def check(capability: str, expr: str) -> None:
        before = forks[0]
        try:
            proof.check(capability, expr)
        except AssertionError as exc:
            first = str(exc).splitlines()[0]
            found = re.search(KINDS, first)
            kind = found.group(1).rstrip(":") if found else "other"
            failures[kind].append(first[:220])
            where["failed"] += 1
            return
        where["child" if forks[0] > before else "in-process or refused"] += 1

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(capability=st.sampled_from(proof_module.CAPABILITIES), expr=proof_module.expressions())
    def run(capability: str, expr: str) -> None:
        check(capability, expr)

    started = time.perf_counter()
    for expr in proof_module.KNOWN_BREAKS:  # every known break through every tool
        for capability in proof_module.CAPABILITIES:
            check(capability, expr.replace("WATCHDIR", proof_module.WATCH))
    run()
    took = time.perf_counter() - started
    print(f"pyaichat from {Path(pyaichat.__file__).parent}")
    print(f"{sum(where.values())} calls in {took:.0f} s; load {os.getloadavg()[0]:.1f}")
    for key, count in where.most_common():
        print(f"  {key}: {count}")
    held, bound = getattr(proof, "longest_hold", 0.0), proof_module.GIL_BOUND
    print(f"longest gap of the GIL ticker during a call: {held * 1000:.0f} ms (bound {bound} s)")
    print(f"longest gap while a child was forked: {getattr(proof, 'longest_fork', 0.0) * 1000:.0f} ms")
    if not failures:
        print("no write, no secret shown")
    for kind, found in sorted(failures.items(), key=lambda item: -len(item[1])):
        print(f"\n{kind}: {len(found)}")
        for line in sorted(set(found), key=len)[:8]:
            print(f"  {line}")


if __name__ == "__main__":
    main()
