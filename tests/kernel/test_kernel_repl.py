"""The REPL's prompt over a kernel session (prompt_toolkit pipe input): Enter asks the kernel whether an input
is complete, TAB completes from the kernel, and the input runs there."""

from __future__ import annotations

import io

from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pyaichat.repl.frontend import Repl, make_repl


def repl_over(runtime, pipe) -> Repl:
    console = Console(file=io.StringIO(), width=100, no_color=True, highlight=False)
    return make_repl(
        runtime,
        input=pipe,
        output=DummyOutput(),
        console=console,
        history=InMemoryHistory(),
    )


def test_kernel_decides_when_enter_runs(runtime):
    assert runtime.is_complete("x = 1") is True
    assert runtime.is_complete("for i in range(2):") is False
    assert runtime.is_complete("for i in range(2):\n    print(i)\n") is True  # the blank line ends it
    assert runtime.is_complete("%%time") is False  # a cell magic waits for its body
    assert runtime.is_complete("%%time\nx = 1") is False
    assert runtime.is_complete("%%time\nx = 1\n") is True
    assert runtime.is_complete("1/") is True  # invalid: run it and show the error


def test_prompt_reads_a_cell_magic_and_completes_from_the_kernel(runtime, capsys):
    runtime.run("prompt_probe_value = 7")
    with create_pipe_input() as pipe:
        repl = repl_over(runtime, pipe)
        pipe.send_text("%%capture captured\r")  # Enter in a cell magic opens a new line
        pipe.send_text("print('inside')\r")
        pipe.send_text("\r")  # the blank line runs it
        assert repl.read().strip() == "%%capture captured\nprint('inside')"
        pipe.send_text("prompt_probe_v\t * 6\r")
        text = repl.read()
        assert text == "prompt_probe_value * 6"
        repl.execute(text)
    assert "42" in capsys.readouterr().out
