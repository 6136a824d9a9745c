"""``python -m pyaichat`` in a real pseudo-terminal (pexpect) against the real local model: a question whose
answer is streaming is cancelled with Ctrl-C; the REPL stays up, says so in one sentence, and the session is
unchanged."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from realmodel.local_server import pyaichat_env

pexpect = pytest.importorskip("pexpect")

from pty_terminal import NEW_AI, NEW_PY  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def test_ctrl_c_during_a_streaming_answer_in_a_real_terminal(model_server, tmp_path: Path):
    env = pyaichat_env(model_server, tmp_path, max_tokens="1500", turn_timeout="120")
    env.pop("NO_COLOR")
    env.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "pyaichat"],
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=60,
        cwd=str(tmp_path),
    )
    try:
        child.expect(NEW_PY)
        child.send('sales = {"north": 120, "south": 340, "east": 90}\r')
        child.expect(NEW_PY)
        child.send("/ai\r")
        child.expect(NEW_AI)
        asked = time.monotonic()
        child.send("write a very long story about every region in sales, in great detail\r")
        child.expect(r"(?i)answering|thinking", timeout=60)  # the status line: the request is under way
        time.sleep(1.5)
        child.sendintr()
        child.expect(r"Stopped by Ctrl-C[^\r\n]*", timeout=20)
        stopped = time.monotonic() - asked
        child.expect(NEW_AI, timeout=20)
        assert "Traceback" not in child.before
        child.send("/py\r")
        child.expect(NEW_PY)
        child.send("sales\r")
        child.expect(r"\{'north': 120, 'south': 340, 'east': 90\}")
        child.expect(NEW_PY)
        child.send("/trace\r")
        child.expect(r"Total [\d,]+ ms[^\r\n]*")
        child.expect(NEW_PY)
        assert stopped < 60
        child.sendeof()
        child.expect(pexpect.EOF, timeout=20)
    finally:
        if child.isalive():
            child.terminate(force=True)
        log = child.before if isinstance(child.before, str) else ""
        assert "Traceback" not in log
