"""``python -m pyaichat`` in a real pseudo-terminal (pexpect): the prompt patterns, the spawns and the keys
the pty tests share."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect

from timeouts import PTY_WAIT

PY_PROMPT = ">>> "
AI_PROMPT = "ai> "
# A *new* prompt: prompt_toolkit turns bracketed paste on at the start of every prompt, then draws it
# (redraws while typing do not repeat the prompt text; without colour the trailing space may be a cursor
# move). pexpect compiles patterns with DOTALL.
NEW_PY = r"\x1b\[\?2004h.*?>>>[ \x1b]"
NEW_AI = r"\x1b\[\?2004h.*?ai>[ \x1b]"
TIMEOUT = PTY_WAIT


def output(*lines: str) -> str:
    """Lines printed by the program (preceded by escape codes or a newline, not by another digit)."""
    return r"(?<![0-9])" + r"\r\n".join(re.escape(line) for line in lines) + r"\r\n"


def spawn(tmp_path: Path, *args: str, wait: bool = True, **env_extra: str) -> pexpect.spawn:
    """pyaichat as a new user starts it (no config, no provider keys) in a 100x30 xterm; ``wait`` for the
    full prompt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_", "ANTHROPIC_"))}
    env.pop("PAGER", None)
    env.pop("LESS", None)
    env.update(
        # long command output is paged in a terminal; a test that wants the pager passes PAGER="less"
        PAGER=env_extra.pop("PAGER", "cat"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        TERM="xterm",
        # pexpect is a terminal that never answers cursor-position requests; do not wait for it (a test with
        # a ``Screen`` that answers them passes PROMPT_TOOLKIT_NO_CPR="0")
        PROMPT_TOOLKIT_NO_CPR="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    env.update(env_extra)
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "pyaichat", *args],
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    if wait:
        child.expect(NEW_PY)
    return child


def spawn_suggesting(tmp_path: Path, base_url: str, bound: float) -> pexpect.spawn:
    """pyaichat with ghost-text suggestions from the scripted server at ``base_url``; ``bound``: the first
    suggestion pays litellm's import in the child (or in its helper)."""
    child = spawn(
        tmp_path,
        PYAICHAT_SUGGEST_MODEL="openai/fim",
        PYAICHAT_SUGGEST_API_BASE=base_url,
        OPENAI_API_KEY="sk-test",
    )
    child.timeout = bound
    return child


def spawn_scripted(tmp_path: Path, base_url: str, *args: str, bound: float = 60, **env: Any) -> pexpect.spawn:
    """pyaichat with the scripted server at ``base_url`` as its model (litellm's OpenAI client wants some
    key); ``bound``: each wait's limit (the first question pays litellm's import in the child)."""
    child = spawn(
        tmp_path, *args, PYAICHAT_MODEL="openai/scripted", PYAICHAT_API_BASE=base_url, OPENAI_API_KEY="sk-t",
        **env,
    )  # fmt: skip
    child.timeout = bound
    return child


def ask_on_screen(
    tmp_path: Path, base_url: str, question: str, bound: float = 90
) -> tuple[pexpect.spawn, Screen]:
    """pyaichat with the scripted model, TAB into Assistant mode and ``question`` asked; the screen follows
    what it shows from the start."""
    child = spawn_scripted(tmp_path, base_url, bound=bound)
    screen = Screen(child)
    try:
        child.send("\t")
        screen.wait_for(AI_PROMPT.strip())
        child.send(question + "\r")
    except BaseException:
        child.close()
        raise
    return child, screen


def type_line(child: pexpect.spawn, text: str) -> None:
    """Type ``text`` and Enter."""
    child.send(text)
    child.send("\r")


def leave(child: pexpect.spawn, *, from_assistant: bool = False) -> None:
    """Leave as a person does: TAB back to Python mode first if asked, then Ctrl-D on an empty line."""
    if from_assistant:
        child.send("\t")
        child.expect_exact(PY_PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


class Screen:
    """What the terminal shows: the child's output fed, as it comes, to pyte's VT100 emulator of the same
    size, for tests that assert on the screen itself (where text landed, what is drawn twice)."""

    def __init__(
        self,
        child: pexpect.spawn,
        columns: int = 100,
        rows: int = 30,
        *,
        answers: Callable[[], float] | None = None,
    ) -> None:
        """``answers``: the terminal answers cursor-position requests, each after the delay this returns
        (seconds; a real terminal's, or a loaded machine's); without it, like pexpect, it never does."""
        import pyte

        self.child = child
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        if answers is not None:
            import threading

            def answer(data: str) -> None:
                timer = threading.Timer(answers(), lambda: child.isalive() and child.send(data))
                timer.daemon = True
                timer.start()

            self.screen.write_process_input = answer  # type: ignore[method-assign]

    @property
    def lines(self) -> list[str]:
        """The screen's rows, trailing blanks removed."""
        return [row.rstrip() for row in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n")

    def pump(self, seconds: float = 0.3) -> None:
        """Read what arrives for ``seconds``."""
        import time

        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self._read(min(left, 0.05))

    def wait_for(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        """Read until ``pattern`` (a regular expression) matches the screen's text; its match."""
        import time

        end = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.text(), re.MULTILINE)
            if found:
                return found
            if time.monotonic() > end:
                raise AssertionError(f"{pattern!r} never showed; the screen:\n{self.text()}")
            self._read(0.05)

    def _read(self, timeout: float) -> None:
        try:
            self.stream.feed(self.child.read_nonblocking(65536, timeout=timeout))
        except pexpect.TIMEOUT:
            pass
