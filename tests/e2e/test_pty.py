"""End to end in a real pseudo-terminal: ``python -m pyaichat`` under pexpect, keys typed, screen read."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from pty_terminal import AI_PROMPT, NEW_AI, NEW_PY, PY_PROMPT, leave, output, spawn, spawn_scripted, type_line  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def spawn_asking(tmp_path, server):
    return spawn_scripted(tmp_path, server.base_url)


def to_assistant_mode(child) -> None:
    """After a Python input: wait for the next prompt, then TAB into Assistant mode."""
    child.expect(NEW_PY)
    child.send("\t")
    child.expect_exact(AI_PROMPT)


def test_python_mode_toggle_question_block_ctrl_c_and_ctrl_d(tmp_path):
    child = spawn(tmp_path)
    try:
        type_line(child, "x = 41")
        child.expect(NEW_PY)
        type_line(child, "x + 1")
        child.expect(output("42"))
        child.expect(NEW_PY)

        # TAB on an empty line switches to Assistant mode; without a model a question gets one sentence.
        child.send("\t")
        child.expect_exact(AI_PROMPT)
        type_line(child, "why is x 41?")
        child.expect(r"(?i)(no model|not available)[^\r\n]*")
        child.expect(NEW_AI)
        assert "Traceback" not in child.before

        # TAB again goes back; a multi-line for block runs once the blank line ends it.
        child.send("\t")
        child.expect_exact(PY_PROMPT)
        type_line(child, "for i in range(3):")
        child.expect_exact("... ")
        type_line(child, "print(i * 10)")
        type_line(child, "")
        child.expect(output("0", "10", "20"))
        child.expect(NEW_PY)

        # Ctrl-C drops the typed text; the namespace is intact.
        child.send("undefined_name_zz")
        child.sendcontrol("c")
        child.expect(NEW_PY)
        type_line(child, "x * 2")
        child.expect(output("82"))
        assert "NameError" not in child.before
        child.expect(NEW_PY)

        # Ctrl-D on an empty line exits with status 0.
        leave(child)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_tab_completes_from_the_live_namespace_and_history_is_saved(tmp_path):
    child = spawn(tmp_path)
    try:
        type_line(child, "inventory = {'apples': 3}")
        child.expect(NEW_PY)
        child.send("inven\t['ap\t")
        type_line(child, "")
        child.expect(output("3"))
        child.expect(NEW_PY)
        # Start-up stays light: nothing has imported litellm (only entering Assistant mode warms it up).
        type_line(child, "import sys; [m for m in ('litellm', 'rich') if m in sys.modules]")
        child.expect(output("[]"))
        child.expect(NEW_PY)
        type_line(child, "raise SystemExit(4)")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 4
    history = (tmp_path / "state" / "pyaichat" / "history").read_text()
    assert "inventory['apples']" in history


def test_no_color_flag_leaves_no_colour_codes(tmp_path):
    child = spawn(tmp_path, "--no-color")
    try:
        type_line(child, "/help")
        child.expect(NEW_PY)
        shown = child.before
        leave(child)
    finally:
        child.close()
    assert "/history" in shown
    assert not re.search(r"\x1b\[(3[0-7]|9[0-7]|38;)", shown)  # no foreground colour codes


def test_keys_typed_before_the_prompt_is_ready_are_kept_and_echo_is_restored(tmp_path):
    child = spawn(tmp_path, wait=False)
    try:
        child.expect_exact(PY_PROMPT)  # the early prompt, drawn before prompt_toolkit has loaded
        type_line(child, "6 * 7")
        child.expect(output("42"))
        child.expect(NEW_PY)
        # The terminal's own echo is back on for user code (input() shows what is typed).
        type_line(child, "name = input('who? ')")
        child.expect_exact("who? ")
        type_line(child, "bob")
        child.expect_exact("bob")
        child.expect(NEW_PY)
        type_line(child, "name")
        child.expect(output("'bob'"))
        child.expect(NEW_PY)
        leave(child)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_streamed_answer_tool_lines_and_approval_in_a_real_terminal(tmp_path):
    """The assistant against the scripted OpenAI-compatible server, seen on a real terminal screen."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fakes.openai_server import ScriptedServer

    with ScriptedServer() as server:
        server.tool("get_repr", {"expr": "d"})
        server.text("The dict `d` has **one** key, `alpha`.")
        server.tool("propose_code", {"code": "d['beta'] = 2", "explanation": "Add the missing key."})
        server.text("Added.")
        child = spawn_asking(tmp_path, server)
        try:
            type_line(child, "d = {'alpha': 1}")
            to_assistant_mode(child)
            type_line(child, "what is in @d?")
            child.expect(r"✓ get_repr\(d\) \d+ ms")
            child.expect(r"has.*one.*key")
            child.expect(NEW_AI)
            assert "**" not in child.before  # rendered as Markdown, not raw
            type_line(child, "add beta")
            child.expect_exact("Add the missing key.")
            child.expect(r"Run it\?.*\[r\]un / \[e\]dit / \[n\]o")
            child.send("r")
            child.expect(NEW_AI)
            child.send("\t")
            child.expect_exact(PY_PROMPT)
            type_line(child, "sorted(d)")
            child.expect(output("['alpha', 'beta']"))
            child.expect(NEW_PY)
            leave(child)
        finally:
            child.close()
    assert child.exitstatus == 0


def test_preview_approve_and_undo_in_a_real_terminal(tmp_path):
    """The proposal's life on a real terminal: its effects shown before the choice, run, then /undo."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fakes.openai_server import ScriptedServer
    from pyaichat.capabilities.sandbox.confine import probe

    with ScriptedServer() as server:
        server.tool("propose_code", {"code": "d = sorted(d)", "explanation": "Sort it."})
        server.text("Sorted.")
        child = spawn_asking(tmp_path, server)
        try:
            type_line(child, "d = [3, 1, 2]")
            to_assistant_mode(child)
            type_line(child, "sort d")
            child.expect_exact("Sort it.")
            if probe().complete:
                child.expect_exact("Preview (ran on a walled copy")
                child.expect(r"rebinds d: list of 3 items")
            else:
                child.expect_exact("No preview")
            child.expect(r"Run it\?.*\[r\]un / \[e\]dit / \[n\]o")
            child.send("r")
            child.expect(NEW_AI)
            type_line(child, "/undo")  # the checkpoint before the approved proposal's input
            child.expect_exact("Back to before input 2 (`d = sorted(d)`): input 2 undone.")
            child.send("\t")
            child.expect_exact(PY_PROMPT)
            type_line(child, "d")
            child.expect(output("[3, 1, 2]"))
            child.expect(NEW_PY)
            leave(child)
        finally:
            child.close()
    assert child.exitstatus == 0


def _proposal_screen(tmp_path, setup: list[str], code: str, **env: str) -> str:
    """What the terminal shows from the proposal of ``code`` (after ``setup`` typed in Python mode and a
    first question, so litellm's own threads are running) to its "Run it?" question, which gets "n"."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fakes.openai_server import ScriptedServer

    with ScriptedServer() as server:
        server.text("Hello.")
        server.tool("propose_code", {"code": code, "explanation": "As asked."})
        server.text("Not run.")
        base = server.base_url
        child = spawn(
            tmp_path, PYAICHAT_MODEL="openai/scripted", PYAICHAT_API_BASE=base, OPENAI_API_KEY="sk-t", **env
        )
        child.timeout = 60  # the first question pays litellm's import in the child
        try:
            for line in setup:
                type_line(child, line)
                child.expect(NEW_PY)
            child.send("\t")
            child.expect_exact(AI_PROMPT)
            type_line(child, "hello")
            child.expect_exact("Hello.")
            child.expect(NEW_AI)
            type_line(child, "do it")
            child.expect_exact("As asked.")
            child.expect(r"Run it\?.*\[r\]un / \[e\]dit / \[n\]o")
            screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before)
            child.send("n")
            child.expect_exact("Not run.")
            child.expect(NEW_AI)
            leave(child)
        finally:
            child.close()
    return screen


def test_the_preview_reports_a_new_name_once_with_the_namespace_held_by_an_object(tmp_path):
    """An object that holds the namespace (``g = globals()`` here; IPython's ``exit`` and the kernel's
    ``ZMQExitAutocall`` hold the shell, which holds it) must not read as changed in place by every
    proposal."""
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    setup = ["import pandas as pd", "df = pd.DataFrame({'price': [1.5, 2.5]})", "g = globals()"]
    screen = _proposal_screen(tmp_path, setup, "total = df.price.sum()")
    assert "new total: float64" in screen, screen
    assert "in place" not in screen and "cannot take this back" not in screen, screen


def test_a_slow_proposal_says_what_happened_in_plain_words(tmp_path):
    """The preview's deadline: no "in not timed", and no blaming of threads the user did not start (litellm's
    logging threads run after the first question)."""
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    screen = _proposal_screen(tmp_path, [], "import time; time.sleep(8); y = 1", PYAICHAT_TOOL_TIMEOUT="1")
    flat = " ".join(screen.split())
    assert "Preview (stopped after 0.8 s on a walled copy of your session; nothing has changed yet):" in flat
    assert (
        "The code was still running when the preview's 0.8 s ran out, so it was stopped there and what it "
        "would change is not known; running it for real has no such limit." in flat
    ), flat
    assert "not timed" not in flat and "thread" not in flat and "no variable created" not in flat, flat


def test_the_preview_says_what_it_cannot_see_and_tampering_in_one_sentence(tmp_path):
    """What lies outside the session's names is said under the effects, one line per kind; code that replaces
    part of Python gets one sentence and an incomplete preview, not a message that reads like a glitch."""
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    code = (
        "import os, threading, time, json; os.environ['MODE'] = 'fast'; "
        "threading.Thread(target=lambda: (time.sleep(4), items.clear()), name='emptier', daemon=True)"
        ".start(); "
        "json.dumps = str"
    )
    screen = _proposal_screen(tmp_path, ["items = [1, 2, 3]"], code)
    flat = " ".join(screen.split())
    assert "Incomplete preview (ran on a walled copy of your session in " in flat, flat
    assert (
        "This code replaces json.dumps, part of Python itself; its effects cannot be previewed — read it "
        "before you run it." in flat
    ), flat
    assert "sets the environment variable MODE: what that changes is not previewed" in flat, flat
    assert "starts a thread that keeps running (emptier): what it does later is not previewed" in flat, flat
    assert "unreadable" not in flat and "stopped" not in flat


def test_snapshot_exit_and_resume_in_a_real_terminal(tmp_path):
    """A terminal session keeps itself for --resume: its inputs, numbering and (with /snapshot) variables."""
    first = spawn(tmp_path)
    try:
        type_line(first, "total = 40 + 2")
        first.expect(NEW_PY)
        type_line(first, "/snapshot")
        # the path may wrap at the pane's edge (a long temporary folder): match around it
        first.expect(r"Saved 1 variable to [\s\S]*?last[\s\S]*?\(\d+ bytes")
        first.expect(NEW_PY)
        first.sendcontrol("d")
        first.expect(pexpect.EOF)
    finally:
        first.close()
    second = spawn(tmp_path, "--resume", wait=False)
    try:
        second.expect_exact("Resumed the session saved")
        second.expect_exact("Loaded 1 variable")
        second.expect(NEW_PY)
        type_line(second, "total")
        second.expect(output("42"))
        second.expect(NEW_PY)
        type_line(second, "/history")
        second.expect_exact("[1] total = 40 + 2")
        second.expect_exact("[2] total")
        second.expect(NEW_PY)
        second.sendcontrol("d")
        second.expect(pexpect.EOF)
    finally:
        second.close()
    assert second.exitstatus == 0


@pytest.mark.skipif(not __import__("shutil").which("less"), reason="no less on this machine")
def test_help_prints_inline_and_the_pager_opens_only_when_asked_with_the_way_back_on_screen(tmp_path):
    """/help opened less: the keys typed next went to the pager and the key list was below the fold. Now it
    is a few lines, the next line typed reaches the prompt, and a long output offers /more, whose pager says
    how to come back."""
    child = spawn(tmp_path, PAGER="less")  # LESS unset: pyaichat's default FRXK, as git's
    try:
        type_line(child, "/help")
        child.expect("Keys: TAB on an empty line switches Python")
        child.expect("Commands: /")
        child.expect("/help all: every command; /help keys: every key.")
        type_line(child, "6 * 7")  # typed at once: to the prompt, not to a pager
        child.expect(output("42"))
        child.expect(NEW_PY)
        type_line(child, "/help keys")
        child.expect(r"exit \(on an empty line\)")
        child.expect(NEW_PY)
        type_line(child, "/help all")  # taller than the 30-line screen: printed, with the way to page it
        child.expect(r"\(\d+ lines: /more shows them in a pager, where q comes back here\)")
        child.expect(NEW_PY)
        type_line(child, "/more")
        child.expect_exact("pyaichat: q comes back to the prompt, space shows more, / searches")
        child.send("q")
        child.expect(NEW_PY)
        type_line(child, "6 * 7")
        child.expect(output("42"))
    finally:
        child.close(force=True)
