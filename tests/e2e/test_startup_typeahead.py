"""Nothing typed during start-up is lost: keys sent before anything is on screen all run, in order.

The start-up draws ``>>> `` itself, then loads prompt_toolkit, the lexer (after the first render) and the
completer (on the first TAB). Keys typed through all of that wait in the terminal and reach the real prompt.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from pty_terminal import NEW_PY, leave, spawn  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]


def test_keys_typed_before_anything_is_drawn_all_run_in_order(tmp_path: Path) -> None:
    child = spawn(tmp_path, wait=False)
    try:
        # Sent at once, while the interpreter is still starting: a statement, a block with its blank line,
        # a completion key, and an expression that needs all of them.
        child.send("x = 6\r")
        child.send("for i in range(2):\r")
        child.send("x += i\r\r")
        child.send("pri\t(x * 7, 'done')\r")
        child.expect(r"(?<![0-9])49 done\r\n")
        child.expect(NEW_PY)
        leave(child)
    finally:
        child.close()
    assert child.exitstatus == 0
