"""Quiet ``⇄`` lines that arrive together, read off the screen (pyte emulating the pty, answering the
prompt's cursor-position requests late, as a loaded machine or a remote terminal does): ``pyaichat --mcp``
in a real pseudo-terminal, an agent making two calls at once through ``pyaichat mcp``, again and again.
Each pair lands above the prompt as two lines, with no stray ``>>>`` drawn between them (issue 34, point
11: seen in 2 of 11 tries by its reporter; not reproduced here, so this guards the screen rather than
proving a fix)."""

from __future__ import annotations

import queue
import sys
import threading
from pathlib import Path

import anyio
import pytest

pexpect = pytest.importorskip("pexpect")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from serve_helpers import bridge_env, stdio_client  # noqa: E402

from pty_terminal import Screen, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

TRIES = 11  # as in the report (a stray prompt in 2 of 11)


def agent(state: Path, go: queue.Queue[bool], done: queue.Queue[object]) -> None:
    """One agent session: at each ``go``, two calls at once; ``done`` gets None after each pair (or the
    error that ended it)."""

    async def run() -> None:
        async with stdio_client(bridge_env(state), "claude-code") as client:
            while go.get():
                async with anyio.create_task_group() as group:  # two tools: no burst to sum up later
                    group.start_soon(client.call_tool, "get_type", {"expr": "a"})
                    group.start_soon(client.call_tool, "get_repr", {"expr": "b"})
                done.put(None)

    try:
        anyio.run(run)
    except BaseException as exc:  # the test says what ended the agent
        done.put(exc)


def test_two_quiet_lines_that_arrive_together_have_no_prompt_between_them(tmp_path: Path) -> None:
    import random

    state = tmp_path / "state"
    child = spawn(tmp_path, "--mcp", wait=False, PROMPT_TOOLKIT_NO_CPR="0")
    child.timeout = 60
    screen = Screen(child, answers=lambda: random.uniform(0.0, 0.3))
    go: queue.Queue[bool] = queue.Queue()
    done: queue.Queue[object] = queue.Queue()
    worker = threading.Thread(target=agent, args=(state, go, done), daemon=True)
    try:
        screen.wait_for(r"Serving this session over MCP at http://127\.0\.0\.1:\d+/mcp")
        child.send("a = 1; b = 'x'\r")
        screen.wait_for(r"^>>>$")
        worker.start()
        strays = []
        for attempt in range(TRIES):
            child.sendcontrol("l")  # a clean screen for each pair
            screen.wait_for(r"\A>>>$")
            go.put(True)
            result = done.get(timeout=120)
            assert result is None, result
            screen.wait_for(r"^⇄ claude-code get_(type|repr).*\n(.*\n)*⇄ claude-code get_(type|repr)")
            screen.pump(0.5)
            lines = [line for line in screen.lines if line]
            calls = [i for i, line in enumerate(lines) if line.startswith("⇄")]
            if len(calls) != 2 or calls[1] != calls[0] + 1 or lines.count(">>>") != 1:
                strays.append((attempt, lines))
        assert strays == [], f"{len(strays)} of {TRIES} pairs drew a stray prompt: {strays[0]}"
    finally:
        go.put(False)
        child.close(force=True)
