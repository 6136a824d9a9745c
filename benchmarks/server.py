"""``--server``: a capability round trip over the kernel websocket against the same call over ``--existing``
(ZMQ) to the very same kernel on this machine (budget ≤ 1.5×), and start-to-prompt of both.

Starts a real ``jupyter server`` on 127.0.0.1 (the tests' ``server_process``), a kernel through its REST API
with a 1M-row DataFrame in it, and attaches to that one kernel twice: over its websocket (``--server``) and
through the connection file the server wrote (``--existing``). Calls alternate pair by pair (the order flips
each pair), so a load that changes during the run weighs on both alike; the ratio is taken per pair.

    .venv/bin/python benchmarks/server.py [CALLS] [STARTS]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))  # the tests' way of starting a real Jupyter Server

from server_process import start_server  # noqa: E402
from startup_env import new_user_env  # noqa: E402

from pyaichat.configuration.config import Config  # noqa: E402
from pyaichat.runtime import connect  # noqa: E402
from pyaichat.runtime.jupyter_server.kernels import attach, running  # noqa: E402
from pyaichat.runtime.jupyter_server.rest import ServerAPI, parse_address  # noqa: E402

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
STARTS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"median {statistics.median(samples):6.2f} ms  p90 {ordered[int(len(ordered) * 0.9)]:6.2f} ms"


def round_trips(ws, zmq) -> None:
    for runtime in (ws, zmq):  # warm both (the first call loads the capabilities in the kernel)
        for _ in range(20):
            runtime.call("get_type", {"expr": "big"})
    pairs = []
    for i in range(CALLS):
        order = (ws, zmq) if i % 2 == 0 else (zmq, ws)
        times = {id(r): ms(lambda r=r: r.call("get_type", {"expr": "big"})) for r in order}
        pairs.append((times[id(ws)], times[id(zmq)]))
    over_ws, over_zmq = [p[0] for p in pairs], [p[1] for p in pairs]
    ratios = [a / b for a, b in pairs]
    print(f"get_type(big), {CALLS} pairs, alternating:")
    print(f"  --server (websocket)  {describe(over_ws)}")
    print(f"  --existing (ZMQ)      {describe(over_zmq)}")
    print(
        f"  ratio websocket/ZMQ: median of the pairs {statistics.median(ratios):.2f}x, of the medians "
        f"{statistics.median(over_ws) / statistics.median(over_zmq):.2f}x (budget <= 1.5x)"
    )
    trips = sorted(ws.kernel.server.client.round_trips)
    if trips:
        print(f"  websocket ping round trip to the server: median {statistics.median(trips) * 1000:.2f} ms")
    sizes = ws.kernel.wire.total[-1], zmq.kernel.wire.total[-1]
    print(f"  bytes per call (request + reply): websocket {sizes[0]}, ZMQ {sizes[1]}")


def starts(url: str, kernel_id: str, connection_file: Path, token: str) -> None:
    import pexpect

    with tempfile.TemporaryDirectory() as tmp:
        env = new_user_env(tmp, terminal=True)
        env["JUPYTER_TOKEN"] = token
        commands = {
            "--server": ["--server", url, "--kernel-id", kernel_id],
            "--existing": ["--existing", str(connection_file)],
        }
        got: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(STARTS + 1):
            for name in commands if i % 2 == 0 else reversed(list(commands)):
                started = time.perf_counter()
                child = pexpect.spawn(
                    sys.executable,
                    ["-m", "pyaichat", *commands[name]],
                    env=env,
                    dimensions=(30, 100),
                    encoding="utf-8",
                    timeout=60,
                )
                child.expect(">>> ")
                elapsed = (time.perf_counter() - started) * 1000
                child.sendcontrol("d")
                child.expect(pexpect.EOF)
                child.close()
                if i:  # the first pair warms the file cache
                    got[name].append(elapsed)
        print(f"start to first prompt in a pty, {STARTS} runs each, alternating:")
        for name, samples in got.items():
            spread = f"min {min(samples):.0f}, max {max(samples):.0f}"
            print(f"  {name:<11} median {statistics.median(samples):7.0f} ms  ({spread})")
        ratio = statistics.median(got["--server"]) / statistics.median(got["--existing"])
        print(f"  ratio --server/--existing: {ratio:.2f}x")


def main() -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load: {load} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "jupyter")
        try:
            kernel_id = server.start_kernel()
            address, _ = parse_address(server.url)
            api = ServerAPI(address, server.token)
            entry = next(e for e in running(api) if e.id == kernel_id)
            config = Config(audit=False, color=False)
            ws = attach(api, entry, config)
            ws.run(
                "import numpy as np, pandas as pd\nbig = pd.DataFrame({'a': np.arange(1_000_000), 'b': 1.5})"
            )
            connection_file = Path(tmp) / "jupyter" / "jupyter-runtime" / f"kernel-{kernel_id}.json"
            zmq = connect.attach(str(connection_file), config)
            try:
                round_trips(ws, zmq)
            finally:
                ws.close()
                zmq.close()
            starts(server.url, kernel_id, connection_file, server.token)
        finally:
            server.stop()
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
