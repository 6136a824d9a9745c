"""``python -m pyaichat`` in a real pseudo-terminal (pexpect): the prompt patterns, the spawns and the keys
the pty tests share."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

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
        # pexpect is a terminal that never answers cursor-position requests; do not wait for it.
        PROMPT_TOOLKIT_NO_CPR="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **env_extra,
    )
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
