"""The person's side, end to end: ``pyaichat --mcp`` in a real pseudo-terminal while an agent works through
``pyaichat mcp`` with the official SDK client. Each call shows as one quiet line above the prompt, a line the
person is typing survives it, and ``/mcp off`` ends it. The toolbar says the session is served (checked on
its fragments: a terminal that never answers cursor-position requests, like pexpect, gets no toolbar)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import anyio
import pytest

pexpect = pytest.importorskip("pexpect")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from serve_helpers import bridge_env, stdio_client, text  # noqa: E402

from pty_terminal import NEW_PY, leave, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def agent_calls(state: Path, calls: list[tuple[str, dict]]) -> list[str]:
    async def agent() -> list[str]:
        async with stdio_client(bridge_env(state), "claude-code") as client:
            return [text(await client.call_tool(name, args)) for name, args in calls]

    return anyio.run(agent)


def test_the_person_sees_each_call_keeps_typing_and_turns_it_off(tmp_path: Path) -> None:
    state = tmp_path / "state"
    child = spawn(tmp_path, "--mcp", wait=False)
    child.timeout = 60
    try:
        child.expect(r"Serving this session over MCP at http://127\.0\.0\.1:\d+/mcp")
        child.expect(NEW_PY)
        child.send("import pandas as pd; df = pd.DataFrame({'a': [1, 2, 3]})\r")
        child.expect(NEW_PY)

        child.send("half = 'typed but not run'")  # the person is mid-line when the agent calls
        child.expect("not run'")
        answers: list[list[str]] = []
        worker = threading.Thread(
            target=lambda: answers.append(agent_calls(state, [("get_type", {"expr": "df"})]))
        )
        worker.start()
        child.expect(r"⇄ claude-code get_type\(df\) [\d.]+ ms")
        worker.join(120)
        assert answers and answers[0][0].startswith("df: DataFrame")
        child.send("\r")  # the line typed before the call is still there, whole, and runs
        child.expect(NEW_PY)
        seen = agent_calls(state, [("eval_expr", {"expr": "half"})])
        assert "typed but not run" in seen[0]
        child.expect(r"⇄ claude-code eval_expr\(half\)")

        child.send("/mcp status\r")
        child.expect(r"claude-code \(stdio\): (connected|gone), \d+ calls?, last ")
        child.expect(NEW_PY)
        child.send("/mcp off\r")
        child.expect("Stopped serving")
        child.expect(NEW_PY)
        said = agent_calls(state, [("eval_expr", {"expr": "half"})])
        assert "No pyaichat session is serving" in said[0]
        leave(child)
    finally:
        child.close(force=True)


def test_the_toolbar_says_the_session_is_served() -> None:
    from serve_helpers import RecordingFrontEnd, controller_over

    from pyaichat.repl.prompt_session import toolbar
    from pyaichat.runtime import LocalRuntime
    from pyaichat.session import Session

    ctrl = controller_over(LocalRuntime(Session()), RecordingFrontEnd())
    assert "⇄" not in "".join(text for _, text in toolbar(ctrl))
    ctrl.gate.serving = "⇄ MCP"
    assert "│ ⇄ MCP │" in "".join(text for _, text in toolbar(ctrl))


def test_an_agents_proposal_waits_for_an_empty_line_and_runs_only_when_the_person_says_so(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    child = spawn(tmp_path, "--mcp", wait=False)
    child.timeout = 60
    heard = threading.Event()  # the agent was told its call waits: the proposal has been queued a while
    answers: list[str] = []

    async def agent() -> None:
        async with stdio_client(bridge_env(state), "claude-code") as client:

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                heard.set()

            result = await client.call_tool(
                "propose_code",
                {
                    "code": "df2 = df.sort_values('a')\nprint('sorted', list(df2.a))",
                    "explanation": "Sort df.",
                },
                progress_callback=on_progress,
            )
            answers.append(text(result))
            answers.append(text(await client.call_tool("list_globals", {})))

    try:
        child.expect(NEW_PY)
        child.send("import pandas as pd; df = pd.DataFrame({'a': [3, 1, 2]})\r")
        child.expect(NEW_PY)
        child.send("draft = 'mine'")  # the person is typing when the proposal arrives
        child.expect("'mine'")
        worker = threading.Thread(target=lambda: anyio.run(agent))
        worker.start()
        assert heard.wait(120)
        # a line being typed is never interrupted: no panel while it has text
        assert child.expect([r"Proposed code by claude-code", pexpect.TIMEOUT], timeout=1) == 1
        child.sendcontrol("u")  # the person clears the line: the waiting proposal shows
        child.expect(r"Proposed code by claude-code \(not run yet\)")
        child.expect("Sort df.")
        child.expect(r"Run it\?")
        assert "df2" in child.before  # the preview said what it would create
        child.send("r")
        child.expect(r"sorted \[1, 2, 3\]")
        child.expect(NEW_PY)
        worker.join(120)
        assert answers and "ran the proposed code" in answers[0] and "sorted [1, 2, 3]" in answers[0]
        assert "df2" in answers[1]

        child.send("/undo\r")
        child.expect(NEW_PY)
        gone = agent_calls(state, [("get_type", {"expr": "df2"})])  # /undo took it back
        assert gone == ["There is no variable named 'df2' in the session."]
        leave(child)
    finally:
        child.close(force=True)


def test_a_proposal_its_agent_cancels_leaves_the_panel_with_one_line_and_r_runs_nothing(
    tmp_path: Path,
) -> None:
    """Issue 50: the agent cancelled its propose_code; the panel stayed and ``r`` ran the code. Now the
    question closes, one line says why, and the ``r`` typed next is only a letter at the prompt."""
    state = tmp_path / "state"
    child = spawn(tmp_path, "--mcp", wait=False)
    child.timeout = 60
    asked = threading.Event()
    cancel = threading.Event()

    async def agent() -> None:
        async with stdio_client(bridge_env(state), "claude-code") as client:
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool("propose_code", {"code": "cancelled_ran = True"})

                group.start_soon(call)
                await anyio.to_thread.run_sync(lambda: cancel.wait(120))
                group.cancel_scope.cancel()
            await anyio.sleep(1)

    worker = threading.Thread(target=lambda: anyio.run(agent))
    try:
        child.expect(NEW_PY)
        worker.start()
        child.expect(r"Proposed code by claude-code \(not run yet\)")
        child.expect(r"Run it\?")
        asked.set()
        cancel.set()
        child.expect_exact("claude-code cancelled its proposal, so it was withdrawn; nothing of it ran.")
        child.expect(NEW_PY)
        child.send("r")  # what the person would have pressed: a letter at the prompt now
        child.expect("r")
        child.sendcontrol("u")
        child.send("'cancelled_ran' in dir()\r")
        child.expect(r"False\r\n")
        child.expect(NEW_PY)
        worker.join(120)
        leave(child)
    finally:
        cancel.set()
        child.close(force=True)
