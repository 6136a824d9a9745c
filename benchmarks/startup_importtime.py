"""``python -X importtime -m pyaichat`` on the piped and the interactive path, summed by package.

Piped: ``x=1`` on stdin. Interactive: a pty (pexpect, 100x30), ended right after prompt_toolkit's first
render (the full UI); stderr, where ``-X importtime`` writes, goes to a file so the screen stays clean.
Each path runs ``--runs`` times after two warm-up runs; each figure is the median over the runs.
``--src DIR`` puts another checkout's ``src`` first on ``sys.path`` to profile an older commit alike, e.g.
``git worktree add /tmp/before 636073e`` and ``--src /tmp/before/src --src src``; with several, the runs
alternate between them so that load on the machine hits all alike. Usage:

    .venv/bin/python benchmarks/startup_importtime.py [--src DIR ...] [--runs N]
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

import pexpect
from startup_env import new_user_env

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
GROUPS = ("prompt_toolkit", "asyncio", "wcwidth", "pyaichat", "pydantic", "pygments", "rich", "litellm")


def environment(src: str | None) -> dict[str, str]:
    env = new_user_env(tempfile.mkdtemp(prefix="pyaichat-importtime-"), terminal=True)
    if src:
        env["PYTHONPATH"] = src
    return env


def piped(env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pyaichat"],
        input="x = 1\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return proc.stderr


# Runs ``python -m pyaichat`` as it is, and ends the process right after prompt_toolkit's first render (the
# full UI): a meta-path hook wraps ``Renderer.render`` once ``prompt_toolkit.renderer`` has loaded, so the
# import order is untouched and nothing imported after the first prompt (the lexer, deferred work) counts.
STOP_AT_FIRST_RENDER = """
import os, runpy, sys

class StopAtFirstRender:
    def find_spec(self, name, path=None, target=None):
        if name != "prompt_toolkit.renderer":
            return None
        sys.meta_path.remove(self)
        from importlib.util import find_spec
        spec = find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            render = module.Renderer.render

            def render_then_exit(self, *args, **kwargs):
                render(self, *args, **kwargs)
                sys.stderr.flush()
                os._exit(0)

            module.Renderer.render = render_then_exit

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, StopAtFirstRender())
sys.argv = ["pyaichat"]
runpy.run_module("pyaichat", run_name="__main__", alter_sys=True)
"""


def interactive(env: dict[str, str]) -> str:
    with tempfile.NamedTemporaryFile("r", suffix=".importtime") as log:
        argv = [sys.executable, "-X", "importtime", "-c", STOP_AT_FIRST_RENDER]
        command = f"exec {shlex.join(argv)} 2>{shlex.quote(log.name)}"
        child = pexpect.spawn("/bin/sh", ["-c", command], env=env, dimensions=(30, 100), timeout=30)
        child.expect(pexpect.EOF)
        child.close()
        return log.read()


def summary(stderr: str) -> dict[str, float]:
    """Milliseconds of import time (the sum of self times) per package group, plus the count of modules."""
    by_group: dict[str, float] = defaultdict(float)
    count = 0
    for match in LINE.finditer(stderr):
        self_us, name = int(match.group(1)), match.group(4)
        top = name.split(".")[0]
        by_group[top if top in GROUPS else "other (stdlib, site)"] += self_us / 1000
        by_group["all"] += self_us / 1000
        count += 1
    by_group["modules"] = count
    return by_group


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--src",
        action="append",
        help="a checkout's src directory to profile instead of the installed one "
        "(repeat to compare several; runs alternate between them)",
    )
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    sources: list[str | None] = args.src or [None]
    envs = [environment(src) for src in sources]
    names = [src or "installed" for src in sources]
    print(
        f"-X importtime: milliseconds of import (sum of self times), median of {args.runs} alternating runs"
    )
    for path, run in (("piped", piped), ("interactive, to the full UI", interactive)):
        for env in envs:  # warm the file cache and write .pyc files
            run(env), run(env)
        runs: list[list[dict[str, float]]] = [[] for _ in envs]
        for _ in range(args.runs):
            for env, collected in zip(envs, runs, strict=True):
                collected.append(summary(run(env)))
        print(f"  {path}:" + "".join(f"{name[-24:]:>26}" for name in names))
        for key in ["all", "modules", *GROUPS, "other (stdlib, site)"]:
            values = [statistics.median(r.get(key, 0.0) for r in collected) for collected in runs]
            if any(values):
                print(f"    {key:<22}" + "".join(f"{value:26.1f}" for value in values))


if __name__ == "__main__":
    main()
