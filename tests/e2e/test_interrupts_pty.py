"""Ctrl-C in a real terminal, read off the screen (pyte emulating the pty's 100x30 xterm): during a streamed
answer it keeps the partial answer once and the keys typed meanwhile; at "Run it?" it declines and ends the
turn without asking the model again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pty_terminal import Screen, spawn_scripted  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def asking(tmp_path, srv) -> Screen:
    child = spawn_scripted(tmp_path, srv.base_url, wait=False)
    screen = Screen(child)
    screen.wait_for(r"^>>>$")
    child.send("\t")
    screen.wait_for(r"^ai>$")
    return screen


def test_ctrl_c_during_a_streamed_answer_keeps_it_once_and_the_keys_typed_meanwhile(tmp_path, srv):
    answer = "The frame has three rows and the column you asked about is empty"
    srv.fault("hang", text=answer)  # streams its first third, then waits
    screen = asking(tmp_path, srv)
    child = screen.child
    try:
        child.send("why is it empty?\r")
        assert srv.hanging.wait(60)
        screen.wait_for(r"^The frame has three r")
        child.send("typed ahead")
        screen.pump(0.5)  # the live answer redraws meanwhile
        child.sendcontrol("c")
        screen.wait_for(r"^Stopped by Ctrl-C; the partial answer is kept\.$")
        screen.wait_for(r"^ai> typed ahead$")  # the keys typed meanwhile, in the next prompt's line
        lines = screen.lines
        assert sum(line.startswith("The frame has") for line in lines) == 1, screen.text()
        assert not any("typed" in line for line in lines if not line.startswith("ai> ")), screen.text()
        srv.release()
        srv.text("Because no row matched.")
        child.send("\r")  # the typed-ahead line is a question like any other
        screen.wait_for(r"^Because no row matched\.$")
        assert srv.bodies[-1]["messages"][-1]["content"].endswith("typed ahead")
    finally:
        srv.release()
        child.close()


def test_ctrl_c_at_run_it_declines_and_ends_the_turn(tmp_path, srv):
    srv.tool("propose_code", {"code": "x = 2", "explanation": "Set x to 2."})
    srv.text("The model was asked again.")
    screen = asking(tmp_path, srv)
    child = screen.child
    try:
        child.send("set x to 2\r")
        screen.wait_for(r"^Run it\? \[r\]un / \[e\]dit / \[n\]o:$")
        child.sendcontrol("c")
        screen.wait_for(r"^Declined with Ctrl-C; the model was not asked again\.$")
        screen.wait_for(r"^ai>$")
        screen.pump(1.0)
        text = screen.text()
        assert "Run it? [r]un / [e]dit / [n]o: no" in text
        assert "The model was asked again." not in text and len(srv.bodies) == 1
        assert "Interrupted." not in text
        # nothing ran: x is still unset
        child.send("\t")
        screen.wait_for(r"^>>>$")
        child.send("'x' in dir()\r")
        screen.wait_for(r"^False$")
    finally:
        child.close()


def test_ctrl_c_in_running_code_puts_keyboardinterrupt_on_its_own_line(tmp_path):
    """The terminal echoes Ctrl-C as ``^C`` and leaves the cursor after it: the sentence went on the same
    line, ``^CKeyboardInterrupt``."""
    from pty_terminal import spawn

    child = spawn(tmp_path, wait=False)
    screen = Screen(child)
    try:
        screen.wait_for(r"^>>>$")
        child.send("print('sleeping'); import time; time.sleep(60)\r")
        screen.wait_for(r"^sleeping$")  # the code runs: the terminal is the code's (cooked, echoing)
        child.sendcontrol("c")
        screen.wait_for(r"^KeyboardInterrupt$")
        screen.wait_for(r"^>>>$")
        assert "^CKeyboardInterrupt" not in screen.text()
    finally:
        child.close(force=True)
