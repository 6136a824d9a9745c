"""A flood of outside agents: every call is answered or rate-limited, none falsely refused.

A session serves over MCP (``/mcp on``, as ``tests/mcpserve`` starts one: a controller in this process, its
HTTP face a process of its own); ``CLIENTS`` official SDK clients (default 40), each in its own task on one
event loop of a client process, connect and warm up, then all make ``CALLS`` ``get_type`` calls (default 25)
at the same time. Every result is sorted by what it says: answered, rate-limited ("Too many calls", the
session's own bound: 200 at once, then 100 a second), or anything else — which is a fault (issue 50: "The
session stopped serving: the process listening on its socket belongs to another user", 4–10 of 1,000).

    .venv/bin/python benchmarks/mcp_flood.py [--clients N] [--calls N] [--rounds N]

Prints one line per round and the totals; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This folder holds mcp.py: it must not shadow the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT / "tests" / "mcpserve"))
sys.path.insert(0, str(ROOT / "tests"))


def kind(result: object) -> str:
    import mcp.types as types

    text = " ".join(c.text for c in getattr(result, "content", []) if isinstance(c, types.TextContent))
    if not getattr(result, "is_error", False):
        return "answered"
    if "Too many calls" in text:
        return "rate-limited"
    return "FAILED: " + " ".join(text.split())[:160]


async def flood(url: str, token: str, clients: int, calls: int) -> tuple[collections.Counter[str], float]:
    import httpx2
    import mcp.types as types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    counts: collections.Counter[str] = collections.Counter()
    ready = asyncio.Event()
    arrived = 0

    async def agent(n: int) -> None:
        nonlocal arrived
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            info = types.Implementation(name=f"agent{n}", version="1")
            async with Client(streamable_http_client(url, http_client=http), client_info=info) as client:
                await client.call_tool("get_type", {"expr": "df"})  # connected and warm
                arrived += 1
                if arrived == clients:
                    ready.set()
                await ready.wait()
                for _ in range(calls):
                    try:
                        counts[kind(await client.call_tool("get_type", {"expr": "df"}))] += 1
                    except Exception as exc:  # a protocol error is a failure too
                        counts[f"FAILED: {type(exc).__name__}: {exc}"[:160]] += 1

    started = time.perf_counter()
    await asyncio.gather(*(agent(n) for n in range(clients)))
    return counts, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--calls", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from serve_helpers import Served

    with tempfile.TemporaryDirectory(prefix="pyaichat-flood-") as base:
        served = Served(Path(base) / "state", "import pandas as pd; df = pd.DataFrame({'a': range(10)})")
        total: collections.Counter[str] = collections.Counter()
        try:
            for n in range(1, args.rounds + 1):
                counts, seconds = asyncio.run(flood(served.url, served.token, args.clients, args.calls))
                total.update(counts)
                shown = ", ".join(f"{count} {what}" for what, count in sorted(counts.items()))
                print(f"round {n}: {args.clients} clients × {args.calls} calls in {seconds:.1f} s: {shown}")
        finally:
            served.stop()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    failed = sum(count for what, count in total.items() if what.startswith("FAILED"))
    print(f"total: {sum(total.values())} calls, {total['answered']} answered,")
    print(f"       {total['rate-limited']} rate-limited, {failed} failed (load average {load:.1f})")
    for what, count in total.items():
        if what.startswith("FAILED"):
            print(f"  {count} × {what}")


if __name__ == "__main__":
    main()
