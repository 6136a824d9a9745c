"""What a newcomer reads on a real terminal (``python -m pyaichat`` under pexpect): long lines of ``/help``,
``/tools`` and the preview go on under their own indent, ``/history`` marks approved and undone proposals,
``--resume`` says when no variables came back, ``/sent`` shows each part once (a pager only on /more), and a
question typed at ``>>>`` gets one hint."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import AI_PROMPT, NEW_AI, NEW_PY, leave, output, spawn, spawn_scripted, type_line  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

PAGER_HINT = re.compile(r"\(\d+ lines: /more shows them in a pager")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")


def screen_lines(text: str) -> list[str]:
    """The lines the program printed, without colour codes or carriage returns."""
    return ANSI.sub("", text).split("\n")


def shown_after(child, command: str, first: str) -> list[str]:
    """Type ``command`` and return the lines it printed from the one starting with ``first`` to the next
    prompt."""
    type_line(child, command)
    child.expect_exact(first)
    child.expect(NEW_PY)
    lines = screen_lines(first + child.before)
    while lines and not lines[-1].strip():
        lines.pop()
    hint = [n for n, line in enumerate(lines) if PAGER_HINT.match(line)]
    return lines[: hint[-1]] if hint else lines  # output taller than the screen ends saying how to page it


def spawn_asking(tmp_path, server, *args: str, **env: str):
    return spawn_scripted(tmp_path, server.base_url, *args, **env)


def test_help_keeps_each_usage_apart_from_its_description_at_any_width(tmp_path):
    child = spawn(tmp_path)
    try:
        lines = shown_after(child, "/help all", "Commands:")
        at = lines.index("  /snapshot [--include-secrets] [file]")  # too wide for the column: alone
        description = lines[at + 1]
        assert description.startswith(" " * 30 + "Save the session's variables"), lines[at : at + 3]
        assert all(len(line) <= 100 for line in lines)
        # a narrow pane: every description goes under its term, never back to column 0
        child.setwinsize(30, 44)
        lines = shown_after(child, "/help all", "Commands:")
        assert all(len(line) <= 44 for line in lines), [line for line in lines if len(line) > 44]
        body = [line for line in lines if line not in ("Commands:", "Keys:")]
        assert body and all(line.startswith("  ") for line in body), [x for x in body if x[:1] != " "]
        at = lines.index("  /snapshot [--include-secrets] [file]")
        assert lines[at + 1] == "      Save the session's variables"
        leave(child)
    finally:
        child.close()


def test_tools_rows_and_walls_go_on_under_their_indent(tmp_path):
    child = spawn(tmp_path)
    try:
        lines = shown_after(child, "/tools", "capabilities (read-only")
        leave(child)
    finally:
        child.close()
    titles = [line for line in lines if not line.startswith(" ")]
    assert (
        titles[0].endswith("capabilities (read-only; privacy level: sample):") and "Sandbox walls:" in titles
    )
    assert all(t.endswith(":") for t in titles), titles  # nothing else reaches column 0
    assert all(len(line) <= 100 for line in lines)
    row = next(n for n, line in enumerate(lines) if line.startswith("  run_python          (code) Run"))
    column = lines[row].index("(code)")
    assert (
        lines[row + 1].startswith(" " * column) and lines[row + 1][column] != " "
    )  # its description goes on
    walls = lines[lines.index("Sandbox walls:") + 1 :]
    assert walls[0].startswith("  run_python: ") and all(line.startswith("  ") for line in walls)


def test_the_preview_wraps_under_its_indent_and_history_marks_the_undone_proposal(tmp_path):
    from pyaichat.capabilities.sandbox.confine import probe

    long_line = "the first total is now zero, and this printed line is long enough to wrap in any terminal"
    code = f"totals = [0.0, 20.0]\nprint({long_line!r}, {long_line!r})"
    with ScriptedServer() as server:
        server.tool("propose_code", {"code": code, "explanation": "Zero the first total."})
        server.text("Zeroed.")
        child = spawn_asking(tmp_path, server)
        try:
            type_line(child, "x = 1")
            child.expect(NEW_PY)
            child.send("\t")
            child.expect_exact(AI_PROMPT)
            type_line(child, "zero the first")
            child.expect_exact("Zero the first total.")
            child.expect(r"Run it\?.*\[r\]un / \[e\]dit / \[n\]o")
            screen = screen_lines(child.before)
            child.send("r")
            child.expect_exact("Zeroed.")
            child.expect(NEW_AI)
            type_line(child, "/undo")  # the checkpoint before the approved proposal's input
            child.expect_exact("Back to before input 2 (`totals = [0.0, 20.0]")
            child.expect(NEW_AI)
            type_line(child, "/history")
            child.expect_exact("[1] x = 1")
            child.expect(NEW_AI)
            history = screen_lines(child.before)
            leave(child)
        finally:
            child.close()
    marked = [line for line in history if line.startswith("[2] ")]
    assert marked == ["[2] totals = [0.0, 20.0]  (+1 lines)  [proposed by the assistant; undone with /undo]"]
    summary = next(n for n, line in enumerate(history) if line.startswith("      → the first total"))
    assert history[summary + 1].startswith(" " * 8) and history[summary + 1][8] != " "  # under its indent
    if not probe().complete:
        return  # no preview here (the panel says why)
    start = next(n for n, line in enumerate(screen) if line == "  output:")
    first, second = screen[start + 1 : start + 3]
    assert first.startswith("    the first total is now zero") and len(first) <= 98, screen
    assert second.startswith("      ") and second[6] != " ", screen  # under its indent, not at column 0
    assert " ".join((first + second).split()) == " ".join([long_line] * 2)


NO_VARIABLES = (
    "No variables came back: the last session took no /snapshot (run /snapshot to keep them next time)."
)


def test_resume_without_a_snapshot_says_no_variables_came_back(tmp_path):
    first = spawn(tmp_path)
    try:
        type_line(first, "total = 40 + 2")
        first.expect(NEW_PY)
        first.sendcontrol("d")
        first.expect(pexpect.EOF)
    finally:
        first.close()
    second = spawn(tmp_path, "--resume", wait=False)
    try:
        second.expect_exact("Resumed the session saved")
        second.expect_exact(": 0 questions and 1 input.")
        second.expect(re.escape(NO_VARIABLES) + r"(\x1b\[[0-9;]*m)*\r\n")  # one line, 100 columns wide
        second.expect(NEW_PY)
        type_line(second, "'total' in globals()")
        second.expect(output("False"))
        second.expect(NEW_PY)
        second.sendcontrol("d")
        second.expect(pexpect.EOF)
    finally:
        second.close()


HINT = "Asking the assistant? TAB on an empty line switches to it; ↑ then Shift-TAB takes this line along."


def test_a_question_typed_at_the_python_prompt_gets_one_hint_and_a_typo_none(tmp_path):
    child = spawn(tmp_path)
    try:
        type_line(child, "x = = 2")
        child.expect_exact("SyntaxError: invalid syntax")
        child.expect(NEW_PY)
        assert HINT not in child.before  # a typo in code is not a question
        type_line(child, "why did that fail?")
        child.expect_exact("SyntaxError: invalid syntax")
        child.expect(output(HINT))
        child.expect(NEW_PY)
        type_line(child, "what is in df")
        child.expect_exact("SyntaxError: invalid syntax")
        child.expect(NEW_PY)
        assert HINT not in child.before  # once a session
        # what the hint says works: ↑ brings the line back, Shift-TAB takes it to the assistant
        child.send("\x1b[A")
        child.expect(r"what.*is.*in.*df")  # highlighted as Python
        child.send("\x1b[Z")
        child.expect_exact(AI_PROMPT)
        type_line(child, "")
        child.expect(r"(?i)no model[^\r\n]*")
        child.expect(NEW_AI)
        leave(child, from_assistant=True)
    finally:
        child.close()


@pytest.mark.skipif(not __import__("shutil").which("less"), reason="no less on this machine")
def test_sent_shows_each_tool_list_once_and_pages_only_when_asked(tmp_path):
    with ScriptedServer() as server:
        server.tool("get_repr", {"expr": "x"})
        server.text("x is 41.")
        child = spawn_asking(tmp_path, server, PAGER="less")
        try:
            type_line(child, "x = 41")
            child.expect(NEW_PY)
            type_line(child, "/ask what is x?")
            child.expect_exact("x is 41.")
            child.expect(NEW_PY)
            type_line(child, "/sent")
            child.expect_exact("Request 1 of 2")
            child.expect(r"\(the same \d+ tools as request 1\)")  # printed: no pager took the screen
            child.expect(r"lines: /more shows them in a pager")
            child.expect(NEW_PY)
            type_line(child, "/more")
            child.expect_exact("q comes back to the prompt")  # less's prompt: the way back, on screen
            child.send("q")
            child.expect(NEW_PY)
            type_line(child, "6 * 7")
            child.expect(output("42"))
            child.expect(NEW_PY)
            leave(child)
        finally:
            child.close(force=True)
    tools = [body["tools"] for body in server.bodies]
    assert len(tools) == 2 and tools[0] == tools[1]  # the provider got the list twice; /sent showed it once
