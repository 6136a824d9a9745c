"""MCP tools benchmarks: the first use of a server, the overhead of a call, the tokens servers add.

Run: ``.venv/bin/python benchmarks/mcp_tools.py`` (about a minute; prints figures, asserts nothing). It uses
``mcp-server-time`` and ``mcp-server-git`` (the test extra) and ``tests/mcptools/fault_server.py``.

* First use of a server: in a fresh interpreter, from "the assistant needs its tools" to the tools listed:
  importing the SDK (once per session, on the servers' own thread), then spawning the server, the handshake
  and ``tools/list`` (servers start together, so a session pays the slowest, not the sum). The same server
  started and listed with the SDK alone, for comparison.
* Per-call overhead: one ``echo`` of the fault server (a stdlib JSON-RPC loop: the server's own time is
  tiny) and one ``get_current_time`` of ``mcp-server-time``: pyaichat's path, timed where the assistant calls
  it (``TurnTools.run``: trust check, the hop to the servers' event loop thread, result conversion, masking,
  bounding; audit off) against the SDK alone — ``await client.call_tool(...)`` timed inside its own event
  loop, and the same call made from a blocking thread (the hop any synchronous caller pays); the overhead is
  pyaichat's over the latter. Medians of 200 calls each, the three taking turns (a busy machine slows them
  alike).
* Tokens a request gains: the tools of N servers x M tools, in full and by name and first line (plus
  ``describe_tool``), counted by litellm's tokenizer for gpt-4o-mini as the budget counts them, over the
  request of our own tools alone; the tools are modelled on ``mcp-server-git``'s (a description of one to
  three sentences, two to four parameters). Then the real servers' tools as they are offered.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, this folder comes first on sys.path, and its mcp.py (the serving benchmark) would stand in
# for the mcp SDK: the folder goes, the tests' helpers come.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BIN = Path(sys.executable).parent
FAULT = ROOT / "tests" / "mcptools" / "fault_server.py"
CALLS = 200


def git_repo(directory: Path) -> Path:
    repo = directory / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a"}
    env["GIT_COMMITTER_EMAIL"] = "a@b"
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "first"], cwd=repo, check=True, env=env)
    return repo


def servers(repo: Path) -> dict[str, dict[str, Any]]:
    return {
        "fault": {"command": sys.executable, "args": [str(FAULT)], "trust": "read-only"},
        "time": {"command": str(BIN / "mcp-server-time"), "trust": "read-only"},
        "git": {
            "command": str(BIN / "mcp-server-git"),
            "args": ["--repository", str(repo)],
            "trust": "read-only",
        },
    }


# -- 1. first use --------------------------------------------------------------------------------------------
FIRST_USE = """
import json, sys, time
t0 = time.perf_counter()
from pyaichat.configuration.mcp_servers import servers_from_table
from pyaichat.mcptools.manager import Manager
entries = json.loads(sys.argv[1])
m = Manager(servers_from_table(entries))
m.start(); m.wait()
total = time.perf_counter() - t0
import mcp  # already imported by the servers' thread: its import time is in "total"
print(json.dumps({"total_ms": total * 1000, "servers": {n: c.start_ms for n, c in m.servers.items()},
                  "states": {n: c.state for n, c in m.servers.items()}}))
m.close()
"""

SDK_ONLY = """
import anyio, json, sys, time
t0 = time.perf_counter()
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
imported = time.perf_counter() - t0
entry = json.loads(sys.argv[1])
async def main():
    t = time.perf_counter()
    params = StdioServerParameters(command=entry["command"], args=entry.get("args", []))
    async with Client(stdio_client(params, errlog=open("/dev/null", "w"))) as c:
        await c.list_tools()
        return time.perf_counter() - t
listed = anyio.run(main)
print(json.dumps({"import_ms": imported * 1000, "start_ms": listed * 1000}))
"""

IMPORT_ONLY = (
    "import time; t = time.perf_counter(); import mcp.client.client; print((time.perf_counter() - t) * 1000)"
)


def run_json(code: str, *args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_use(repo: Path) -> None:
    print("== First use of a server (fresh interpreter each time; medians of 3) ==")
    imports = [
        float(subprocess.run([sys.executable, "-c", IMPORT_ONLY], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    print(
        f"importing the mcp SDK: {statistics.median(imports):,.0f} ms (once per session, off the main thread)"
    )
    print(f"{'server':<8} {'pyaichat: start+list':>22} {'SDK alone: start+list':>22}")
    entries = servers(repo)
    for name, entry in entries.items():
        ours = [run_json(FIRST_USE, json.dumps({name: entry}))["servers"][name] for _ in range(3)]
        sdk = [run_json(SDK_ONLY, json.dumps(entry))["start_ms"] for _ in range(3)]
        print(f"{name:<8} {statistics.median(ours):>19,.0f} ms {statistics.median(sdk):>19,.0f} ms")
    together = [run_json(FIRST_USE, json.dumps(entries)) for _ in range(3)]
    total = statistics.median(t["total_ms"] for t in together)
    print(
        f"all three together, from the first need to every tool listed (SDK import included): {total:,.0f} ms"
    )
    print()


# -- 2. per-call overhead ------------------------------------------------------------------------------------
def per_call(repo: Path) -> None:
    import threading

    from pyaichat.configuration.config import Config
    from pyaichat.mcptools.tools import ServerTools
    from pyaichat.session import Session

    print(f"== Per-call overhead (median of {CALLS} calls each, the three taking turns call by call) ==")
    print(
        f"{'call':<24} {'SDK, in its loop':>17} {'SDK, blocking caller':>21} {'pyaichat':>9} {'overhead':>9}"
    )
    entries = servers(repo)
    cases = [("fault", "echo", {"text": "hello"}), ("time", "get_current_time", {"timezone": "Europe/Paris"})]
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    for server, tool, args in cases:
        sdk = SdkClient(entries[server], loop)
        config = Config(audit=False, mcp_servers={server: entries[server]})
        tools = ServerTools(config, session=Session())
        try:
            turn = tools.for_turn(can_approve=False)
            name = f"{server}__{tool}"
            sdk_times: list[float] = []
            hop_times: list[float] = []
            our_times: list[float] = []
            for _ in range(CALLS):  # one call of each in turn: a machine's load drifts, the three alike
                sdk_times += sdk.calls(tool, args, 1)
                hop_times += sdk.blocking_calls(tool, args, 1)
                t = time.perf_counter()
                result = turn.run(name, args, images=False, approve=None)
                our_times.append(time.perf_counter() - t)
                assert result.ok, result.error
        finally:
            tools.close()
            sdk.close()
        theirs, hop = statistics.median(sdk_times) * 1000, statistics.median(hop_times) * 1000
        ours = statistics.median(our_times) * 1000
        row = f"{server + '.' + tool:<24} {theirs:>14.2f} ms {hop:>18.2f} ms"
        print(f"{row} {ours:>6.2f} ms {ours - hop:>6.2f} ms")
    loop.call_soon_threadsafe(loop.stop)
    print()


class SdkClient:
    """The same server through the SDK alone: a ``Client`` held open on an event loop of its own; each call
    is timed inside that loop (``await client.call_tool``), so the figure is the SDK's and the server's."""

    def __init__(self, entry: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ready: asyncio.Future[Any] = concurrent_future()
        self.stop = asyncio.Event()
        self.task = asyncio.run_coroutine_threadsafe(self._hold(entry), loop)
        self.client = self.ready.result(60)

    async def _hold(self, entry: dict[str, Any]) -> None:
        from mcp.client.client import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=entry["command"], args=entry.get("args", []))
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await client.list_tools()
                self.stop = asyncio.Event()
                self.ready.set_result(client)
                await self.stop.wait()

    def calls(self, tool: str, args: dict[str, Any], n: int) -> list[float]:
        async def timed() -> list[float]:
            times = []
            for _ in range(n):
                t = time.perf_counter()
                await self.client.call_tool(tool, args)
                times.append(time.perf_counter() - t)
            return times

        return asyncio.run_coroutine_threadsafe(timed(), self.loop).result(120)

    def blocking_calls(self, tool: str, args: dict[str, Any], n: int) -> list[float]:
        """The same calls made from this (synchronous) thread, each handed to the loop and waited for: what
        any blocking caller of the SDK pays, before anything of pyaichat's."""
        times = []
        for _ in range(n):
            t = time.perf_counter()
            asyncio.run_coroutine_threadsafe(self.client.call_tool(tool, args), self.loop).result(60)
            times.append(time.perf_counter() - t)
        return times

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.task.result(30)


def concurrent_future() -> Any:
    import concurrent.futures

    return concurrent.futures.Future()


# -- 3. tokens -----------------------------------------------------------------------------------------------
DESCRIPTIONS = [
    "Shows the commit logs.",
    "Shows differences between branches or commits. Give a target to compare the working tree against.",
    "Records changes to the repository. The message should say why the change was made; the files must be "
    "staged first.",
]


def modelled_tool(server: int, number: int) -> Any:
    import mcp_types

    params = {
        "repo_path": {"type": "string", "description": "Path to the repository"},
        "target": {"type": "string", "description": "Branch, tag or commit to compare with"},
        "max_count": {"type": "integer", "default": 10, "description": "How many entries to show at most"},
        "context_lines": {"type": "integer", "default": 3},
    }
    chosen = dict(list(params.items())[: 2 + number % 3])
    return mcp_types.Tool(
        name=f"tool_{number}",
        description=DESCRIPTIONS[number % 3],
        input_schema={"type": "object", "properties": chosen, "required": ["repo_path"]},
        annotations=mcp_types.ToolAnnotations(read_only_hint=True),
    )


def tokens() -> None:
    from pyaichat.agent.llm import LiteLLMClient, load_litellm
    from pyaichat.capabilities import tool_schemas
    from pyaichat.configuration.config import Config
    from pyaichat.mcptools.naming import offered_name
    from pyaichat.mcptools.offer import OfferedTool, describe_schema

    load_litellm()
    client = LiteLLMClient(Config(model="gpt-4o-mini"))
    probe = [{"role": "user", "content": "?"}]
    own = tool_schemas()
    base = client.count_tokens(probe, own)

    def added(schemas: list[dict[str, Any]]) -> int:
        return client.count_tokens(probe, own + schemas) - base

    print(
        "== Tokens a request gains from MCP tools (gpt-4o-mini's tokenizer; our own tools alone: "
        f"{base:,} tokens) =="
    )
    print(f"{'servers x tools':<16} {'in full':>9} {'by name + first line':>22} {'per tool (brief)':>17}")
    for n, m in ((1, 10), (3, 10), (1, 50), (3, 50)):
        entries = [
            OfferedTool(offered_name(f"server{s}", f"tool_{t}"), f"server{s}", modelled_tool(s, t), True)
            for s in range(n)
            for t in range(m)
        ]
        full = added([e.full(str) for e in entries])
        brief = added([e.brief(str) for e in entries] + [describe_schema()])
        print(f"{f'{n} x {m}':<16} {full:>9,} {brief:>22,} {brief / (n * m):>17.1f}")
    print()


def real_tokens(repo: Path) -> None:
    from pyaichat.agent.llm import LiteLLMClient
    from pyaichat.capabilities import tool_schemas
    from pyaichat.configuration.config import Config
    from pyaichat.mcptools.tools import ServerTools
    from pyaichat.session import Session

    client = LiteLLMClient(Config(model="gpt-4o-mini"))
    probe = [{"role": "user", "content": "?"}]
    own = tool_schemas()
    base = client.count_tokens(probe, own)
    print("== The real servers' tools as offered (trusted read-only, a prompt that can ask) ==")
    print(f"{'server':<8} {'tools':>5} {'in full':>9} {'by name + first line':>22}")
    entries = servers(repo)
    for name in ("time", "git"):
        tools = ServerTools(Config(audit=False, mcp_servers={name: entries[name]}), session=Session())
        try:
            turn = tools.for_turn(can_approve=True)
            full, brief, describe = turn.schemas()
            f = client.count_tokens(probe, own + full) - base
            b = client.count_tokens(probe, own + brief + [describe]) - base
            print(f"{name:<8} {len(full):>5} {f:>9,} {b:>22,}")
        finally:
            tools.close()
    print("(the budget sends the full form while it adds at most mcp_tool_tokens = 1,000 tokens)")
    print()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = git_repo(Path(tmp))
        tokens()
        real_tokens(repo)
        per_call(repo)
        first_use(repo)


if __name__ == "__main__":
    main()
