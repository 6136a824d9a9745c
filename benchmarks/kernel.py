"""Kernel runtime: capability round trips over the Jupyter protocol, bytes per call, ``--existing`` start-up.

Starts a real ipykernel (``python -m ipykernel_launcher -f <file>``), puts a 10M-row DataFrame in it and
measures, from this process:

- the round trip of ``runtime.call("get_type", {"expr": "big"})`` (budget ≤ 5 ms median), and of other
  capabilities, the picture and the tool schemas, over the comm to pyaichat's helper inside the kernel; for
  comparison the same call as a silent ``execute_request`` with a ``user_expressions`` evaluation (the other
  way to reach the helper);
- bytes on the wire per call (request + reply, as serialized), next to the data's size;
- start-up of ``pyaichat --existing <file>`` in a pseudo-terminal to its first prompt (budget ≤ 0.5 s), and
  ``printf 'x=1\\n' | pyaichat --existing <file>`` from start to exit.

    .venv/bin/python benchmarks/kernel.py [CALLS]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "kernel"))  # the tests' way of starting a real kernel

from kernel_process import start_kernel  # noqa: E402
from startup_env import new_user_env  # noqa: E402

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
ROWS = 10_000_000


def timed(fn, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9)]
    return f"median {statistics.median(samples):6.2f} ms  p90 {p90:6.2f} ms"


def user_expression_call(runtime, name: str, args: dict) -> None:
    """The same capability call as a silent execute with a user expression (no comm)."""
    from pyaichat.runtime.kernel_link import settings_of

    request = json.dumps(
        {"op": "call", "args": {"name": name, "args": args}, "settings": settings_of(runtime.config)}
    )
    expr = (
        "__import__('sys').modules['pyaichat.runtime.kernel_helper']._helper.handle("
        f"__import__('json').loads({request!r}))"
    )
    client = runtime.kernel.client
    msg_id = client.execute("", silent=True, store_history=False, user_expressions={"r": expr})
    reply = runtime.kernel.shell_reply(msg_id, 10)
    assert reply["content"]["user_expressions"]["r"]["status"] == "ok", reply["content"]


def startup(conn: Path, env: dict[str, str], runs: int = 5) -> tuple[list[float], list[float]]:
    import pexpect

    prompt, piped = [], []
    for i in range(runs + 1):
        started = time.perf_counter()
        child = pexpect.spawn(
            sys.executable,
            ["-m", "pyaichat", "--existing", str(conn)],
            env=env,
            dimensions=(30, 100),
            encoding="utf-8",
            timeout=30,
        )
        child.expect(">>> ")
        elapsed = (time.perf_counter() - started) * 1000
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pyaichat", "--existing", str(conn)],
            input="x = 1\n",
            text=True,
            env=env,
            capture_output=True,
            check=True,
        )
        piped_ms = (time.perf_counter() - started) * 1000
        if i:  # the first run warms the file cache
            prompt.append(elapsed)
            piped.append(piped_ms)
    return prompt, piped


def main() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from pyaichat.configuration.config import Config
    from pyaichat.runtime import connect

    tmp = Path(tempfile.mkdtemp(prefix="pyaichat-kernel-bench-"))
    kernel = start_kernel(tmp, "kernel-bench.json")
    conn = kernel.connection_file
    try:
        runtime = connect.attach(str(conn), Config(audit=False, color=False), timeout=60)
        runtime.run(
            f"import numpy as np, pandas as pd\nbig = pd.DataFrame({{'a': np.arange({ROWS}), 'b': 0.5}})"
        )
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {CALLS} calls each")
        print(f"data in the kernel: big = DataFrame {ROWS:,} rows × 2 columns ({ROWS * 16 / 1e6:,.0f} MB)")
        cases = [
            ("get_type", {"expr": "big"}),
            ("get_repr", {"expr": "big"}),
            ("eval_expr", {"expr": "big.b.sum()"}),
            ("list_globals", {}),
            ("get_dir", {"expr": "big"}),
        ]
        budget = None
        for name, args in cases:
            runtime.call(name, args)  # warm
            samples = timed(lambda name=name, args=args: runtime.call(name, args), CALLS)
            size = runtime.kernel.wire.total[-1]
            print(f"comm  {name:<13} {describe(samples)}   {size:>6,} bytes on the wire (request+reply)")
            if name == "get_type":
                budget = statistics.median(samples)
        run_n = max(CALLS // 20, 5)
        samples = timed(lambda: runtime.call("run_python", {"code": "print(big.b.mean())"}), run_n)
        print(
            f"comm  {'run_python':<13} {describe(samples)}   {runtime.kernel.wire.total[-1]:>6,} bytes "
            f"(forks the kernel: {run_n} calls)"
        )
        picture = timed(runtime.picture, max(CALLS // 10, 10))
        print(f"comm  {'picture':<13} {describe(picture)}   {runtime.kernel.wire.total[-1]:>6,} bytes")
        tools = timed(runtime.tools, max(CALLS // 10, 10))
        print(
            f"comm  {'tools':<13} {describe(tools)}   {runtime.kernel.wire.total[-1]:>6,} bytes "
            "(the tool schemas, asked from the kernel once per question)"
        )
        user_expression_call(runtime, "get_type", {"expr": "big"})
        samples = timed(lambda: user_expression_call(runtime, "get_type", {"expr": "big"}), CALLS)
        print(f"user_expressions get_type {describe(samples)}   (silent execute_request instead of the comm)")
        verdict = "within" if budget is not None and budget <= 5 else "OVER"
        print(f"get_type round trip: {verdict} the 5 ms budget (median {budget:.2f} ms)")
        runtime.close()

        env = new_user_env(str(tmp), terminal=True)
        prompt, piped = startup(conn, env)
        print(
            f"pyaichat --existing to first prompt: median {statistics.median(prompt):.0f} ms "
            f"(runs: {', '.join(f'{s:.0f}' for s in prompt)}); "
            f"{'within' if statistics.median(prompt) <= 500 else 'OVER'} the 500 ms budget"
        )
        print(
            f"printf 'x = 1\\n' | pyaichat --existing: median {statistics.median(piped):.0f} ms "
            f"(runs: {', '.join(f'{s:.0f}' for s in piped)})"
        )
    finally:
        kernel.kill()


if __name__ == "__main__":
    main()
