"""litellm loads while the prompt is idle, when a model is configured (issue 50 point 11): the first answer
then does not wait for it. Without a model nothing loads."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pty_terminal import NEW_PY, spawn, spawn_scripted  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

PROBE = "print('litellm:', 'litellm' in sys.modules)"


def litellm_after_idle(child: pexpect.spawn, seconds: float) -> str:
    """Whether litellm is being (or has been) imported after ``seconds`` of an idle prompt."""
    time.sleep(seconds)
    child.send("import sys; " + PROBE + "\r")
    child.expect(r"litellm: (True|False)")
    return child.match.group(1)


def test_an_idle_prompt_with_a_model_configured_loads_litellm(tmp_path, srv):
    child = spawn_scripted(tmp_path, srv.base_url)
    try:
        assert litellm_after_idle(child, 2.5) == "True"
        child.expect(NEW_PY)
    finally:
        child.close()


def test_an_idle_prompt_without_a_model_loads_nothing(tmp_path):
    child = spawn(tmp_path)
    try:
        assert litellm_after_idle(child, 2.5) == "False"
    finally:
        child.close()
