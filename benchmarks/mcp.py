"""Serving the session over MCP: what a call costs an outside agent, what serving costs the person.

1. **Overhead of a call** (budget: ≤ 2 ms over Streamable HTTP, ≤ 5 ms through ``pyaichat mcp``): the median
   of ``get_type`` of a DataFrame made in-process (``runtime.call``, what the built-in assistant pays) against
   the same call made by the official MCP Python SDK's client, in a process of its own, over Streamable HTTP
   and through the stdio bridge; the private endpoint hop alone is shown too.
2. **The REPL while 4 clients call at once** (budget: keystroke echo < 50 ms): ``pyaichat`` in a
   pseudo-terminal serving, 4 client processes (started, connected and warmed up first, so their own start-up
   is not what is measured) making 25 calls each over HTTP at the same time, while keys are typed one by one
   and the time until each is echoed is measured (each key is a character that appears nowhere else on the
   screen, so an echo cannot be mistaken for a quiet line or a redraw); the same typing with no client, for
   comparison.
3. **Memory** (budget: ≤ 30 MB added): the REPL process's resident size before ``/mcp on`` and after the 100
   calls, split into the capability layer's first load (which the built-in assistant's first look pays too),
   ``/mcp on`` itself and the calls; the HTTP face, which holds the SDK (``import mcp`` alone is ≈ 44 MB of
   its own memory), is its own process and is shown apart, resident and proportional.

    .venv/bin/python benchmarks/mcp.py [CALLS] [--only=overhead|repl] [--in-process]

``--in-process`` runs part 2 and 3 with the SDK's HTTP server on a thread of the REPL instead of a process of
its own (``inprocess.py``: the arrangement the rule in ``pyaichat.ipc`` rejects, measured for it).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This file is named like the SDK: its own folder must not shadow the ``mcp`` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
CALLS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 300
ONLY = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")), None)  # overhead | repl
IN_PROCESS = "--in-process" in sys.argv  # the REPL part with the SDK's server in the REPL's own process
SETUP = "import pandas as pd; df = pd.DataFrame({c: range(100_000) for c in 'abcde'})"


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    return (
        f"median {statistics.median(ordered):6.2f} ms  p90 {ordered[int(len(ordered) * 0.9)]:6.2f} ms  "
        f"max {ordered[-1]:6.2f} ms"
    )


# -- the floor: the SDK alone, with a tool that answers a constant ------------------------------------------
def bare_server():  # type: ignore[no-untyped-def]
    import mcp.types as types
    from mcp.server.lowlevel import Server

    answer = "df: DataFrame\nmodule: pandas"

    async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
        schema = {"type": "object", "properties": {"expr": {"type": "string"}}}
        return types.ListToolsResult(tools=[types.Tool(name="get_type", input_schema=schema)])

    async def call_tool(ctx, params):  # type: ignore[no-untyped-def]
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])

    return Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_bare(kind: str) -> None:
    """``--bare http|stdio``: the SDK's server with nothing of pyaichat behind it."""
    import anyio

    server = bare_server()
    if kind == "stdio":
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)
        return
    import socket

    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app()
    asyncio.run(uvicorn.Server(uvicorn.Config(app, log_level="warning")).serve(sockets=[sock]))


def bare_http(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """The bare SDK over Streamable HTTP in a process of its own, and its address."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--bare", "http"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    return proc, f"http://127.0.0.1:{proc.stdout.readline().strip()}/mcp"


# -- a client in a process of its own ------------------------------------------------------------------------
Server = tuple[str, str, str]  # (kind, address, token): http, stdio (pyaichat mcp), bare-stdio


def server_for(kind: str, target: str, token: str) -> object:
    import httpx2
    from mcp import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    if kind == "http":
        headers = {"Authorization": f"Bearer {token}"} if token != "-" else {}
        return streamable_http_client(target, http_client=httpx2.AsyncClient(headers=headers, timeout=120))
    args = [__file__, "--bare", "stdio"] if kind == "bare-stdio" else ["-m", "pyaichat", "mcp"]
    return StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))


async def client_loop(servers: list[Server], n: int, name: str) -> list[list[float]]:
    """``n`` calls to each server, taking turns call by call, so that each is measured under the same load of
    the (shared, busy) machine as the others."""
    import contextlib

    import mcp.types as types
    from mcp import Client

    info = types.Implementation(name=name, version="1")
    samples: list[list[float]] = [[] for _ in servers]
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for server in servers:
            client = Client(server_for(*server), client_info=info)  # type: ignore[arg-type]
            clients.append(await stack.enter_async_context(client))
        for client in clients:
            for _ in range(10):
                await client.call_tool("get_type", {"expr": "df"})
        if os.environ.get("BENCH_GO"):  # started, connected and warm: wait for the others before calling
            print("ready", flush=True)
            sys.stdin.readline()
        for _ in range(n):
            for i, client in enumerate(clients):
                started = time.perf_counter()
                result = await client.call_tool("get_type", {"expr": "df"})
                samples[i].append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result
    return samples


def client_command(servers: list[Server], n: int, name: str) -> list[str]:
    return [sys.executable, __file__, "--client", json.dumps(servers), str(n), name]


def run_client(servers: list[Server], n: int, name: str, env: dict[str, str]) -> list[list[float]]:
    proc = subprocess.run(
        client_command(servers, n, name), capture_output=True, text=True, env=env, timeout=900
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- 1. overhead ---------------------------------------------------------------------------------------------
def overhead(base: Path) -> None:
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ.pop("XDG_RUNTIME_DIR", None)
    sys.path.insert(0, str(ROOT / "tests" / "mcpserve"))
    from serve_helpers import Served, bridge_env

    from pyaichat.mcpserve.link import SessionLink

    served = Served(base / "state", SETUP)
    try:
        runtime = served.ctrl.runtime
        for _ in range(20):
            runtime.call("get_type", {"expr": "df"})
        local = []
        for _ in range(CALLS):
            started = time.perf_counter()
            runtime.call("get_type", {"expr": "df"})
            local.append((time.perf_counter() - started) * 1000)
        record = json.loads(Path(served.service.record_path or "").read_text())
        link = SessionLink.connect(record["endpoint"], record["token"], face="bench")
        hop: list[float] = []

        async def face() -> None:  # as a face calls: on its event loop
            for n in range(20 + CALLS):
                started = time.perf_counter()
                await link.acall("bench", "bench", "bench", "get_type", {"expr": "df"})
                if n >= 20:
                    hop.append((time.perf_counter() - started) * 1000)

        import anyio

        anyio.run(face)
        link.close()
        env = bridge_env(base / "state")
        bare, bare_url = bare_http(env)
        try:
            http, floor_http = run_client(
                [("http", served.url, served.token), ("http", bare_url, "-")], CALLS, "bench-http", env
            )
        finally:
            bare.kill()
            bare.wait()
        stdio, floor_stdio = run_client([("stdio", "-", "-"), ("bare-stdio", "-", "-")], CALLS, "bench", env)
    finally:
        served.stop()
    base_ms = statistics.median(local)

    def over(samples: list[float], floor: list[float] | None = None) -> str:
        added = statistics.median(samples) - (statistics.median(floor) if floor else base_ms)
        return f"+{added:.2f} ms"

    print(f"get_type(df) of a 100,000×5 DataFrame, {CALLS} calls each (the client in a process of its own)")
    print(f"  in-process runtime.call          {describe(local)}")
    print(f"  endpoint link only (this proc.)  {describe(hop)}   {over(hop)}")
    print(f"  SDK client, Streamable HTTP      {describe(http)}   {over(http)}  (budget ≤ 2 ms)")
    print(f"  SDK client, pyaichat mcp (stdio) {describe(stdio)}   {over(stdio)}  (budget ≤ 5 ms)")
    print("  the floor, call by call in turn with the line above it: the SDK's server answering a constant")
    print(f"  bare SDK, Streamable HTTP        {describe(floor_http)}")
    print(f"  bare SDK, stdio                  {describe(floor_stdio)}")
    print(
        f"  pyaichat's share over the bare SDK (the call itself included): HTTP {over(http, floor_http)}, "
        f"stdio {over(stdio, floor_stdio)}"
    )

    def ratio(samples: list[float], floor: list[float]) -> str:
        pairs = sorted(a / b for a, b in zip(samples, floor, strict=True))
        whole = statistics.median(samples) / statistics.median(floor)
        return f"{whole:.2f}× (call by call: median {statistics.median(pairs):.2f}×)"

    print(f"  against the bare SDK (budget ≤ 1.2×): HTTP {ratio(http, floor_http)},")
    print(f"                                       stdio {ratio(stdio, floor_stdio)}")


# -- 2 and 3. the REPL under 4 clients, and its memory -------------------------------------------------------
def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pss_mb(pid: int) -> float:
    """The process's proportional share: its own pages plus its share of those it shares with others."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def echo_times(child, keys: int, start: int, until=None) -> list[float]:  # type: ignore[no-untyped-def]
    """Type ``keys`` characters (each unique on the screen) and time each echo; go on while ``until()``."""
    samples = []
    i = 0
    while i < keys or (until is not None and until()):
        key = chr(0x4E00 + start + i)  # CJK ideographs: none appears in any other output
        started = time.perf_counter()
        child.send(key)
        child.expect_exact(key, timeout=30)
        samples.append((time.perf_counter() - started) * 1000)
        i += 1
        time.sleep(0.01)  # a fast typist: 100 keys a second at most
    return samples


def under_load(base: Path, **settings: str) -> None:
    import pexpect

    sys.path.insert(0, str(ROOT / "tests"))
    from pty_terminal import NEW_PY, spawn
    from pyaichat.mcpserve import discovery

    state = base / "repl"
    if (
        IN_PROCESS
    ):  # the SDK's server on a thread of the REPL (the arrangement the rule in pyaichat.ipc rejects)
        site = str(ROOT / "benchmarks" / "inprocess_site")
        path = os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH")) if p)
        settings = {**settings, "PYTHONPATH": path, "PYAICHAT_BENCH_IN_PROCESS": "serve"}
    child = spawn(state, **settings)
    child.timeout = 120
    child.delaybeforesend = None  # pexpect waits 50 ms before each send unless told not to
    try:
        child.send(SETUP + "\r")
        child.expect(NEW_PY)
        before = rss_mb(child.pid)
        child.send("/inspect df\r")  # the capability layer loads with the first look (the assistant's too)
        child.expect(NEW_PY)
        looked = rss_mb(child.pid)
        child.send("/mcp on\r")
        child.expect("Serving this session")
        child.expect(NEW_PY)
        serving = rss_mb(child.pid)
        os.environ["XDG_STATE_HOME"] = str(state / "state")
        record = next(r for r in discovery.read_records(discovery.records_dir()) if r["pid"] == child.pid)
        env = {**os.environ, "XDG_STATE_HOME": str(state / "state")}
        child.send("# ")
        idle = echo_times(child, 100, 0)
        server: list[Server] = [("http", record["url"], record["token"])]
        clients = [
            subprocess.Popen(
                client_command(server, 25, f"agent{n}"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**env, "BENCH_GO": "1"},
            )
            for n in range(4)
        ]
        for c in clients:  # each has started Python, imported the SDK, connected and warmed up
            assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
        for c in clients:  # now all four call at once
            assert c.stdin is not None
            c.stdin.write("go\n")
            c.stdin.flush()
        loaded = echo_times(child, 100, 200, until=lambda: any(c.poll() is None for c in clients))
        durations: list[float] = []
        for c in clients:
            out, err = c.communicate(timeout=600)
            if c.returncode != 0:
                raise SystemExit(err)
            durations += json.loads(out.strip().splitlines()[-1])[0]
        child.sendcontrol("c")
        child.expect(NEW_PY)
        after = rss_mb(child.pid)
        faces = [p for p in children(child.pid) if "http_main" in Path(f"/proc/{p}/cmdline").read_text()]
        face_mb = sum(rss_mb(pid) for pid in faces)
        face_pss = sum(pss_mb(pid) for pid in faces)
        child.send("/mcp off\r")
        child.expect("Stopped serving")
        child.expect(NEW_PY)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    print(f"\nThe REPL in a pty, keys typed one by one ({len(idle)} idle, {len(loaded)} under load)")
    print(f"  echo, no client                  {describe(idle)}")
    print(f"  echo, 4 clients × 25 calls       {describe(loaded)}   (budget < 50 ms)")
    slow = [ms for ms in loaded if ms >= 50]
    print(f"  keys echoed in 50 ms or more under load: {len(slow)} of {len(loaded)} {sorted(slow)}")
    print(f"  those 100 calls, as the clients saw them: {describe(durations)}")
    print("\nMemory (resident)")
    print(
        f"  REPL before /mcp on {before:6.1f} MB, after 100 calls {after:6.1f} MB: +{after - before:.1f} MB "
        "(budget ≤ 30 MB)"
    )
    print(
        f"    of which the capability layer's first load (/inspect df, as the assistant's first look) "
        f"+{looked - before:.1f} MB, /mcp on +{serving - looked:.1f} MB, "
        f"the 100 calls +{after - serving:.1f} MB"
    )
    print(
        f"  the HTTP face process (MCP SDK, uvicorn), its own process: {face_mb:.1f} MB resident, "
        f"{face_pss:.1f} MB proportional"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--bare":
        serve_bare(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        servers, n, name = sys.argv[2:5]
        print(json.dumps(asyncio.run(client_loop([tuple(x) for x in json.loads(servers)], int(n), name))))
        return
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        if ONLY in (None, "overhead"):
            overhead(Path(tmp) / "a")
        if ONLY in (None, "repl"):
            under_load(Path(tmp) / "b")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
