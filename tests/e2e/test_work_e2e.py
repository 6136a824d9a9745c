"""A proposal's life and the work that lasts, end to end through the real litellm HTTP path against the
scripted server: the preview before the choice (never sent to the model), /undo, /save as a notebook that
runs in a real kernel, /snapshot and --resume across two processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.assemble import assemble
from pyaichat.capabilities.sandbox.confine import probe
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller, Mode
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

pytestmark = pytest.mark.e2e
WALLED = probe().complete
needs_walls = pytest.mark.skipif(not WALLED, reason="the preview needs the kernel walls (Landlock, seccomp)")


def make_ctrl(srv: ScriptedServer, decision: str = "run", **settings: Any) -> Controller:
    config = Config(
        model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4, **settings
    )
    session = Session(config=config, echo=lambda value: None)
    c = assemble(
        LocalRuntime(session), Recorder(decision), llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01)
    )
    c.set_mode(Mode.ASSISTANT)
    return c


def ns(ctrl: Controller) -> dict[str, Any]:
    return ctrl.runtime.session.namespace


def preview_text(ctrl: Controller) -> str:
    (event,) = ctrl.frontend.of("preview")
    return "\n".join(text for _, text in event.lines)


@needs_walls
def test_the_preview_shows_each_kind_of_effect_and_never_reaches_the_model(srv):
    ctrl = make_ctrl(srv, decision="no")
    ctrl.run_python("import pandas as pd\norders = pd.DataFrame({'id': ['1', '2'], 'total': [9.5, 3.0]})")
    ctrl.run_python("tmp = [1, 2, 3]\nlog = []")
    code = "orders = orders.assign(id=orders['id'].astype(int))\nmerged = orders.copy()\n"
    code += "del tmp\nlog.append('x')"
    srv.tool("propose_code", {"code": code, "explanation": "Fix the ids."}).text("Declined, fine.")
    before = ns(ctrl)["orders"]
    ctrl.ask("fix the ids")
    text = preview_text(ctrl)
    assert "rebinds orders: DataFrame 2 × 2 (id " in text and "→ DataFrame 2 × 2 (id int64" in text
    assert "new merged: DataFrame 2 × 2" in text
    assert "deletes tmp: list" in text
    assert "changes log in place" in text and "cannot take this back" in text
    (event,) = ctrl.frontend.of("preview")
    assert event.status == "previewed" and any(kind == "in_place" for kind, _ in event.lines)
    # the preview ran in a walled copy: nothing in the session changed, and the model saw none of it
    assert ns(ctrl)["orders"] is before and ns(ctrl)["log"] == [] and "merged" not in ns(ctrl)
    sent = json.dumps(srv.bodies)
    assert "Preview" not in sent and "cannot take this back" not in sent and "declined" in sent
    kinds = [e.type for e in ctrl.frontend.events]
    assert kinds.index("approval_required") < kinds.index("preview") < kinds.index("answer")


def test_without_the_walls_the_preview_is_unavailable_and_nothing_runs(srv, tmp_path):
    ctrl = make_ctrl(srv, decision="no", sandbox_isolation="inprocess")
    marker = tmp_path / "ran.txt"
    srv.tool("propose_code", {"code": f"open({str(marker)!r}, 'w').write('ran')"}).text("OK.")
    ctrl.ask("write the marker")
    (event,) = ctrl.frontend.of("preview")
    assert event.status == "unavailable" and "nothing unapproved runs" in preview_text(ctrl)
    assert not marker.exists()
    assert ctrl.frontend.of("approval_required")  # the choice is still offered


@needs_walls
def test_undo_restores_the_old_objects_and_tells_the_model(srv):
    ctrl = make_ctrl(srv)
    ctrl.run_python("df = [3, 1, 2]\nold = 1")
    original = ns(ctrl)["df"]
    srv.tool("propose_code", {"code": "df = sorted(df)\nnew = 5\ndel old"}).text("Sorted.")
    ctrl.ask("sort df")
    assert ns(ctrl)["df"] == [1, 2, 3] and ns(ctrl)["new"] == 5 and "old" not in ns(ctrl)
    dispatch(ctrl, "/undo")
    notice = ctrl.frontend.of("notice")[-1]
    assert notice.level == "success" and "restored df" in notice.text and "removed new" in notice.text
    assert ns(ctrl)["df"] is original and ns(ctrl)["old"] == 1 and "new" not in ns(ctrl)
    dispatch(ctrl, "/undo")
    assert "already undone" in ctrl.frontend.of("notice")[-1].text
    srv.text("Right, df is unsorted again.")
    ctrl.ask("what now?")
    question = srv.bodies[-1]["messages"][-1]["content"]
    assert "The user undid the last approved proposal with /undo" in question


@needs_walls
def test_an_undone_proposal_is_marked_alike_in_every_list_of_inputs(srv):
    """The built-in assistant's picture, get_session_picture over MCP and /history mark it the same way: a
    model reading the inputs never takes the undone change for one that stands."""
    from pyaichat.mcpserve.backend import LocalBackend

    ctrl = make_ctrl(srv)
    ctrl.run_python("level = 1")
    srv.tool("propose_code", {"code": "level = 2"}).text("Raised.")
    ctrl.ask("raise the level")
    ctrl.run_python("seen = level")
    dispatch(ctrl, "/undo")
    assert ns(ctrl)["level"] == 1
    srv.text("The level is 1.")
    ctrl.ask("what is the level?")
    sent = "\n".join(str(m.get("content")) for m in srv.bodies[-1]["messages"])
    assert "  [2] level = 2  [undone with /undo]\n" in sent
    assert "  [3] seen = level\n" in sent  # only the undone input is marked
    ctrl.gate.attach()  # as /mcp on does: outside calls wait for the person's input from here on
    backend = LocalBackend(ctrl.runtime, ctrl.gate)
    agent = backend.clients.seen("k-agent", "mcp test", "http")
    picture = backend.call("get_session_picture", {}, agent)
    assert picture.ok, picture
    picture = picture.text
    assert "  [2] level = 2  [undone with /undo]\n" in picture
    dispatch(ctrl, "/history")
    (page,) = ctrl.frontend.of("page")
    shown = page.sections[0].text.splitlines()
    assert shown[1] == "[2] level = 2  [proposed by the assistant; undone with /undo]"
    assert shown[2] == "[3] seen = level"


@needs_walls
def test_undo_refuses_an_in_place_change_and_changes_nothing(srv):
    ctrl = make_ctrl(srv)
    ctrl.run_python("items = [1, 2]")
    srv.tool("propose_code", {"code": "items.append(3)\ncount = len(items)"}).text("Appended.")
    ctrl.ask("append 3")
    dispatch(ctrl, "/undo")
    notice = ctrl.frontend.of("notice")[-1]
    assert notice.level == "warning" and "in place" in notice.text and "nothing was changed" in notice.text
    assert ns(ctrl)["items"] == [1, 2, 3] and ns(ctrl)["count"] == 3


def test_undo_with_nothing_to_undo(srv):
    ctrl = make_ctrl(srv)
    dispatch(ctrl, "/undo")
    assert "Nothing to undo" in ctrl.frontend.of("notice")[-1].text


def test_save_writes_a_notebook_that_runs_in_a_real_kernel_to_the_same_results(srv, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    ctrl = make_ctrl(srv, sandbox_isolation="inprocess")  # approval runs without a preview
    ctrl.run_python("values = [4, 5, 6]")
    ctrl.run_python("print('sum', sum(values))")
    srv.tool("propose_code", {"code": "mean = sum(values) / len(values)\nmean", "explanation": "Mean."})
    srv.text("The mean is **5.0**.")
    ctrl.ask("what is the mean?")
    ctrl.run_python("mean * 2")
    path = tmp_path / "work.ipynb"
    dispatch(ctrl, f"/save {path}")
    assert ctrl.frontend.of("notice")[-1].level == "success"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [
        "values = [4, 5, 6]",
        "print('sum', sum(values))",
        "mean = sum(values) / len(values)\nmean",
        "mean * 2",
    ]
    assert code[2].metadata["pyaichat"]["model"] == "openai/test"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "what is the mean?" in markdown and "The mean is **5.0**." in markdown
    saved_outputs = [_text(c) for c in code]
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert [_text(c) for c in code] == saved_outputs == ["", "sum 15\n", "5.0", "10.0"]

    script = tmp_path / "work.py"
    dispatch(ctrl, f"/save {script}")
    text = script.read_text()
    assert "# %%" in text and "mean = sum(values) / len(values)" in text
    transcript = tmp_path / "work.md"
    dispatch(ctrl, f"/save {transcript}")
    assert "## Question 1" in transcript.read_text()
    dispatch(ctrl, f"/save {tmp_path / 'work.docx'}")
    assert "use a .ipynb, .py or .md file name" in ctrl.frontend.of("notice")[-1].text


def _text(cell: Any) -> str:
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "execute_result":
            out.append(o.data["text/plain"])
    return "".join(out)


def _piped(args: list[str], text: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def test_resume_in_a_second_process_brings_back_variables_history_and_conversation(srv, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        PYAICHAT_MODEL="openai/test",
        PYAICHAT_API_BASE=srv.base_url,
        PYAICHAT_AUTOSAVE="on",  # piped input keeps nothing by default
        PYAICHAT_AUDIT="false",
        OPENAI_API_KEY="sk-test",
    )
    srv.text("x holds 41.")
    first = _piped([], "x = 41\nhandle = open(__file__ if '__file__' in dir() else 'f', 'w')\n"
                   "/ask what is x?\n/snapshot vars.snap\n", env, tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "Saved 1 variable to" in first.stdout and "Not saved: handle (open file" in first.stdout

    srv.text("You asked about x before; it is 41.")
    second = _piped(["--resume", "vars.snap"], "x + 1\n/history\n/ask what did I ask?\n", env, tmp_path)
    assert second.returncode == 0, second.stderr
    out = second.stdout
    assert "Resumed the session saved" in out and "1 question and 2 inputs" in out
    assert "Loaded 1 variable from" in out and "42" in out
    assert "[1] x = 41" in out and "[3] x + 1" in out  # numbering continues after the old inputs
    messages = srv.bodies[-1]["messages"]
    assert any(m["role"] == "user" and m["content"] == "what is x?" for m in messages)
    assert any(m["role"] == "assistant" and m.get("content") == "x holds 41." for m in messages)


def test_resume_refuses_a_foreign_snapshot_in_one_sentence(srv, tmp_path):
    ctrl = make_ctrl(srv)
    forged = tmp_path / "forged.snapshot"
    forged.write_bytes(b"not a pyaichat snapshot at all")
    dispatch(ctrl, f"/resume {forged}")
    last = ctrl.frontend.of("notice")[-1]
    assert last.level == "warning" and "\n" not in last.text and "nothing was" in last.text.lower()


def test_resume_of_a_saved_notebook_is_refused_before_anything_comes_back(srv, tmp_path):
    """``/resume analysis.ipynb`` said "Resumed the session…" (the conversation came back) and then
    "…nothing was loaded": a file that cannot be a snapshot is refused first, with what to do instead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        PYAICHAT_MODEL="openai/test",
        PYAICHAT_API_BASE=srv.base_url,
        PYAICHAT_AUTOSAVE="on",
        PYAICHAT_AUDIT="false",
        OPENAI_API_KEY="sk-test",
    )
    srv.text("x holds 41.")
    first = _piped([], "x = 41\n/ask what is x?\n/save analysis.ipynb\n", env, tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "notes.txt").write_text("not a snapshot")
    for command in ("/resume analysis.ipynb", "/resume notes.txt", "/resume missing.snap"):
        second = _piped([], f"{command}\n/history\n", env, tmp_path)
        out = second.stdout
        assert "Resumed the session" not in out, out
        assert "Nothing was resumed" in out and "No inputs yet." in out, out
    said = _piped(["--resume", "analysis.py"], "", env, tmp_path).stdout
    assert "analysis.py is a script /save writes" in said and "/resume alone brings back" in said


@needs_walls
def test_an_undone_proposal_is_kept_in_the_notebook_but_skipped_so_it_runs_to_the_sessions_state(
    srv, tmp_path
):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    ctrl = make_ctrl(srv)
    ctrl.run_python("level = 1")
    srv.tool("propose_code", {"code": "level = 2"}).text("Raised.")
    ctrl.ask("raise the level")
    dispatch(ctrl, "/undo")
    ctrl.run_python("level")
    path = tmp_path / "undone.ipynb"
    dispatch(ctrl, f"/save {path}")
    nb = nbformat.read(path, as_version=4)
    undone = next(c for c in nb.cells if c.cell_type == "code" and c.source == "level = 2")
    assert undone.metadata["tags"] == ["skip-execution"]
    assert "restored level" in undone.metadata["pyaichat"]["undone"]
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert last.source == "level" and last.outputs[0]["data"]["text/plain"] == "1"  # as in the session
    script = tmp_path / "undone.py"
    dispatch(ctrl, f"/save {script}")
    assert "\n# level = 2\n" in script.read_text()  # run as a script, the undone line does not run either


def test_an_input_that_used_an_undone_proposal_does_not_stop_the_saved_files(srv, tmp_path):
    """``y = total * 2`` ran while the proposal's ``total`` stood; after /undo, replaying it without the
    proposal raises NameError — the saved script and notebook let it, and run on to the session's state."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    ctrl = make_ctrl(srv)
    ctrl.run_python("prices = [2, 3]")
    srv.tool("propose_code", {"code": "total = sum(prices)"}).text("Summed.")
    ctrl.ask("sum the prices")
    ctrl.run_python("y = total * 2")  # leans on the proposal
    dispatch(ctrl, "/undo")
    ctrl.run_python("z = len(prices)")  # after the undo: stands on its own
    ctrl.run_python("print('z', z, 'total' in globals())")
    script = tmp_path / "work.py"
    dispatch(ctrl, f"/save {script}")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["NameError: name 'total' is not defined", "z 2 False"]
    path = tmp_path / "work.ipynb"
    dispatch(ctrl, f"/save {path}")
    nb = nbformat.read(path, as_version=4)
    tags = {c.source: c.metadata.get("tags", []) for c in nb.cells if c.cell_type == "code"}
    assert tags["y = total * 2"] == ["raises-exception"] and tags["z = len(prices)"] == []
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert last.outputs[0]["text"] == "z 2 False\n"


@needs_walls
def test_an_undo_the_model_was_not_told_of_yet_survives_a_resume(srv):
    first = make_ctrl(srv, autosave="on")
    first.run_python("level = 1")
    srv.tool("propose_code", {"code": "level = 2"}).text("Raised.")
    first.handle("raise the level")
    first.handle("/undo")  # and the session ends before the next question
    first.close()
    second = make_ctrl(srv, autosave="on")
    second.handle("/resume")
    assert "1 question and 2 inputs" in second.frontend.of("notice")[0].text
    srv.text("The level is 1 again.")
    second.handle("what is the level?")
    question = srv.bodies[-1]["messages"][-1]["content"]
    assert "The user undid the last approved proposal with /undo" in question and "restored level" in question


@needs_walls
def test_a_resumed_session_keeps_the_journal_for_history_and_save(srv, tmp_path):
    """--resume brings back /history's proposal marks and /save's record of approved proposals and of
    where each question fell, as the session that made them had them."""
    nbformat = pytest.importorskip("nbformat")
    first = make_ctrl(srv, autosave="on")
    first.run_python("level = 1")
    srv.tool("propose_code", {"code": "level = 2"}).text("Raised.")
    first.handle("raise the level")  # input [2]
    first.handle("/undo")
    srv.tool("propose_code", {"code": "ceiling = 9"}).text("Set.")
    first.handle("set a ceiling")  # input [3]
    first.close()
    second = make_ctrl(srv, autosave="on")
    second.handle("/resume")
    second.handle("/history")
    (page,) = second.frontend.of("page")
    assert page.sections[0].text.splitlines() == [
        "[1] level = 1",
        "[2] level = 2  [proposed by the assistant; undone with /undo]",
        "[3] ceiling = 9  [proposed by the assistant]",
    ]
    second.run_python("level")  # [4], in the resumed session
    path = tmp_path / "resumed.ipynb"
    second.handle(f"/save {path}")
    nb = nbformat.read(path, as_version=4)
    code = {c.source: c.metadata for c in nb.cells if c.cell_type == "code"}
    assert code["level = 2"]["tags"] == ["skip-execution"] and "undone" in code["level = 2"]["pyaichat"]
    assert code["ceiling = 9"]["pyaichat"]["source"] == "assistant" and "pyaichat" not in code["level"]
    questions = [c.source for c in nb.cells if c.cell_type == "markdown" and "raise the level" in c.source]
    assert len(questions) == 1  # the first session's question, in its place
    # a session resumed after its own inputs keeps neither the old inputs nor their records
    third = make_ctrl(srv, autosave="off")
    third.run_python("fresh = 1")
    third.handle("/resume")
    assert third.journal.approved == [] and third.journal.turns == []


@needs_walls
def test_piped_a_slow_proposal_says_what_happened_in_plain_words(srv, tmp_path):
    """Piped, after a first question (litellm's logging threads are running, and they are not the user's):
    the preview says the code was stopped at its limit and nothing else; no "not timed", no threads."""
    srv.text("Hello.")
    srv.tool(
        "propose_code", {"code": "import time; time.sleep(8); y = 1", "explanation": "Wait, then set y."}
    )
    srv.text("Not run.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(
        PYAICHAT_MODEL="openai/test",
        PYAICHAT_API_BASE=srv.base_url,
        OPENAI_API_KEY="sk-test",
        PYAICHAT_TOOL_TIMEOUT="1",
        XDG_STATE_HOME=str(tmp_path / "state"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    out = subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input="/ask hello\n/ask wait and set y\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    preview = out.stdout.split("import time; time.sleep(8); y = 1\n", 1)[1].split("Not run.")[0]
    assert preview == (
        "Preview (stopped after 0.8 s on a walled copy of your session; nothing has changed yet):\n"
        "  The code was still running when the preview's 0.8 s ran out, so it was stopped there and what it "
        "would change is not known; running it for real has no such limit.\n"
    ), out.stdout
