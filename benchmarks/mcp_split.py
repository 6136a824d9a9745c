"""Where an MCP call's time over the bare SDK goes: the hop to the session, and the session's own work.

The same SDK client (a process of its own) calls, call by call in turn, ``get_type`` of the 100,000×5 frame of
``benchmarks/mcp.py`` through:

1. the bare SDK server answering a constant (the floor of ``mcp.py``);
2. pyaichat (face process, link, endpoint) over a session whose backend answers the real call's result at
   once: the face and the hop to the session, with none of the session's work;
3. pyaichat for real: the gate, the one door (validation, the bounded worker, the capability, masking, audit),
   the quiet line and the reads counted;
4. (``--no-worker``) as 3, with the capability run on the endpoint's thread instead of the bounded worker:
   what the deadline's thread hop costs (a measurement only: without it nothing bounds the call).

Over Streamable HTTP and over stdio (``pyaichat mcp``); each pyaichat session serves from its own state
directory, so ``pyaichat mcp`` finds the one meant.

    .venv/bin/python benchmarks/mcp_split.py [CALLS] [--no-worker]
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALLS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
NO_WORKER = "--no-worker" in sys.argv


def load_bench():  # type: ignore[no-untyped-def]
    """``benchmarks/mcp.py`` as a module (its name is the SDK's: imported by path)."""
    spec = importlib.util.spec_from_file_location("bench_mcp", ROOT / "benchmarks" / "mcp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    bench = load_bench()
    sys.path.insert(0, str(ROOT / "tests" / "mcpserve"))
    from serve_helpers import Served, bridge_env

    from pyaichat.mcpserve.rate import RateBound

    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; {CALLS} calls each")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(base / "real")
        os.environ.pop("XDG_RUNTIME_DIR", None)
        kinds = ["constant", "real", *(["no-worker"] if NO_WORKER else [])]
        sessions = {kind: Served(base / kind, bench.SETUP) for kind in kinds}
        try:
            for served in sessions.values():  # the benchmark's calls are a flood by design
                assert served.service.backend is not None
                served.service.backend.rate = RateBound(10**9, 1e9)
            answer = sessions["real"].ctrl.runtime.call("get_type", {"expr": "df"})
            constant = sessions["constant"].service.backend
            assert constant is not None
            constant.call = lambda name, args, client: answer  # type: ignore[method-assign]
            if NO_WORKER:
                from pyaichat.capabilities import invoke

                direct = sessions["no-worker"].session
                bounded = invoke.run_with_deadline

                def unbounded(func, timeout):  # type: ignore[no-untyped-def]
                    in_direct = func.__closure__ and any(
                        getattr(c.cell_contents, "session", None) is direct for c in func.__closure__
                    )
                    return func() if in_direct else bounded(func, timeout)

                invoke.run_with_deadline = unbounded  # type: ignore[assignment]
            env = bridge_env(base / "real")
            bare, bare_url = bench.bare_http(env)
            try:
                servers = [("http", bare_url, "-")]
                servers += [("http", sessions[k].url, sessions[k].token) for k in kinds]
                http = bench.run_client(servers, CALLS, "split", env)
            finally:
                bare.kill()
                bare.wait()
            stdio: dict[str, list[float]] = {}
            floors: dict[str, list[float]] = {}
            for kind in kinds:  # one `pyaichat mcp` each: it serves the session its state directory names
                pair = [("bare-stdio", "-", "-"), ("stdio", "-", "-")]
                floors[kind], stdio[kind] = bench.run_client(pair, CALLS, "split", bridge_env(base / kind))
        finally:
            for served in sessions.values():
                served.stop()
    med = statistics.median
    print("Streamable HTTP, the four in turn call by call (median ms, and over the bare SDK)")
    print(f"  bare SDK, a constant                     {med(http[0]):6.2f}")
    labels = {
        "constant": "pyaichat, the session answers at once",
        "real": "pyaichat, the real call",
        "no-worker": "pyaichat, the call on the endpoint thread",
    }
    for i, kind in enumerate(kinds, 1):
        added = med(http[i]) - med(http[0])
        print(f"  {labels[kind]:41s}{med(http[i]):6.2f}  +{added:.2f} ({med(http[i]) / med(http[0]):.2f}×)")
    print("stdio (pyaichat mcp), each in turn with the bare SDK (median ms, and over it)")
    for kind in kinds:
        added = med(stdio[kind]) - med(floors[kind])
        ratio = med(stdio[kind]) / med(floors[kind])
        print(
            f"  {labels[kind]:41s}{med(stdio[kind]):6.2f}  bare {med(floors[kind]):5.2f}  "
            f"+{added:.2f} ({ratio:.2f}×)"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
