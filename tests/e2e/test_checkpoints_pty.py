"""Checkpoints end to end: ``python -m pyaichat`` in a real pseudo-terminal, the term read by pyte.

``/undo`` takes back any input (a rebinding, a frame and a list changed in place, three inputs at once),
``/redo`` returns, a crash (a segmentation fault, a SIGKILL of the session process) resumes the newest
checkpoint and says so, the memory budget lets the oldest checkpoints go and says which inputs can no longer
be undone, and the terminal's job control and exit status are those of a session without checkpoints.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from pty_terminal import NEW_PY, Screen, leave, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="checkpoints need fork()"),
]

WAIT = 60


class Term:
    """The child's output as it comes: the raw stream (for prompts, read in order) and pyte's screen (for
    what the person sees)."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.screen = Screen(child)
        self.raw = ""
        self.pos = 0

    def _read(self, timeout: float) -> None:
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        self.raw += data
        self.screen.stream.feed(data)

    def expect(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        """Read until ``pattern`` shows in the raw stream after what was matched before."""
        end = time.monotonic() + timeout
        compiled = re.compile(pattern, re.DOTALL)
        while True:
            found = compiled.search(self.raw, self.pos)
            if found:
                self.pos = found.end()
                return found
            if time.monotonic() > end:
                raise AssertionError(f"{pattern!r} never came; the term:\n{self.screen.text()}")
            self._read(0.05)

    def wait_for(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        """Read until ``pattern`` matches the term's text."""
        end = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.screen.text(), re.MULTILINE)
            if found:
                return found
            if time.monotonic() > end:
                raise AssertionError(f"{pattern!r} never showed; the term:\n{self.screen.text()}")
            self._read(0.05)

    def text(self) -> str:
        return self.screen.text()

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._read(0.05)


def wrapped(sentence: str) -> str:
    """A pattern for ``sentence`` as the terminal shows it, wherever it wraps."""
    return r"\s+".join(re.escape(word) for word in sentence.split())


def start(tmp_path: Path, *args: str, **env: str) -> Term:
    child = spawn(tmp_path, *args, wait=False, **env)
    child.timeout = WAIT
    term = Term(child)
    term.expect(NEW_PY)
    return term


def send(term: Term, line: str) -> None:
    """Type ``line`` and Enter, once what was drawn before is read (a quiet line redraws the prompt)."""
    term.pump(0.2)
    term.pos = len(term.raw)
    term.child.send(line + "\r")


def run(term: Term, line: str) -> None:
    """Type ``line`` and Enter, and wait for the next prompt."""
    send(term, line)
    term.expect(NEW_PY)


def said(term: Term, line: str, pattern: str, timeout: float = WAIT) -> re.Match[str]:
    """Type ``line`` and Enter, wait until ``pattern`` shows on the term and the next prompt is drawn."""
    term.child.send(line + "\r")
    found = term.wait_for(pattern, timeout)
    term.expect(NEW_PY)
    return found


def value(term: Term, expr: str) -> str:
    """The repr of ``expr`` in the session, printed after a mark (the line typed, echoed by the terminal if
    it comes before the prompt, never matches)."""
    mark = f"m{time.monotonic_ns() % 10**9}"
    return said(term, f"print('{mark}', repr({expr}))", rf"^{mark} (.*)$").group(1)


def test_undo_takes_back_a_rebinding_and_redo_returns(tmp_path: Path) -> None:
    term = start(tmp_path)
    try:
        run(term, "x = 1")
        run(term, "x = 2")
        said(term, "/undo", r"^Back to before input 2 \(`x = 2`\): input 2 undone\. /redo returns")
        assert value(term, "x") == "1"
        # that look was an input too: /redo is let go once something new has run
        said(term, "/redo", r"^Nothing to redo: /redo returns to where you were before /undo")
        run(term, "x = 3")
        said(term, "/undo", r"^Back to before input 4")
        said(term, "/redo", r"^Back where you were: input 4 stands? again\.")
        assert value(term, "x") == "3"
        said(term, "/history", r"\[2\] x = 2\s+\[undone with /undo\]")
        leave(term.child)
    finally:
        term.child.close(force=True)


def test_in_place_changes_of_a_frame_and_a_list_go_back_three_inputs(tmp_path: Path) -> None:
    term = start(tmp_path)
    try:
        run(term, "import pandas as pd; df = pd.DataFrame({'a': [1.0, 2.0, 3.0]}); lst = [1, 2]")
        run(term, "df.loc[0, 'a'] = 99.0")
        run(term, "lst.append(3)")
        run(term, "y = 'new'")
        said(term, "/checkpoints", r"/undo can go back 4 inputs, to before input 1\.")
        term.wait_for(r"\[2\] df\.loc\[0, 'a'\] = 99\.0.*\n\s+Changed in place df\.")
        term.wait_for(r"\[3\] lst\.append\(3\).*\n\s+Changed in place lst\.")
        term.wait_for(r"\[4\] y = 'new'.*\n\s+Created y\.")
        said(term, "/undo 3", r"^Back to before input 2 \(`df\.loc\[0, 'a'\] = 99\.0`\): inputs 2–4 undone\.")
        assert value(term, "(df.a.tolist(), lst, 'y' in dir())") == "([1.0, 2.0, 3.0], [1, 2], False)"
        leave(term.child)
    finally:
        term.child.close(force=True)


def test_a_segmentation_fault_loses_only_the_input_that_crashed(tmp_path: Path) -> None:
    term = start(tmp_path)
    try:
        run(term, "data = list(range(5)); import ctypes")
        said(
            term,
            "ctypes.string_at(0)",
            wrapped(
                "The session ended with a segmentation fault while running input 2 "
                "(`ctypes.string_at(0)`); it is back as it was before that input."
            ),
        )
        assert value(term, "data") == "[0, 1, 2, 3, 4]"
        said(
            term, "/history", r"\[2\] ctypes\.string_at\(0\)\s+\[crashed the session \(a segmentation fault\)"
        )
        term.child.send("\x1b[A\x1b[A\x1b[A")  # up-arrow, past /history and the look at data: the input
        term.wait_for(r">>> ctypes\.string_at\(0\)$")
        term.child.sendcontrol("c")
        leave(term.child)
    finally:
        term.child.close(force=True)


def test_a_sigkill_of_the_session_process_resumes_it_with_the_sentence(tmp_path: Path) -> None:
    term = start(tmp_path)
    try:
        run(term, "kept = 'before'")
        pid = int(value(term, "__import__('os').getpid()"))
        assert pid != term.child.pid  # the shell waits for the supervisor, the session is its child
        term.child.send("import time; time.sleep(60)\r")
        term.pump(1.0)
        os.kill(pid, signal.SIGKILL)
        term.wait_for(
            wrapped(
                "The session ended with SIGKILL (killed by the system when memory ran out, or by someone) "
                "while running input 3 (`import time; time.sleep(60)`); it is back as it was before that "
                "input."
            )
        )
        assert value(term, "kept") == "'before'"
        assert int(value(term, "__import__('os').getpid()")) not in (pid, term.child.pid)
        leave(term.child)
        assert term.child.wait() == 0
    finally:
        term.child.close(force=True)


def test_the_memory_budget_lets_the_oldest_checkpoints_go_and_says_which(tmp_path: Path) -> None:
    # 60 MB changed in place by every input; the checkpoints may hold 150 MB of their own
    term = start(tmp_path, PYAICHAT_CHECKPOINT_MEMORY="0.15")
    try:
        run(term, "import numpy as np; big = np.zeros(60 * 2**20 // 8)")
        for i in range(1, 6):
            run(term, f"big += {i}")
            time.sleep(0.5)  # the supervisor measures after each input
        run(term, "pass")
        time.sleep(1.0)
        term.wait_for(
            r"Inputs? [\d–, ]+ can no longer be undone: (their|its) checkpoints? (were|was) let go to"
        )
        said(term, "/checkpoints", r"The checkpoints hold [\d.]+ MB of their own \(budget\s+154\s+MB\)\.")
        text = term.text()
        reach = int(re.search(r"/undo can go back (\d+) inputs?", text).group(1))
        assert 1 <= reach < 7, text
        said(term, f"/undo {reach}", r"^Back to before input")
        leave(term.child)
    finally:
        term.child.close(force=True)


def test_job_control_and_the_exit_status_are_the_shells_as_without_checkpoints(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        PS1="$ ",
    )
    shell = pexpect.spawn(
        "bash", ["--norc", "-i"], env=env, dimensions=(30, 100), encoding="utf-8", timeout=WAIT
    )
    try:
        shell.expect(r"\$ ")
        shell.send(f"{sys.executable} -m pyaichat\r")
        shell.expect(NEW_PY)
        shell.send("x = 41\r")
        shell.expect(NEW_PY)
        shell.send("import time; time.sleep(2); print('slept')\r")
        time.sleep(0.5)
        shell.sendcontrol("z")
        shell.expect(r"Stopped\s+.*pyaichat")
        shell.expect(r"\$ ")
        shell.send("fg\r")
        shell.expect("slept")
        shell.expect(NEW_PY)
        shell.send("x + 1\r")
        shell.expect("42")
        shell.send("exit(3)\r")
        shell.expect(r"\$ ")
        shell.send("echo status=$?\r")
        shell.expect(r"status=3")
        shell.send("exit\r")
        shell.expect(pexpect.EOF)
    finally:
        shell.close(force=True)


def agent(url: str, token: str, calls: list[tuple[str, dict]]) -> list[str]:
    """An outside agent over Streamable HTTP (the official SDK's client): what it read of each call."""
    import anyio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcpserve"))
    from serve_helpers import http_client, text

    async def calling() -> list[str]:
        async with http_client(url, token, "test-agent") as client:
            return [text(await client.call_tool(name, args)) for name, args in calls]

    return anyio.run(calling)


def test_an_outside_agents_proposal_is_undone_and_the_agent_keeps_its_address(tmp_path: Path) -> None:
    import threading

    pytest.importorskip("mcp")
    term = start(tmp_path, "--mcp")
    try:
        url = term.wait_for(r"Serving this session over MCP at (http://127\.0\.0\.1:\d+/mcp)").group(1)
        run(term, "import pandas as pd; df = pd.DataFrame({'a': [3, 1, 2]})")
        token = said(term, "/mcp token", r"Authorization: Bearer (\S+)").group(1)
        answers: list[list[str]] = []
        proposal = {"code": "df2 = df.sort_values('a')", "explanation": "Sort df."}
        worker = threading.Thread(
            target=lambda: answers.append(agent(url, token, [("propose_code", proposal)]))
        )
        worker.start()
        term.wait_for(r"Run it\? \[r\]un / \[e\]dit / \[n\]o:", timeout=120)  # at the empty prompt
        term.child.send("r")
        term.expect(NEW_PY)
        worker.join(120)
        assert answers and "ran the proposed code" in answers[0][0]
        said(term, "/undo", wrapped("Back to before input 2 (`df2 = df.sort_values('a')`): input 2 undone."))
        # the same address and token serve the session resumed from the checkpoint; the agent is told
        after = agent(url, token, [("get_type", {"expr": "df"}), ("get_type", {"expr": "df2"})])
        assert after[0].startswith("(The person took the session back with /undo: input 2 undone.")
        assert "df: DataFrame" in after[0]
        assert after[1] == "There is no variable named 'df2' in the session."
        said(term, "/redo", r"Back where you were: input 2 stands again\.")
        assert value(term, "df2.a.tolist()") == "[1, 2, 3]"
        assert "df2: DataFrame" in agent(url, token, [("get_type", {"expr": "df2"})])[0]
        leave(term.child)
    finally:
        term.child.close(force=True)


def test_the_conversation_history_and_journal_go_on_across_a_jump_and_a_crash(tmp_path: Path, srv) -> None:
    import json

    term = start(
        tmp_path, PYAICHAT_MODEL="openai/scripted", PYAICHAT_API_BASE=srv.base_url, OPENAI_API_KEY="sk-t"
    )
    term.child.timeout = 120
    try:
        run(term, "x = 1")
        srv.text("x is 1.")
        said(term, "/ask what is x?", r"^x is 1\.$", timeout=120)
        run(term, "x = 2")
        said(term, "/undo", r"^Back to before input 2")
        srv.text("Still 1.")
        said(term, "/ask and now?", r"^Still 1\.$", timeout=120)
        sent = json.dumps(srv.bodies[-1]["messages"])
        assert "what is x?" in sent  # the conversation went on in the session resumed from the copy
        assert "went back to before input 2 with /undo" in sent  # and the model was told
        run(term, "import ctypes")
        said(term, "ctypes.string_at(0)", r"segmentation\s+fault")
        srv.text("Fine.")
        said(term, "/ask after the crash?", r"^Fine\.$", timeout=120)
        sent = json.dumps(srv.bodies[-1]["messages"])
        assert "what is x?" in sent and "and now?" in sent  # kept by the copy taken after that answer
        assert "ended with a segmentation fault while running input 4" in sent
        assert value(term, "x") == "1"  # input 5: the numbering went on past the undone and crashed inputs
        said(term, "/history", r"\[5\] print\(")
        history = term.text()
        assert re.search(r"\[2\] x = 2\s+\[undone with /undo\]", history), history
        assert re.search(r"\[4\] ctypes\.string_at\(0\)\s+\[crashed the session", history), history
        said(term, f"/save {tmp_path / 'work.py'}", r"Wrote \d+ cells")
        saved = (tmp_path / "work.py").read_text()
        assert re.search(r"^# x = 2$", saved, re.MULTILINE), saved  # the undone input does not run again
        leave(term.child)
    finally:
        term.child.close(force=True)
