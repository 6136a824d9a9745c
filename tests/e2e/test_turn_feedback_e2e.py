"""What the user sees of a turn that goes badly: a model repeating a failing call, a long wait, a retried
request, a turn cut short — through ``python -m pyaichat`` (piped, and in a real terminal) against the
scripted OpenAI-compatible server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pty_terminal import AI_PROMPT, NEW_AI, leave, spawn_scripted

pytestmark = pytest.mark.e2e


def run_piped(stdin: str, srv, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(PYAICHAT_MODEL="openai/test", PYAICHAT_API_BASE=srv.base_url, OPENAI_API_KEY="sk-test")
    env.update(settings)
    return subprocess.run(
        [sys.executable, "-m", "pyaichat"], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


# -- the very same failing call, asked again and again -------------------------------------------------------
def test_a_repeated_failing_call_runs_once_and_its_error_is_listed_once(srv):
    for _ in range(8):
        srv.tool("eval_expr", {"expr": "x + 1"})  # there is no x
    out = run_piped("/ask what is x + 1?\n/trace\n", srv)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    found = [line for line in text.splitlines() if line.startswith("- eval_expr(x + 1) →")]
    assert len(found) == 1 and "there is no variable named 'x'" in found[0]
    assert "Stopped: the model kept asking for a call that had already failed." in text
    # /trace: the capability ran once; the repeats were answered without running it
    runs = [line for line in text.splitlines() if "→ eval_expr(x + 1" in line]
    assert len(runs) == 3 and sum(line.endswith("✗ (not run again: it had failed)") for line in runs) == 2
    # the model was told, with the reason, the first time it asked again; it was not asked eight times
    assert len(srv.bodies) == 3
    told = srv.bodies[2]["messages"][-1]["content"]
    assert "already failed" in told and "there is no variable named 'x'" in told


# -- retries and long waits ----------------------------------------------------------------------------------
@pytest.mark.parametrize("status", ["500", "503"])  # 503: a llama.cpp server still loading its model
def test_an_automatic_retry_is_announced_in_piped_output(srv, status):
    srv.fault(status)
    srv.text("Here after one retry.")
    out = run_piped("/ask hello?\n", srv)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"The model request failed (HTTP {status}); trying again in 1 s (attempt 2 of 3)."
    assert lines[1] == "Here after one retry."
    assert len(srv.bodies) == 2


def test_a_turn_cut_at_its_deadline_still_counts_what_was_sent(srv):
    """The reply started, then stalled past the turn's deadline: its prompt and the text that came are
    counted, and /cost says that part was counted by pyaichat."""
    srv.fault("hang", text="The answer would have been long")
    try:
        out = run_piped("/ask hello?\n/cost\n", srv, PYAICHAT_TURN_TIMEOUT="2")
    finally:
        srv.release()
    assert out.returncode == 0, out.stderr
    assert "Stopped after 2 s (the turn_timeout bound)." in out.stdout
    cost = re.search(
        r"1 question\(s\): ([\d,]+) prompt \+ ([\d,]+) completion tokens \(some counted", out.stdout
    )
    assert cost, out.stdout
    prompt, completion = (int(n.replace(",", "")) for n in cost.groups())
    assert prompt > 500 and completion > 0  # the system prompt and tools alone are hundreds of tokens


# -- in a real terminal --------------------------------------------------------------------------------------
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_long_wait_shows_what_it_waits_for_and_for_how_long_and_ctrl_c_counts_what_was_sent(tmp_path, srv):
    pytest.importorskip("pexpect")
    srv.fault("503")  # a server still loading its model, then slow to its first token
    srv.fault("held", text="Finally, an answer.")
    child = spawn_scripted(tmp_path, srv.base_url)
    try:
        child.send("\t")
        child.expect_exact(AI_PROMPT)
        child.send("hello?\r")
        # the retry is said in a line of its own
        child.expect_exact("The model request failed (HTTP 503); trying again in 1 s (attempt 2 of 3).")
        assert srv.holding.wait(60)
        # the server holds its answer: after a few seconds the status says what it waits for, and how long
        child.expect(
            r"thinking · step 1/\d+ · waiting for the first token, attempt 2 of 3 \(after HTTP 503\) · \d+ s"
        )
        srv.release()
        child.expect_exact("Finally, an answer.")
        child.expect(NEW_AI)
        srv.reset()
        slow = "The frame has 3 rows and the column you asked about is empty"
        srv.fault("hang", text=slow)  # streams its first third, then stalls
        child.send("and now?\r")
        assert srv.hanging.wait(60)
        child.expect_exact(slow[: len(slow) // 3])
        child.sendcontrol("c")
        # stopped by Ctrl-C: the prompt that was sent and the text that came are counted, marked as counted
        child.expect(r"tokens: ≈[1-9][\d,]* in · ≈[1-9][\d,]* out")
        child.expect(NEW_AI)
        srv.release()
        leave(child, from_assistant=True)
    finally:
        srv.release()
        child.close()
