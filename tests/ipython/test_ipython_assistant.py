"""``%ai`` on a real ``InteractiveShell`` against the scripted OpenAI-compatible server (real litellm)."""

from __future__ import annotations

import gc
import json

import pytest
from ipy_helpers import needs_assistant, run
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

from pyaichat.controller import Mode
from pyaichat.ipython import extension

pytestmark = needs_assistant


def flat(text: str) -> str:
    return " ".join(text.split())


def system_text(body: dict) -> str:
    # the system prompt and the session picture (which travels with the question, after the cached prefix)
    return "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] in ("system", "user"))


@pytest.fixture
def aip(ip, scripted):
    run(ip, "%load_ext pyaichat")
    return ip


def test_answer_about_a_variable_defined_with_run_cell(aip, scripted, capsys):
    run(aip, "sales = {'q1': 10, 'q2': 0}")
    scripted.tool("get_repr", {"expr": "sales"})
    scripted.text("`q2` is **0** in `sales`.")
    result = run(aip, "%ai why is q2 zero?")
    assert result.success, result.error_in_exec
    out = flat(capsys.readouterr().out)
    assert "q2 is 0 in sales." in out
    first, second = scripted.bodies
    assert first["model"] == "test"
    assert "why is q2 zero?" in json.dumps(first["messages"][-1])
    assert "sales" in system_text(first)
    tool_reply = [m for m in second["messages"] if m["role"] == "tool"]
    assert "'q2': 0" in tool_reply[0]["content"]


def test_last_exception_of_a_failing_cell_reaches_the_model(aip, scripted):
    failed = run(aip, "words = ['a', 'b']\ntotal = sum(words)")
    assert isinstance(failed.error_in_exec, TypeError)
    scripted.text("You cannot sum strings.")
    run(aip, "%ai why did that fail?")
    sent = system_text(scripted.bodies[0])
    assert "TypeError: unsupported operand type(s) for +: 'int' and 'str'" in sent
    assert "sum(words)" in sent


def test_a_proposal_goes_into_the_next_input_and_is_not_run(aip, scripted, capsys):
    run(aip, "sales = {'q2': 0}")
    ext = extension.get(aip)
    ext.controller.set_mode(Mode.ASSISTANT)
    scripted.tool("propose_code", {"code": "sales['q2'] = 5", "explanation": "Fill the gap."})
    scripted.text("Done.")
    run(aip, "%ai set q2 to 5")
    assert aip.rl_next_input == "sales['q2'] = 5"
    assert aip.user_ns["sales"] == {"q2": 0}  # proposed, never run
    assert ext.controller.mode is Mode.PYTHON  # the prefilled input is code, not a question
    out = flat(capsys.readouterr().out)
    assert "Proposed code (not run yet)" in out and "sales['q2'] = 5" in out


def test_options_apply_to_one_question_only(aip, scripted, monkeypatch):
    ext = extension.get(aip)
    ext.controller.settings.replace(ext.controller.config.replace(model=None))
    scripted.text("first")
    run(aip, "%ai --model openai/other --max-steps 2 hello")
    assert scripted.bodies[0]["model"] == "other"
    assert (ext.controller.config.model, ext.controller.config.max_steps) == (None, 8)


def test_cell_magic_question(aip, scripted, capsys):
    scripted.text("Two lines received.")
    run(aip, "%%ai\nfirst line\nsecond line?\n")
    assert "first line\\nsecond line?" in json.dumps(scripted.bodies[0]["messages"][-1])
    assert "Two lines received." in capsys.readouterr().out


def test_provider_error_is_one_line_not_a_traceback(aip, scripted, capsys):
    scripted.fault("401")
    result = run(aip, "%ai hello")
    captured = capsys.readouterr()
    assert result.success
    assert "Error: " in captured.out and "API key" in captured.out
    assert "Traceback" not in captured.out + captured.err


def test_questions_are_not_recorded_as_inputs(aip, scripted):
    scripted.text("hi")
    run(aip, "a = 1")
    run(aip, "%ai hello?")
    assert [e.source for e in extension.get(aip).session.history] == ["a = 1"]


class ZMQInteractiveShell(InteractiveShell):
    """Stands in for ipykernel's shell: the extension tells Jupyter apart by this class name."""


def test_jupyter_shows_the_answer_as_markdown(new_shell, scripted, capsys):
    shell = new_shell(ZMQInteractiveShell)
    shell.display_pub = CapturingDisplayPublisher()
    run(shell, "%load_ext pyaichat")
    assert extension.get(shell).frontend.jupyter
    scripted.text("The answer is **42**.")
    run(shell, "%ai what is the answer?")
    markdown = [o for o in shell.display_pub.outputs if "text/markdown" in o["data"]]
    assert markdown, shell.display_pub.outputs
    assert markdown[-1]["data"]["text/markdown"] == "The answer is **42**."
    ids = {(o.get("transient") or {}).get("display_id") for o in markdown}
    assert len(ids) == 1 and None not in ids  # one display area, updated in place while streaming
    assert "The answer is" not in capsys.readouterr().out  # not printed a second time as text


def test_jupyter_proposal_becomes_the_next_cell(new_shell, scripted, capsys):
    shell = new_shell(ZMQInteractiveShell)
    shell.display_pub = CapturingDisplayPublisher()
    run(shell, "%load_ext pyaichat")
    scripted.tool("propose_code", {"code": "x = 1", "explanation": "Define x."})
    scripted.text("ok")
    run(shell, "%ai define x")
    assert shell.rl_next_input == "x = 1"
    shown = "\n".join(o["data"].get("text/plain", "") for o in shell.display_pub.outputs)
    assert "Proposed code (not run yet)\nDefine x." in shown
    # the code is in the new cell: not shown again above it, nor in a ✓ propose_code line
    assert "x = 1" not in shown and "propose_code" not in capsys.readouterr().out
    assert "x" not in shell.user_ns


def test_the_preview_shows_before_the_proposal_goes_into_the_next_input(aip, scripted, capsys):
    from pyaichat.capabilities.sandbox.confine import probe

    run(aip, "sales = {'q2': 0}\nrows = [1]")
    extension.get(aip).controller.set_mode(Mode.ASSISTANT)
    scripted.tool("propose_code", {"code": "rows = rows + [2]\nprint('two rows')", "explanation": "Add."})
    scripted.text("Done.")
    run(aip, "%ai add a row")
    out = capsys.readouterr().out
    if probe().complete:
        assert "rebinds rows: list of 1 item → list of 2 items" in out and "two rows" in out, out
    else:
        assert "No preview" in out
    assert aip.user_ns["rows"] == [1]
    assert "rebinds rows" not in json.dumps(scripted.bodies)


def test_running_the_proposed_cell_approves_it_and_undo_takes_it_back(aip, scripted, capsys, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    run(aip, "prices = [3, 1, 2]")
    original = aip.user_ns["prices"]
    ext = extension.get(aip)
    ext.controller.set_mode(Mode.ASSISTANT)
    scripted.tool("propose_code", {"code": "prices = sorted(prices)\nprint(prices)", "explanation": "Sort."})
    scripted.text("Run the cell I put in your input.")
    run(aip, "%ai sort the prices")
    assert run(aip, aip.rl_next_input).success  # the user runs the proposed cell as it is
    assert aip.user_ns["prices"] == [1, 2, 3]
    run(aip, "%ai /undo")
    assert "restored prices" in capsys.readouterr().out
    assert aip.user_ns["prices"] is original
    path = tmp_path / "ipy.ipynb"
    run(aip, f"%ai /save {path}")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    sorted_cell = next(c for c in code if c.source.startswith("prices = sorted"))
    assert sorted_cell.metadata["pyaichat"]["source"] == "assistant"
    assert sorted_cell.outputs[0]["text"] == "[1, 2, 3]\n"  # the cell's own printed output, captured
    assert any("sort the prices" in c.source for c in nb.cells if c.cell_type == "markdown")


def test_an_edited_proposal_is_the_users_own_code_and_not_undone(aip, scripted, capsys):
    run(aip, "n = 1")
    ext = extension.get(aip)
    ext.controller.set_mode(Mode.ASSISTANT)
    scripted.tool("propose_code", {"code": "n = 2"}).text("Put it in your input.")
    run(aip, "%ai make n two")
    run(aip, "n = 3")  # the user typed something else
    run(aip, "%ai /undo")
    out = " ".join(capsys.readouterr().out.split())
    assert "Nothing was undone: you edited the assistant's last proposal before running it" in out
    assert "is your own code, which %ai /undo does not take back." in out and aip.user_ns["n"] == 3


def test_snapshot_and_resume_in_ipython(aip, scripted, capsys, tmp_path):
    pytest.importorskip("cloudpickle")
    run(aip, "table = {'a': 1}")
    path = tmp_path / "ipy.snap"
    run(aip, f"%ai /snapshot {path}")
    assert "Saved 1 variable" in capsys.readouterr().out
    del aip.user_ns["table"]
    run(aip, f"%ai /resume {path}")
    assert "Loaded 1 variable" in capsys.readouterr().out and aip.user_ns["table"] == {"a": 1}


def test_a_proposal_with_a_magic_previews_as_ipython_would_run_it(aip, scripted, capsys):
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    extension.get(aip).controller.set_mode(Mode.ASSISTANT)
    scripted.tool("propose_code", {"code": "%time total = 6 * 7"}).text("Put it in your input.")
    run(aip, "%ai time it")
    out = capsys.readouterr().out
    assert "new total: int" in out and "SyntaxError" not in out, out


def test_the_reviews_breaks_are_refused_for_the_assistant_in_ipython(aip, scripted, tmp_path):
    """``%load_ext pyaichat``: the model asks for each write and each road to a secret of
    ``tests/readonly_breaks.py``; what goes back to it refuses or hides, and the shell's namespace and the
    folder are as they were."""
    from readonly_breaks import (
        FAILING_INPUT,
        ISSUE_44_CALLS,
        SECRET_ROADS,
        WRITES,
        issue_44_refusals,
        leaked,
        setup_source,
        state_source,
    )

    watch = tmp_path / "watched"
    watch.mkdir()
    assert run(aip, setup_source(str(watch))).success
    run(aip, FAILING_INPUT)
    before = eval(state_source(), aip.user_ns)
    calls = [("eval_expr", {"expr": expr}) for expr in WRITES] + SECRET_ROADS + [("get_last_exception", {})]
    scripted.tools(*calls, *ISSUE_44_CALLS).text("Nothing could be changed or read there.")
    run(aip, "%ai try them all")
    gc.collect()  # a copy of the session's object made here would be finalised by now
    assert eval(state_source(), aip.user_ns) == before
    assert list(watch.iterdir()) == []
    first, second = scripted.bodies
    assert leaked(system_text(first)) is None  # the picture, with the failing input's message
    replies = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert len(replies) == len(calls) + len(ISSUE_44_CALLS)
    assert all(leaked(reply) is None for reply in replies), replies
    refusals = replies[: len(WRITES)]
    assert all("would change the session's" in r or "cannot write to a file" in r for r in refusals), refusals
    assert "invalid literal for int()" in replies[len(calls) - 1]
    assert issue_44_refusals(replies[len(calls) :]), replies


def test_the_walled_child_holds_no_secret_for_the_assistant_in_ipython(aip, scripted, tmp_path):
    """``%load_ext pyaichat``: the model asks for each road of ``tests/readonly_breaks.py`` that the walled
    child computes — a secret reversed, in hex, a closure or a default returned by the person's function —
    and for the oracles; what goes back holds no secret nor a transformation of one, and every oracle is
    False."""
    from readonly_breaks import (
        CHILD_ORACLES,
        CHILD_ROADS,
        CHILD_SETUP,
        answered_false,
        leaked_transformed,
        setup_source,
    )

    assert run(aip, setup_source(str(tmp_path)) + CHILD_SETUP).success
    scripted.tools(*CHILD_ROADS, *CHILD_ORACLES).text("Nothing of the secrets came back.")
    run(aip, "%ai read them all")
    replies = [m["content"] for m in scripted.bodies[1]["messages"] if m["role"] == "tool"]
    assert len(replies) == len(CHILD_ROADS) + len(CHILD_ORACLES)
    assert all(leaked_transformed(reply) is None for reply in replies), replies
    assert all(answered_false(reply) for reply in replies[len(CHILD_ROADS) :]), replies
    assert aip.user_ns["reveal"]().startswith("closure-pw")  # the person's own session keeps them


def test_the_preview_says_what_a_proposal_does_to_the_whole_process(aip, scripted, capsys):
    """``%ai`` in IPython: the review's six proposals (``tests/readonly_breaks.py``), one per question (a
    proposal goes into the next input), each get their line on the panel — pyaichat's masking turned off as
    tampering, the at-fork function named, the patch of the assistant's HTTP client."""
    from pyaichat.capabilities.sandbox.confine import probe
    from readonly_breaks import PROCESS_PROPOSALS

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    import httpx  # noqa: F401  (loaded in the process, as the assistant loads it)

    run(aip, "items = [1]")
    controller = extension.get(aip).controller
    for code, said in PROCESS_PROPOSALS:
        controller.set_mode(Mode.ASSISTANT)
        scripted.tool("propose_code", {"code": code})  # placed in the next input: the turn ends there
        run(aip, "%ai change the process")
        out = flat(capsys.readouterr().out)  # the terminal wraps long lines
        assert said in out, (code, out)
    assert aip.user_ns["items"] == [1] and "kept" not in aip.user_ns


def test_the_preview_says_what_it_cannot_see(aip, scripted, capsys):
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    run(aip, "import json\nrows = [1]")
    extension.get(aip).controller.set_mode(Mode.ASSISTANT)
    code = "import os\nos.environ['IPY_MODE'] = 'fast'\njson.dumps = lambda *a, **k: '{}'\nrows = rows + [2]"
    scripted.tool("propose_code", {"code": code, "explanation": "Add."}).text("Done.")
    run(aip, "%ai add a row")
    out = flat(capsys.readouterr().out)  # the terminal wraps long lines
    assert "Incomplete preview (ran on a walled copy" in out, out
    assert (
        "This code replaces json.dumps, part of Python itself; its effects cannot be previewed — read it "
        "before you run it. rebinds rows: list of 1 item → list of 2 items" in out
    ), out
    assert "sets the environment variable IPY_MODE: what that changes is not previewed" in out
    assert aip.user_ns["rows"] == [1] and json.dumps([1]) == "[1]"
