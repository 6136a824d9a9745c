"""``pyaichat mcp`` as an agent starts it, through the official MCP Python SDK's stdio client: it finds the
person's session through the discovery records, says how to start one when there is none, lets the agent
list and pick among several, and follows sessions as they stop and start."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from serve_helpers import OtherSession, Served, bridge_env, stdio_client, text

from pyaichat.mcpserve.bridge import NO_SESSION

pytestmark = pytest.mark.e2e


def test_with_no_session_every_call_says_how_to_start_one(tmp_path: Path) -> None:
    async def agent() -> tuple[list[str], str, bool]:
        async with stdio_client(bridge_env(tmp_path / "state")) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("get_repr", {"expr": "df"})
            return tools, text(result), bool(result.is_error)

    tools, said, is_error = anyio.run(agent)
    assert tools[0] == "get_session_picture" and "pyaichat_sessions" in tools and "get_repr" in tools
    assert said.startswith(NO_SESSION) and is_error
    # where it looked, and why an agent's environment may differ (issue 36)
    assert f"pyaichat mcp looked in {tmp_path / 'state' / 'pyaichat' / 'mcp'}" in said
    assert "a different XDG_RUNTIME_DIR, HOME or sandbox" in said


def test_the_bridge_serves_the_running_session_and_the_person_sees_each_call(tmp_path: Path) -> None:
    served = Served(tmp_path / "state", "import pandas as pd\nsales = pd.DataFrame({'q': [1, 2, 3]})")
    try:

        async def agent() -> tuple[str, str]:
            async with stdio_client(served.env(), "claude-code") as client:
                kind = text(await client.call_tool("get_type", {"expr": "sales"}))
                total = text(await client.call_tool("eval_expr", {"expr": "sales.q.sum()"}))
                return kind, total

        kind, total = anyio.run(agent)
        assert kind.startswith("sales: DataFrame") and "6" in total
        assert [line.split(" ")[:3] for line in served.lines] == [
            ["⇄", "claude-code", "get_type(sales)"],
            ["⇄", "claude-code", "eval_expr(sales.q.sum())"],
        ]
        status = served.service.status()
        assert "claude-code (stdio)" in status and "2 calls" in status
    finally:
        served.stop()


def test_several_sessions_the_agents_directory_wins_and_it_can_list_and_pick(tmp_path: Path) -> None:
    state = tmp_path / "state"
    here, there = tmp_path / "project", tmp_path / "elsewhere"
    here.mkdir()
    there.mkdir()
    # started in this order, so the newest is the one *not* in the agent's directory
    mine = OtherSession(state, here, "who = 'project session'")
    other = OtherSession(state, there, "who = 'other session'")
    try:

        async def agent() -> tuple[str, str, str, str]:
            async with stdio_client(bridge_env(state), cwd=str(here)) as client:
                first = text(await client.call_tool("eval_expr", {"expr": "who"}))
                listing = text(await client.call_tool("pyaichat_sessions", {}))
                picked = await client.call_tool("pyaichat_sessions", {"use": other.proc.pid})
                second = text(await client.call_tool("eval_expr", {"expr": "who"}))
                return first, listing, text(picked), second

        first, listing, picked, second = anyio.run(agent)
        assert "project session" in first
        assert listing.startswith("2 sessions are serving agents:\n")
        assert f"→ pid {mine.proc.pid}" in listing and f"  pid {other.proc.pid}" in listing
        assert str(here) in listing and str(there) in listing
        assert f"Using pid {other.proc.pid}" in picked
        assert "other session" in second
    finally:
        mine.close()
        other.close()


def test_the_bridge_follows_a_session_that_stops_and_one_that_starts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = OtherSession(state, tmp_path, "n = 1")

    async def agent() -> list[str]:
        seen = []
        async with stdio_client(bridge_env(state)) as client:
            seen.append(text(await client.call_tool("eval_expr", {"expr": "n"})))
            first.close()  # the session ends: its record and endpoint go with it
            seen.append(text(await client.call_tool("eval_expr", {"expr": "n"})))
            second = OtherSession(state, tmp_path, "n = 2")
            try:
                seen.append(text(await client.call_tool("eval_expr", {"expr": "n"})))
            finally:
                second.close()
        return seen

    seen = anyio.run(agent)
    assert "1" in seen[0] and seen[1].startswith(NO_SESSION) and "2" in seen[2]


def test_a_session_ended_without_cleaning_up_is_stale_and_skipped(tmp_path: Path) -> None:
    state = tmp_path / "state"
    gone = OtherSession(state, tmp_path, "n = 1")
    gone.proc.kill()  # no atexit, no /mcp off: the record stays behind
    gone.proc.wait(10)
    assert Path(gone.record["path"]).exists()

    async def agent() -> str:
        async with stdio_client(bridge_env(state)) as client:
            return text(await client.call_tool("eval_expr", {"expr": "n"}))

    assert anyio.run(agent).startswith(NO_SESSION)
    assert not Path(gone.record["path"]).exists()
    assert os.path.exists(state)


HIDE_SDK = "import sys; sys.modules['mcp'] = None\nfrom pyaichat.cli import main\nsys.exit(main({argv!r}))\n"


def test_without_the_sdk_both_ways_in_say_how_to_install_it_in_one_sentence(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = bridge_env(tmp_path / "state")
    bridge = subprocess.run(
        [sys.executable, "-c", HIDE_SDK.format(argv=["mcp"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bridge.returncode == 2 and "Traceback" not in bridge.stderr
    assert bridge.stderr.startswith("pyaichat mcp needs the MCP SDK: ") and "[mcp]'" in bridge.stderr
    repl = subprocess.run(
        [sys.executable, "-c", HIDE_SDK.format(argv=[])],
        input="/mcp on\nprint('still here')\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert repl.returncode == 0 and "Traceback" not in repl.stdout + repl.stderr
    assert "Serving over MCP needs the MCP SDK: " in repl.stdout and "still here" in repl.stdout
