"""The REPL loop: it survives everything but SystemExit, keeps history, and asks before running proposals."""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import pytest
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import ColorDepth, DummyOutput
from repl_keyseq import CTRL_C, CTRL_D

from pyaichat.agent.events import ApprovalRequiredEvent
from pyaichat.configuration.config import Config
from pyaichat.controller import Mode
from pyaichat.paths import state_dir
from pyaichat.proposals import Proposal
from pyaichat.repl.frontend import Repl, make_repl
from pyaichat.repl.history import make_history
from pyaichat.repl.prompt_session import prompt_message, toolbar
from pyaichat.repl.questions import ask_decision
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


def fragments_text(formatted) -> str:
    return "".join(text for _, text, *_ in formatted)


def test_loop_runs_code_and_exits_zero_on_ctrl_d(harness, capsys):
    harness.send(f"x = 41\rx + 1\r{CTRL_D}")
    assert harness.repl.run() == 0
    assert harness.namespace["x"] == 41
    assert capsys.readouterr().out == "42\n"


def test_ctrl_d_on_a_non_empty_line_does_not_exit(harness):
    harness.send(f"ab\x02{CTRL_D}\r")  # Ctrl-B moves left; Ctrl-D then deletes the "b"
    assert harness.repl.read() == "a"


def test_ctrl_c_at_the_prompt_clears_the_buffer_and_keeps_going(harness):
    harness.send(f"x = 'typed but dropped'{CTRL_C}y = 2\r{CTRL_D}")
    assert harness.repl.run() == 0
    assert "x" not in harness.namespace and harness.namespace["y"] == 2
    assert [e.source for e in harness.ctrl.runtime.history] == ["y = 2"]


def test_system_exit_from_user_code_propagates(harness):
    harness.send("raise SystemExit(3)\r")
    with pytest.raises(SystemExit) as info:
        harness.repl.run()
    assert info.value.code == 3


def test_ctrl_c_during_user_code_keeps_the_namespace(harness, capsys):
    harness.send(f"x = 1\rraise KeyboardInterrupt\rx + 1\r{CTRL_D}")
    assert harness.repl.run() == 0
    captured = capsys.readouterr()
    assert "KeyboardInterrupt" in captured.err and captured.out == "2\n"


def test_ctrl_c_during_an_answer_returns_to_the_prompt(harness, monkeypatch):
    def interrupted_answer(question: str) -> None:
        from pyaichat.agent.events import AnswerChunkEvent

        harness.ctrl.emit(AnswerChunkEvent(text="Partial answer"))
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.ctrl, "ask", interrupted_answer)
    harness.send(f"\twhy?\r\tz = 5\r{CTRL_D}")
    assert harness.repl.run() == 0
    assert harness.namespace["z"] == 5
    assert "Partial answer" in harness.output() and "Interrupted." in harness.output()


def test_an_internal_error_prints_one_line_and_the_loop_continues(harness, monkeypatch):
    real_handle = harness.ctrl.handle

    def flaky(text: str) -> None:
        if text == "boom":
            raise RuntimeError("something inside pyaichat broke")
        real_handle(text)

    monkeypatch.setattr(harness.ctrl, "handle", flaky)
    harness.send(f"boom\rok = True\r{CTRL_D}")
    assert harness.repl.run() == 0
    assert harness.namespace["ok"] is True
    out = " ".join(harness.output().split())  # rich wraps long lines at the console width
    assert out == (
        "Error: pyaichat hit an internal error (RuntimeError: something inside pyaichat broke); "
        "your session is intact."
    )


def test_a_fault_in_the_prompt_itself_is_reported_and_the_loop_continues(harness, monkeypatch):
    outcomes = iter([RuntimeError("renderer broke"), "ok = 1", EOFError()])

    def flaky_read() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(harness.repl, "read", flaky_read)
    assert harness.repl.run() == 0
    assert harness.namespace["ok"] == 1
    assert "internal error (RuntimeError: renderer broke)" in " ".join(harness.output().split())


def test_question_without_assistant_gives_one_sentence(harness):
    harness.send(f"\twhy is x empty?\r{CTRL_D}")
    assert harness.repl.run() == 0
    out = " ".join(harness.output().split())
    assert out.startswith("Error: ") and out.count("Error") == 1 and out.endswith(".")
    assert "Traceback" not in out


def test_slash_commands_work_in_both_modes(harness):
    harness.send(f"/ai\r/model\r/py\r{CTRL_D}")
    assert harness.repl.run() == 0
    assert harness.ctrl.mode is Mode.PYTHON
    assert "No model is configured" in harness.output()


# -- approval ----
PROPOSAL = Proposal.of_code("df = df.dropna()", "Drop the empty rows.", call_id="c1")


@pytest.mark.parametrize(
    ("keys", "decision"),
    [("r", "run"), ("y", "run"), ("xe", "edit"), ("n", "no"), ("\x04", "no")],
)
def test_ask_decision_keys(keys, decision):
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        assert ask_decision(input=pipe, output=DummyOutput()) == decision


def test_ctrl_c_at_the_decision_declines_and_stops_what_asked():
    """Ctrl-C is "no" on screen, and it stops the turn that asked (a ``KeyboardInterrupt``), as Ctrl-C
    stops an answer: the model is not asked again."""
    with create_pipe_input() as pipe:
        pipe.send_text(CTRL_C)
        with pytest.raises(KeyboardInterrupt):
            ask_decision(input=pipe, output=DummyOutput())


def test_edit_prefills_the_next_python_prompt(harness):
    harness.ctrl.set_mode(Mode.ASSISTANT)
    harness.send("e")
    proposal = Proposal.of_code("df = df.dropna()", "Drop the empty rows.")
    assert harness.ctrl.proposals.decide(proposal).status == "placed"
    assert "Drop the empty rows." in harness.output() and "df = df.dropna()" in harness.output()
    assert harness.ctrl.mode is Mode.PYTHON
    assert harness.read("\r") == "df = df.dropna()"


def test_decide_shows_an_already_emitted_proposal_once(harness):
    harness.repl.frontend.emit(ApprovalRequiredEvent(proposal=PROPOSAL))
    harness.send("n")
    assert harness.repl.frontend.decide(PROPOSAL) == "no"
    assert harness.output().count("df = df.dropna()") == 1


# -- prompt, toolbar, config ----
def test_prompt_and_toolbar_show_mode_and_model(harness):
    assert fragments_text(prompt_message(harness.ctrl)) == ">>> "
    assert "Python" in fragments_text(toolbar(harness.ctrl))
    assert "no model" in fragments_text(toolbar(harness.ctrl))
    harness.ctrl.toggle_mode()
    harness.ctrl.settings.replace(harness.ctrl.config.replace(model="ollama/qwen2.5-coder"))
    assert fragments_text(prompt_message(harness.ctrl)) == "ai> "
    bar = fragments_text(toolbar(harness.ctrl))
    assert "Assistant" in bar and "ollama/qwen2.5-coder" in bar


def repl_over(config: Config, pipe) -> Repl:
    runtime = LocalRuntime(Session(config=config))
    return make_repl(
        runtime,
        input=pipe,
        output=DummyOutput(),
        history=InMemoryHistory(),
    )


def test_no_color_and_vi_mode_follow_the_config():
    with create_pipe_input() as pipe:
        plain = repl_over(Config(color=False, editing_mode="vi"), pipe)
        assert plain.prompt.color_depth == ColorDepth.DEPTH_1_BIT
        assert plain.prompt.editing_mode == EditingMode.VI
        default = repl_over(Config(), pipe)
        assert default.prompt.color_depth is None
        assert default.prompt.editing_mode == EditingMode.EMACS


@pytest.mark.parametrize("mode", ["vi", "emacs"])
def test_the_editing_mode_edits_the_line(mode: str) -> None:
    with create_pipe_input() as pipe:
        repl = repl_over(Config(editing_mode=mode), pipe)
        if mode == "vi":  # insert "hello", Esc to normal mode, 0 to the line start, x deletes the "h"
            pipe.send_text("hello\x1b0x\r")
        else:  # Emacs: Ctrl-A to the line start, Ctrl-D deletes the "h"
            pipe.send_text("hello\x01\x04\r")
        assert repl.read() == "ello"


def repl_with_history_file(pipe) -> Repl:
    """A REPL as the command line makes it: its history in the state directory."""
    return make_repl(LocalRuntime(Session()), input=pipe, output=DummyOutput())


def test_history_is_persisted_in_the_state_directory():
    with create_pipe_input() as pipe:
        repl = repl_with_history_file(pipe)
        pipe.send_text(f"value = 7\r{CTRL_D}")
        assert repl.run() == 0
    assert "value = 7" in (state_dir() / "history").read_text()


def test_history_file_is_private_and_masks_secrets_while_recall_keeps_the_real_text():
    typed = 'api_key = "sk-live-abcdefghijklmnopqrstuvwxyz0123"'
    with create_pipe_input() as pipe:
        repl = repl_with_history_file(pipe)
        pipe.send_text(f"{typed}\r")
        assert repl.read() == typed
        pipe.send_text("\x1b[A\r")  # up-arrow, Enter: the same session recalls what was typed
        assert repl.read() == typed
    path = state_dir() / "history"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    on_disk = path.read_text()
    assert "sk-live" not in on_disk and "abcdefghijklmnop" not in on_disk
    assert "api_key = " in on_disk and "<redacted" in on_disk


def test_an_existing_world_readable_history_is_made_private(tmp_path):
    path = state_dir() / "history"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n# 2025-01-01 00:00:00.000000\n+x = 1\n")
    path.chmod(0o644)
    history = make_history(str)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(history.load_history_strings()) == ["x = 1"]


def test_history_falls_back_to_memory_when_state_dir_cannot_be_created(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    assert type(make_history(str)).__name__ == "InMemoryHistory"


def loaded_after(statement: str, modules: set[str]) -> list[str]:
    code = f"import sys; {statement}; print(sorted({modules!r} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return eval(out)


def test_repl_entry_point_imports_nothing_heavy_before_the_first_prompt():
    heavy = {"prompt_toolkit", "rich", "litellm", "pygments"}
    assert loaded_after("import pyaichat.repl.app", heavy) == []
    assert loaded_after("import pyaichat.repl.frontend", heavy) == ["prompt_toolkit"]


def read_available(fd: int) -> bytes:
    """Everything that arrives on ``fd`` until it stays quiet (a pty delivers bytes asynchronously)."""
    import os
    import select

    data = b""
    while select.select([fd], [], [], 0.2)[0]:
        chunk = os.read(fd, 1024)
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals only")
def test_early_prompt_draws_the_prompt_holds_keys_unechoed_and_restores_the_terminal(monkeypatch):
    import io
    import os
    import pty
    import select
    import termios

    from pyaichat.repl.app import early_prompt

    master, slave = pty.openpty()
    try:
        tty = io.TextIOWrapper(io.FileIO(slave, "r+", closefd=False))
        monkeypatch.setattr(sys, "stdin", tty)
        monkeypatch.setattr(sys, "stdout", tty)
        before = termios.tcgetattr(slave)
        restore = early_prompt(color=False)
        assert not termios.tcgetattr(slave)[3] & (termios.ECHO | termios.ICANON | termios.ISIG)
        os.write(master, b"x\x04")  # typed early: queued, neither echoed nor turned into end-of-file
        select.select([slave], [], [], 5)  # the line discipline has taken the keys in (no longer in flight)
        restore()
        assert termios.tcgetattr(slave) == before
        assert read_available(master) == b">>> \r"
        assert read_available(slave) == b"x\x04"
    finally:
        os.close(master)
        os.close(slave)


def test_the_resume_file_waits_for_the_next_prompt_and_is_written_before_leaving(harness):
    """What --resume keeps is not written between an input and the next prompt (the keystroke path): it is
    written once that prompt is on screen, and at the latest when the session ends."""
    path = state_dir() / "last-session.json"
    harness.send("kept = 1\r")
    harness.repl.execute(harness.repl.read())
    assert harness.namespace["kept"] == 1 and not path.exists()  # the next prompt is not drawn yet
    harness.send(CTRL_D)
    assert harness.repl.run() == 0
    harness.ctrl.close()
    kept = json.loads(path.read_text())
    assert [entry["source"] for entry in kept["history"]] == ["kept = 1"]
