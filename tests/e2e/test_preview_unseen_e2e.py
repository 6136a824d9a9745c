"""What the preview cannot see, end to end through the real litellm HTTP path against the scripted server:
the panel says it (in-process front end and piped mode), and the assistant that proposed the code is told it
in its tool result — with no more of the preview than that."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.assemble import assemble
from pyaichat.capabilities.sandbox.confine import probe
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller, Mode
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session
from readonly_breaks import PROCESS_PROPOSALS, told_piece

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not probe().complete, reason="the preview needs the kernel walls (Landlock, seccomp)"),
]

SETUP = "import pandas as pd\nitems = [1, 2, 3]"
BLIND = (
    "import os, threading, time\n"
    "os.environ['REPORT_MODE'] = 'fast'\n"
    "pd.DataFrame.__repr__ = lambda self: 'a frame'\n"
    "def empty_later():\n"
    "    time.sleep(4)\n"
    "    items.clear()\n"
    "threading.Thread(target=empty_later, name='emptier', daemon=True).start()\n"
    "total = sum(items)"
)
TAMPER = "import json\njson.dumps = lambda *args, **kwargs: '{}'\nitems.append(4)"
GREW = "list of 3 items → list of 4 items"
TAMPER_SENTENCE = (
    "This code replaces json.dumps, part of Python itself; its effects cannot be previewed — read it before "
    "you run it."
)


def make_ctrl(srv: ScriptedServer, decision: str = "no") -> Controller:
    config = Config(model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    llm = lambda cfg: LiteLLMClient(cfg, backoff=0.01)  # noqa: E731
    ctrl = assemble(LocalRuntime(session), Recorder(decision), llm_factory=llm)
    ctrl.set_mode(Mode.ASSISTANT)
    return ctrl


def preview_of(ctrl: Controller) -> tuple[str, list[tuple[str, str]]]:
    (event,) = ctrl.frontend.of("preview")
    return event.status, event.lines


def told_to_the_model(srv: ScriptedServer) -> str:
    """The tool result of ``propose_code`` in the request after it (what the model was told)."""
    messages = srv.bodies[-1]["messages"]
    return next(m["content"] for m in messages if m.get("role") == "tool")


def test_the_panel_and_the_assistant_are_told_what_the_preview_cannot_see(srv: ScriptedServer) -> None:
    ctrl = make_ctrl(srv)
    ctrl.run_python(SETUP)
    srv.tool("propose_code", {"code": BLIND, "explanation": "Sum the items."}).text("Declined, fine.")
    ctrl.ask("sum the items")
    status, lines = preview_of(ctrl)
    assert status == "previewed"
    assert [line for kind, line in lines if kind == "unseen"] == [
        "  sets the environment variable REPORT_MODE: what that changes is not previewed",
        "  replaces pd.DataFrame.__repr__: every later use sees that, which is not previewed",
        "  starts a thread that keeps running (emptier): what it does later is not previewed",
    ]
    told = told_to_the_model(srv)
    assert told.startswith("The user declined to run the proposed code")
    assert told.endswith(
        "The person's preview of this code could not see everything it does, and told them so:\n"
        "- sets the environment variable REPORT_MODE: what that changes is not previewed\n"
        "- replaces pd.DataFrame.__repr__: every later use sees that, which is not previewed\n"
        "- starts a thread that keeps running (emptier): what it does later is not previewed"
    ), told
    assert "new total" not in json.dumps(srv.bodies)  # the rest of the preview stays the person's
    ns = ctrl.runtime.session.namespace
    assert ns["items"] == [1, 2, 3] and "total" not in ns and "REPORT_MODE" not in os.environ


def test_tampering_marks_the_preview_incomplete_in_one_sentence(srv: ScriptedServer) -> None:
    ctrl = make_ctrl(srv)
    ctrl.run_python("items = [1, 2, 3]")
    srv.tool("propose_code", {"code": TAMPER, "explanation": "Append."}).text("OK.")
    ctrl.ask("append four")
    status, lines = preview_of(ctrl)
    assert status == "incomplete"
    assert lines[:3] == [
        ("head", lines[0][1]),
        ("tampered", f"  {TAMPER_SENTENCE}"),
        ("in_place", f"  changes items in place: {GREW} — /undo cannot take this back"),
    ]
    assert lines[0][1].startswith("Incomplete preview (ran on a walled copy of your session in ")
    assert told_to_the_model(srv).endswith(f"- {TAMPER_SENTENCE}")


def _piped(srv: ScriptedServer, tmp_path: Path, code: str) -> str:
    srv.tool("propose_code", {"code": code, "explanation": "As asked."})
    srv.text("Not run.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(
        PYAICHAT_MODEL="openai/test",
        PYAICHAT_API_BASE=srv.base_url,
        OPENAI_API_KEY="sk-test",
        XDG_STATE_HOME=str(tmp_path / "state"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    out = subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input=f"{SETUP}\n/ask do it\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split("As asked.\n", 1)[1].split("Not run.")[0]


def test_piped_the_panel_says_what_it_cannot_see(srv: ScriptedServer, tmp_path: Path) -> None:
    shown = _piped(srv, tmp_path, BLIND)
    panel = shown.split(BLIND + "\n", 1)[1]
    assert panel.startswith("Preview (ran on a walled copy of your session in "), panel
    assert panel.split("\n", 1)[1] == (
        "  new empty_later: function empty_later\n"
        "  new os: module os\n"
        "  new threading: module threading\n"
        "  new time: module time\n"
        "  new total: int\n"
        "  sets the environment variable REPORT_MODE: what that changes is not previewed\n"
        "  replaces pd.DataFrame.__repr__: every later use sees that, which is not previewed\n"
        "  starts a thread that keeps running (emptier): what it does later is not previewed\n"
    ), panel


def test_piped_tampering_is_one_sentence_not_a_glitch(srv: ScriptedServer, tmp_path: Path) -> None:
    shown = _piped(srv, tmp_path, TAMPER)
    panel = shown.split(TAMPER + "\n", 1)[1]
    head, rest = panel.split("\n", 1)
    assert head.startswith("Incomplete preview (ran on a walled copy of your session in "), panel
    assert rest == (
        f"  {TAMPER_SENTENCE}\n"
        "  changes items in place: list of 3 items → list of 4 items — /undo cannot take this back\n"
        "  new json: module json\n"
    ), panel
    assert "unreadable" not in shown and "stopped" not in shown


def test_what_a_proposal_does_to_the_whole_process_reaches_the_panel_and_the_assistant(
    srv: ScriptedServer,
) -> None:
    """The review's six proposals (``tests/readonly_breaks.py``), asked of the REPL's own assistant: each
    panel says what it does to the process — with litellm and httpx loaded as the assistant loads them — and
    the model is told it; the session is as it was."""
    ctrl = make_ctrl(srv)
    ctrl.run_python(SETUP)
    srv.tools(
        *[("propose_code", {"code": code, "explanation": "As asked."}) for code, _ in PROCESS_PROPOSALS]
    )
    srv.text("Declined, all of them.")
    ctrl.ask("change the process")
    previews = ctrl.frontend.of("preview")
    assert len(previews) == len(PROCESS_PROPOSALS)
    for (code, said), event in zip(PROCESS_PROPOSALS, previews, strict=True):
        shown = "\n".join(line for _, line in event.lines)
        assert said in shown, (code, shown)
        assert (event.status == "incomplete") == ("part of pyaichat itself" in said), (code, event.status)
    told = [m["content"] for m in srv.bodies[-1]["messages"] if m.get("role") == "tool"]
    for (code, said), answer in zip(PROCESS_PROPOSALS, told, strict=True):
        assert told_piece(said) in answer, (code, answer)
    ns = ctrl.runtime.session.namespace
    assert ns["items"] == [1, 2, 3] and "kept" not in ns


def test_piped_the_panel_says_what_the_code_does_to_the_process(srv: ScriptedServer, tmp_path: Path) -> None:
    code = "import signal, httpx\nsignal.alarm(600)\nhttpx.Client.send = lambda self, *a, **k: None"
    shown = _piped(srv, tmp_path, code)
    assert "  sets a timer (SIGALRM in 600 s): when it fires" in shown, shown
    assert "  replaces httpx.Client.send: every later use sees that, which is not previewed" in shown, shown
