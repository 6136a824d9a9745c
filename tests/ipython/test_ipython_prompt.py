"""Terminal IPython's two-mode prompt, driven in-process through prompt_toolkit's pipe input (no terminal)."""

from __future__ import annotations

import threading
import time

import pytest
from ipy_helpers import run
from IPython.terminal.interactiveshell import TerminalInteractiveShell
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from pyaichat.controller import Mode
from pyaichat.ipython import extension
from pyaichat.ipython.prompt import ModePrompts, as_question
from pyaichat.proposals import Proposal

SHIFT_TAB = "\x1b[Z"


@pytest.fixture
def terminal(new_shell):
    """A ``TerminalInteractiveShell`` with a real prompt_toolkit prompt reading keys from a pipe."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        shell = new_shell(TerminalInteractiveShell, TerminalInteractiveShell={"simple_prompt": False})
        assert shell.pt_app is not None
        originals = (shell.pt_app.key_bindings, shell.prompts)
        run(shell, "%load_ext pyaichat")

        def read(keys: str) -> str:
            pipe.send_text(keys)
            return shell.prompt_for_code()

        shell.test_read = read
        shell.test_pipe = pipe
        shell.test_originals = originals
        yield shell


def mode(shell) -> Mode:
    return extension.get(shell).controller.mode


def prompt_text(shell) -> str:
    return "".join(text for _, text in shell.prompts.in_prompt_tokens())


def test_tab_on_empty_line_switches_and_the_question_becomes_ai_magic(terminal):
    # Enter sends the question even though it is not complete Python
    assert terminal.test_read("\twhy is (x empty?\r") == "%ai why is (x empty?"
    assert mode(terminal) is Mode.ASSISTANT
    assert prompt_text(terminal).startswith("ai In [")
    assert terminal.pt_app.bottom_toolbar is not None
    assert terminal.test_read("\tx = (1,\r2)\r") == "x = (1,\n2)"  # back in Python: IPython's own Enter
    assert mode(terminal) is Mode.PYTHON
    assert prompt_text(terminal).startswith("In [")
    assert terminal.pt_app.bottom_toolbar is None


def test_tab_with_text_keeps_ipython_indentation(terminal):
    assert terminal.test_read("if True:\r\tpass\r\r").startswith("if True:\n        pass")
    assert mode(terminal) is Mode.PYTHON


def test_shift_tab_switches_and_keeps_the_text(terminal):
    assert terminal.test_read(f"why{SHIFT_TAB}\r") == "%ai why"
    assert terminal.test_read(f"{SHIFT_TAB}x\r") == "x"


def test_magics_and_slash_commands_in_assistant_mode(terminal):
    extension.get(terminal).controller.set_mode(Mode.ASSISTANT)
    assert terminal.test_read("%who\r") == "%who"
    assert terminal.test_read("/clear\r") == "%ai /clear"


def test_a_proposal_prefills_python_input(terminal):
    ext = extension.get(terminal)
    ext.controller.set_mode(Mode.ASSISTANT)
    assert ext.controller.proposals.decide(Proposal.of_code("y = 2")).status == "placed"
    assert mode(terminal) is Mode.PYTHON
    assert terminal.test_read("\r") == "y = 2"
    assert "y" not in terminal.user_ns


def test_unload_restores_ipython_prompt_and_keys(terminal):
    extension.get(terminal).controller.set_mode(Mode.ASSISTANT)
    run(terminal, "%unload_ext pyaichat")
    bindings, prompts = terminal.test_originals
    assert terminal.pt_app.key_bindings is bindings
    assert terminal.prompts is prompts
    assert terminal.pt_app.bottom_toolbar is None
    assert "prompt_for_code" not in vars(terminal)
    assert terminal.test_read("\tx\r") == "    x"  # TAB on an empty line indents, as in plain IPython


def test_as_question():
    assert as_question("why?") == "%ai why?"
    assert as_question("  first\nsecond ") == "%%ai\nfirst\nsecond"
    assert as_question("%timeit x") == "%timeit x"
    assert as_question("!ls") == "!ls"
    assert as_question("   ") == "   "


def test_mode_prompts_keep_the_wrapped_prompt_class(terminal):
    prompts = terminal.prompts
    assert isinstance(prompts, ModePrompts)
    assert prompts.out_prompt_tokens() == prompts.inner.out_prompt_tokens()
    # the continuation prompt lines up under the longer "ai In [n]: " prompt
    extension.get(terminal).controller.set_mode(Mode.ASSISTANT)
    width = len(prompt_text(terminal))
    tokens = prompts.continuation_prompt_tokens(width, lineno=1, wrap_count=0)
    assert len("".join(text for _, text in tokens)) == width


def test_an_idle_prompt_makes_way_for_an_outside_proposal_whose_cell_settles_it(terminal):
    """An outside agent's proposal (from another thread) reaches an idle terminal IPython prompt: its code
    becomes the next input, and running that cell unchanged approves it; the agent learns it ran."""
    pt_app = terminal.pt_app
    got: dict = {}

    def until(condition) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            assert time.monotonic() < deadline
            time.sleep(0.005)

    def agent() -> None:
        until(lambda: pt_app.app.is_running)
        pending = extension.get(terminal).controller.proposals.submit(
            Proposal.of_code("made = 3", "Makes 3.", source="Agent X")
        )
        until(lambda: pt_app.app.is_running and pt_app.default_buffer.text == "made = 3")
        terminal.test_pipe.send_text("\r")
        got["outcome"] = pending.wait(60)

    thread = threading.Thread(target=agent)
    thread.start()
    text = terminal.prompt_for_code()
    assert text == "made = 3"
    terminal.run_cell(text, store_history=True)
    thread.join(60)
    outcome = got["outcome"]
    assert outcome.status == "ran" and terminal.user_ns["made"] == 3 and outcome.code == "made = 3"
    (approved,) = extension.get(terminal).controller.journal.approved
    assert approved.proposed_by == "Agent X"


def test_while_served_the_toolbar_says_so_and_when_a_proposal_waits(terminal):
    """Plain IPython has no toolbar in Python mode; while outside agents are served (``%ai /mcp on``) one says
    so, and says when an agent's proposal waits for an empty line (it never interrupts a line being typed)."""
    ctrl = extension.get(terminal).controller
    assert terminal.test_read("x = 1\r") == "x = 1"
    assert terminal.pt_app.bottom_toolbar is None
    ctrl.gate.serving = "⇄ MCP"  # what /mcp on sets
    assert terminal.test_read("y = 2\r") == "y = 2"
    toolbar = terminal.pt_app.bottom_toolbar
    assert toolbar is not None and "⇄ MCP" in "".join(t for _, t in toolbar())
    assert "waiting" not in "".join(t for _, t in toolbar())
    pending = ctrl.proposals.submit(Proposal.of_code("z = 3", source="Agent X"))
    assert "1 proposal waiting: clear the line to see" in "".join(t for _, t in toolbar())
    pending.wait(0)
    ctrl.gate.serving = None
    assert terminal.test_read("w = 4\r") == "w = 4"
    assert terminal.pt_app.bottom_toolbar is None  # serving stopped: IPython's own again
