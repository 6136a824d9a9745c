"""Ghost text in terminal IPython, through IPython's own auto-suggestion: its history first, the model's
answer where the history has none, IPython's keys take it; ``%unload_ext`` puts IPython's provider back."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from ipy_helpers import run
from IPython.terminal.interactiveshell import TerminalInteractiveShell
from IPython.terminal.shortcuts.auto_suggest import NavigableAutoSuggestFromHistory
from prompt_toolkit.application import create_app_session
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakes.suggest_model import WAIT, Model
from pyaichat.agent.suggest import Suggester
from pyaichat.ipython import extension
from pyaichat.ipython.ghost_text import LiveAutoSuggest

RIGHT = "\x1b[C"


@pytest.fixture
def terminal(new_shell):
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        shell = new_shell(TerminalInteractiveShell, TerminalInteractiveShell={"simple_prompt": False})
        original = shell.auto_suggest
        run(shell, "%load_ext pyaichat")
        shell.test_pipe = pipe
        shell.test_original = original
        yield shell
        ext = extension.get(shell)
        if ext is not None:
            ext.controller.close()


def test_the_models_suggestion_shows_where_history_has_none_and_right_takes_it(terminal):
    run(terminal, "import types\nsales = types.SimpleNamespace(net_revenue_eur=2.5)")
    ctrl = extension.get(terminal).controller
    ctrl.settings.replace(ctrl.config.replace(suggest_model="openai/x"))
    ctrl.settings.replace(ctrl.config.replace(suggest_api_base="http://127.0.0.1:9/v1"))
    model = Model("net_revenue_eur * 2")
    ctrl._suggester = Suggester(lambda: ctrl.config, ctrl.runtime, ask=model, pause=0.01)
    assert isinstance(terminal.auto_suggest, LiveAutoSuggest)
    assert isinstance(terminal.auto_suggest, NavigableAutoSuggestFromHistory)  # IPython's own, extended
    shown, taken = threading.Event(), threading.Event()
    buffer = terminal.pt_app.default_buffer
    buffer.on_suggestion_set += lambda b: shown.set() if b.suggestion else None
    buffer.on_text_changed += lambda b: taken.set() if b.text.endswith("* 2") else None

    def later() -> None:
        # IPython reads → and Enter arriving in one chunk as one key sequence: they are sent one by one
        if shown.wait(WAIT):
            terminal.test_pipe.send_text(RIGHT)
            taken.wait(WAIT)
        terminal.test_pipe.send_text("\r")  # "total = sales." alone is a complete (invalid) input

    threading.Thread(target=later, daemon=True).start()
    terminal.test_pipe.send_text("total = sales.")
    assert terminal.prompt_for_code() == "total = sales.net_revenue_eur * 2"
    assert "# sales: types.SimpleNamespace: namespace(net_revenue_eur=2.5)" in model.requests[0].prompt
    toolbar = "".join(text for _, text in terminal.pt_app.bottom_toolbar())
    assert "suggest: openai/x (this machine)" in toolbar


def test_history_first_and_unload_puts_ipythons_provider_back(terminal):
    ctrl = extension.get(terminal).controller
    ctrl.settings.replace(ctrl.config.replace(suggest_model="openai/x"))
    model = Model("never asked")
    ctrl._suggester = Suggester(lambda: ctrl.config, ctrl.runtime, ask=model, pause=0.01)
    provider = terminal.auto_suggest
    history = InMemoryHistory()
    history.append_string("print('from history')")
    buffer = Buffer(history=history)
    buffer.text = "print('fr"  # a change: the engine is told, then IPython's provider is asked
    provider.ghost._changed(buffer)
    found = provider.get_suggestion(buffer, buffer.document)
    assert found is not None and found.text == "om history')"
    assert ctrl.suggester._pending is None  # the history's line won: nothing will be asked
    run(terminal, "%unload_ext pyaichat")
    assert terminal.auto_suggest is terminal.test_original
    assert terminal.pt_app.auto_suggest is terminal.test_original
    assert model.requests == []
