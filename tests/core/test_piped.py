"""Piped mode and the command line, through a real ``python -m pyaichat`` subprocess where it matters."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyaichat.assemble import assemble
from pyaichat.controller import Controller, Mode
from pyaichat.piped import PlainFrontEnd, iter_inputs
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session
from timeouts import HANG_GUARD


def run_cli(stdin: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=HANG_GUARD,
    )


def controller() -> tuple[Controller, io.StringIO]:
    out = io.StringIO()
    runtime = LocalRuntime(Session())
    return assemble(runtime, PlainFrontEnd(out)), out


def test_piped_prints_echoed_value_and_exits_zero() -> None:
    proc = run_cli("x = 41\nx + 1\n")
    assert proc.returncode == 0
    assert proc.stdout == "42\n"
    assert proc.stderr == ""


def test_piped_blocks_end_with_blank_line_like_python_i() -> None:
    src = "total = 0\nfor i in range(3):\n    total += i\n\ntotal\ndef f(a):\n    return a + 1\n\nf(total)\n"
    proc = run_cli(src)
    assert proc.stdout == "3\n4\n"


def test_piped_output_has_no_colour_codes_and_errors_go_to_stderr() -> None:
    proc = run_cli("1/0\n/help\nprint('still alive')\n")
    assert "\x1b[" not in proc.stdout + proc.stderr
    assert "ZeroDivisionError: division by zero" in proc.stderr
    assert "still alive" in proc.stdout
    assert proc.returncode == 0


def test_piped_system_exit_uses_its_code() -> None:
    proc = run_cli("print('a')\nraise SystemExit(4)\nprint('never')\n")
    assert proc.returncode == 4
    assert proc.stdout == "a\n"


def test_piped_question_without_model_is_one_sentence_and_no_traceback() -> None:
    proc = run_cli("x = 1\n/ask what is x?\n/ai\nwhat is x?\n/py\nx\n")
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("1")
    assert proc.returncode == 0


def test_help_names_the_mcp_command_too() -> None:
    """``pyaichat mcp`` is a command of its own (the stdio server an agent starts): ``--help`` says so."""
    proc = run_cli("", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "pyaichat mcp [--existing FILE | --kernel NAME | --server URL]" in text
    assert "pyaichat mcp --help says more" in text


def test_version_flag() -> None:
    proc = run_cli("", "--version")
    assert proc.returncode == 0 and proc.stdout.strip().startswith("pyaichat 0.")


def test_bad_config_exits_2_with_one_clear_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('max_steps = "lots"\n')
    proc = run_cli("x = 1\n", "--config", str(cfg))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cfg) in lines[0] and "max_steps" in lines[0]


def test_bad_env_value_exits_2() -> None:
    proc = run_cli("", env={"PYAICHAT_MAX_STEPS": "zero"})
    assert proc.returncode == 2 and "PYAICHAT_MAX_STEPS" in proc.stderr


def test_a_mistyped_variable_is_said_in_one_line_and_the_session_goes_on() -> None:
    proc = run_cli("x = 41\nx + 1\n", env={"PYAICHAT_MAX_STEP": "3"})
    assert proc.returncode == 0 and proc.stdout == "42\n"
    assert proc.stderr == (
        "pyaichat: PYAICHAT_MAX_STEP is not a setting and is ignored (did you mean PYAICHAT_MAX_STEPS?)\n"
    )


@pytest.mark.parametrize(
    "module", ["litellm", "rich", "prompt_toolkit", "pandas", "numpy", "IPython", "openai"]
)
def test_piped_start_does_not_import_heavy_modules(module: str) -> None:
    code = (
        "import sys, io\n"
        "sys.stdin = io.StringIO('x = 1\\nx\\n/help\\n/history\\n')\n"
        "from pyaichat.cli import main\n"
        "main([])\n"
        f"print({module!r} in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.stdout.strip().splitlines()[-1] == "False", proc.stdout + proc.stderr


def test_iter_inputs_groups_like_the_interactive_interpreter() -> None:
    ctrl, _ = controller()
    lines = [
        "a = 1\n",
        "if a:\n",
        "    b = 2\n",
        "else:\n",
        "    b = 3\n",
        "\n",
        "b\n",
        "/help\n",
        "x = [\n",
        "1]\n",
    ]
    assert list(iter_inputs(lines, ctrl)) == [
        "a = 1",
        "if a:\n    b = 2\nelse:\n    b = 3",
        "b",
        "/help",
        "x = [\n1]",
    ]


def test_iter_inputs_takes_a_cell_magic_up_to_a_blank_line() -> None:
    ctrl, _ = controller()
    lines = ["%%bash\n", "echo hi\n", "ls -l | wc -l\n", "\n", "x = 1\n", "%%time\n", "y = 2\n"]
    assert list(iter_inputs(lines, ctrl)) == ["%%bash\necho hi\nls -l | wc -l", "x = 1", "%%time\ny = 2"]


def test_iter_inputs_ends_block_at_dedented_line_without_blank() -> None:
    ctrl, _ = controller()
    lines = ["def f():\n", "    return 1\n", "f()\n"]
    assert list(iter_inputs(lines, ctrl)) == ["def f():\n    return 1", "f()"]


def test_iter_inputs_treats_lines_as_questions_in_assistant_mode() -> None:
    ctrl, _ = controller()
    ctrl.set_mode(Mode.ASSISTANT)
    assert list(iter_inputs(["why is df empty?\n", "if it is:\n"], ctrl)) == ["why is df empty?", "if it is:"]


def test_unknown_command_lists_known_ones_on_one_line() -> None:
    ctrl, out = controller()
    ctrl.handle("/frobnicate now")
    text = out.getvalue().strip()
    assert len(text.splitlines()) == 1
    assert text.startswith("Unknown command /frobnicate.") and "/help" in text and "/py" in text


def test_help_lists_only_registered_commands() -> None:
    from pyaichat.commands import all_commands, names

    ctrl, out = controller()
    ctrl.handle("/help all")
    listed = [line.split()[0] for line in out.getvalue().splitlines() if line.startswith("  /")]
    here = [c.name for c in all_commands() if c.is_for("piped")]
    assert sorted(c.lstrip("/") for c in listed) == sorted(here)
    assert "more" not in here and "more" in names()  # the pager's command is a terminal's
    for required in ("py", "ai", "ask", "help", "model", "history"):
        assert required in names()


def test_mode_commands_and_model_switch() -> None:
    ctrl, out = controller()
    ctrl.handle("/ai")
    assert ctrl.mode is Mode.ASSISTANT
    ctrl.handle("/py")
    assert ctrl.mode is Mode.PYTHON
    ctrl.handle("/model")
    assert "No model is configured" in out.getvalue()
    ctrl.handle("/model openai/gpt-4o-mini")
    assert ctrl.config.model == "openai/gpt-4o-mini"
    ctrl.handle("/model")
    said = out.getvalue().rstrip()
    assert said.endswith("Model: openai/gpt-4o-mini, at openai's own address (api.openai.com).")


def test_history_command_shows_numbered_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    ctrl, out = controller()
    ctrl.handle("x = 2")
    ctrl.handle("x * 21")
    ctrl.handle("/history")
    assert "[1] x = 2" in out.getvalue() and "[2] x * 21\n      → 42" in out.getvalue()
    ctrl.handle("/history lots")
    assert "Usage: /history [n]" in out.getvalue()


def test_a_saved_script_runs_past_an_input_that_did_not_parse(tmp_path: Path) -> None:
    script = tmp_path / "analysis.py"
    out = run_cli(f"x = = 2\nrows = [1, 2, 3]\nrows[5]\ntotal = sum(rows)\n/save {script}\n")
    assert out.returncode == 0 and script.is_file(), out.stderr
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=HANG_GUARD, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr  # it used to stop at once: SyntaxError on "x = = 2"
    assert done.stdout.strip() == "IndexError: list index out of range"


def test_the_first_notebook_save_says_it_is_writing_before_nbformat_loads(tmp_path: Path) -> None:
    """Loading nbformat (its schema validator) took 2–3 s with nothing on the screen; the second save is
    quick and says nothing first."""
    first, second = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    out = run_cli(f"x = 1\n/save {first}\n/save {second}\n")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"Writing {first}: the first notebook loads nbformat, a few seconds…"
    assert lines[1].startswith(f"Wrote 2 cells to {first}")
    assert lines[2].startswith(f"Wrote 2 cells to {second}")
    assert len(lines) == 3


HIDE_PERSIST = (
    "import sys; sys.modules['cloudpickle'] = sys.modules['nbformat'] = None\n"
    "from pyaichat.cli import main\nsys.exit(main([]))\n"
)


def test_without_the_persist_extra_the_hints_say_the_command_that_works_here(tmp_path: Path) -> None:
    """This checkout is installed from its clone: the hint installs the clone's extra, never another
    pyaichat from the package index."""
    proc = subprocess.run(
        [sys.executable, "-c", HIDE_PERSIST],
        input=f"x = 1\n/snapshot {tmp_path}/s.snapshot\n/save {tmp_path}/s.ipynb\nprint('still here')\n",
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
        timeout=HANG_GUARD,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stdout + proc.stderr
    snapshot, notebook, still = proc.stdout.splitlines()
    assert (
        snapshot.startswith("Snapshots need the cloudpickle package: ") and " -m pip install -e '" in snapshot
    )
    assert notebook.startswith("Saving a notebook needs nbformat: ") and " -m pip install -e '" in notebook
    assert "pyaichat[persist]" not in proc.stdout and still == "still here"


def test_mistyped_command_gets_did_you_mean_for_every_command() -> None:
    """``/mpc`` (and a slip of any other command) names the command the person probably meant."""
    from pyaichat.commands import did_you_mean, names

    for slip, meant in [("mpc", "mcp"), ("tols", "tools"), ("hlep", "help"), ("undoo", "undo")]:
        ctrl, out = controller()
        ctrl.handle(f"/{slip}")
        text = out.getvalue().strip()
        assert len(text.splitlines()) == 1
        assert text.startswith(f"Unknown command /{slip}; did you mean /{meant}")
    for name in names():  # every command: a transposed pair of letters still finds it
        if len(name) >= 3:
            slip = name[0] + name[2] + name[1] + name[3:]
            if slip != name:
                assert name in did_you_mean(slip), (slip, name)
    assert did_you_mean("zzzzzzzz") == []
