"""End to end: the real ``ipython`` executable, with piped input and in a pseudo-terminal (TAB mode)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ipy_helpers import needs_assistant

pytestmark = pytest.mark.e2e
IPYTHON = str(Path(sys.executable).with_name("ipython"))


def ipython_env(ipydir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(IPYTHONDIR=str(ipydir), LITELLM_LOCAL_MODEL_COST_MAP="True", NO_COLOR="1", **extra)
    return env


def server_env(server) -> dict[str, str]:
    return {
        "PYAICHAT_MODEL": "openai/test",
        "PYAICHAT_API_BASE": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "PYAICHAT_AUDIT": "false",
    }


@needs_assistant
def test_piped_ipython_answers_a_question(scripted, ipydir):
    scripted.tool("get_repr", {"expr": "x"})
    scripted.text("`x` is 41, so x + 1 is **42**.")
    proc = subprocess.run(
        [IPYTHON, "--quick", "--no-banner", "--colors=nocolor"],
        input="x = 41\n%load_ext pyaichat\n%ai what is x + 1?\n",
        capture_output=True,
        text=True,
        env=ipython_env(ipydir, **server_env(scripted)),
        timeout=120,
    )
    assert "x is 41, so x + 1 is 42." in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "what is x + 1?" in str(scripted.bodies[0]["messages"][-1])  # the "?" survived


def test_extension_listed_in_ipython_config_without_a_model(ipydir):
    profile = ipydir / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text("c.InteractiveShellApp.extensions = ['pyaichat']\n")
    proc = subprocess.run(
        [IPYTHON, "--no-banner", "--colors=nocolor"],
        input="%ai why is it empty?\nprint('still', 'alive')\n",
        capture_output=True,
        text=True,
        env=ipython_env(ipydir),
        timeout=60,
    )
    from pyaichat.agent.llm import NO_MODEL

    assert proc.stderr.strip() == f"UsageError: {NO_MODEL}".replace("/model", "%ai /model")
    assert "still alive" in proc.stdout


def test_tab_on_an_empty_line_switches_to_assistant_mode(ipydir):
    """The real terminal path. No model is set, so nothing imports litellm: the line typed in Assistant mode
    is shown to reach ``%ai`` by the answer of ``/model``. (Answers against the scripted server are covered
    in-process and by the piped run above.)"""
    pexpect = pytest.importorskip("pexpect")
    # No cursor-position requests: pexpect does not answer them (so no bottom toolbar is drawn).
    env = ipython_env(ipydir, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    child = pexpect.spawn(
        IPYTHON,
        ["--quick", "--no-banner", "--colors=nocolor"],
        env=env,
        encoding="utf-8",
        dimensions=(30, 100),
    )
    child.timeout = 30
    try:
        child.expect(r"In \[1\]:")
        child.sendline("x = 41")
        child.expect(r"In \[2\]:")
        child.sendline("%load_ext pyaichat")
        child.expect(r"In \[3\]:")
        child.send("\t")  # TAB on the empty line
        child.expect(r"ai In \[3\]:")
        child.send("/model\r")
        child.expect("No model is configured")
        child.expect(r"ai In \[4\]:")
        child.send("why is (x?\r")  # not Python, and ends in "?": still a question (one line, no help page)
        child.expect("No model is configured")
        child.expect(r"ai In \[5\]:")
        child.send("\t")  # and back to Python
        child.sendline("x")
        child.expect(r"Out\[5\]:.*41")
        child.sendline("%unload_ext pyaichat")
        child.expect(r"In \[7\]:")
        child.send("\t")  # unloaded: TAB on an empty line indents again, as in plain IPython
        child.sendline("x")
        child.expect(r"Out\[7\]:.*41")
    finally:
        child.close(force=True)


def test_the_preview_in_terminal_ipython_shows_only_what_the_proposal_does(scripted, ipydir):
    """IPython's own ``exit`` and ``quit`` hold the shell, which holds the namespace: a proposal that creates
    ``total`` changes neither of them in place (the preview used to say so on every proposal)."""
    from pyaichat.capabilities.sandbox.confine import probe

    pexpect = pytest.importorskip("pexpect")
    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    scripted.tool("propose_code", {"code": "total = df.price.sum()", "explanation": "Sum them."})
    env = ipython_env(ipydir, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm", **server_env(scripted))
    child = pexpect.spawn(
        IPYTHON,
        ["--quick", "--no-banner", "--colors=nocolor"],
        env=env,
        encoding="utf-8",
        dimensions=(40, 120),
    )
    child.timeout = 60  # the question pays litellm's import
    try:
        child.expect(r"In \[1\]:")
        child.sendline("import pandas as pd; df = pd.DataFrame({'price': [1.5, 2.5]})")
        child.expect(r"In \[2\]:")
        child.sendline("%load_ext pyaichat")
        child.expect(r"In \[3\]:")
        child.sendline("%ai sum the prices")
        child.expect_exact("Preview (")
        child.expect(r"In \[4\]:")
        screen = child.before
        child.sendcontrol("u")  # the proposal waits in the input: not run
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "new total: float64" in screen, screen
    assert "in place" not in screen and "cannot take this back" not in screen, screen


def test_a_question_typed_as_python_gets_one_hint_in_terminal_ipython(ipydir):
    """IPython takes ``why did that fail?`` for a help request and ``what is in df`` for Python: both are
    questions, and the first gets the hint (once); a typo in code gets none."""
    pexpect = pytest.importorskip("pexpect")
    from pyaichat.prose import QUESTION_HINT

    env = ipython_env(ipydir, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
    child = pexpect.spawn(
        IPYTHON,
        ["--quick", "--no-banner", "--colors=nocolor"],
        env=env,
        encoding="utf-8",
        dimensions=(30, 120),
    )
    child.timeout = 30
    try:
        child.expect(r"In \[1\]:")
        child.sendline("%load_ext pyaichat")
        child.expect(r"In \[2\]:")
        child.sendline("x = = 2")
        child.expect("SyntaxError")
        child.expect(r"In \[3\]:")
        assert QUESTION_HINT not in child.before
        child.sendline("why did that fail?")
        child.expect_exact(QUESTION_HINT)
        child.expect(r"In \[4\]:")
        child.sendline("what is in df")
        child.expect("SyntaxError")
        child.expect(r"In \[5\]:")
        assert QUESTION_HINT not in child.before  # once a session
    finally:
        child.close(force=True)
