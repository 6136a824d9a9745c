"""Ghost text at the REPL's prompt, driven through prompt_toolkit's pipe input: history first, the model's
answer when it arrives, → / End take all of it, Alt-→ / Alt-F one word; off without a suggestion model.

Keys that must follow a model's answer are sent by a helper thread once the answer is on the buffer (an
event), never after a sleep."""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pyaichat.agent.suggest import Suggester
from pyaichat.configuration.config import Config
from pyaichat.repl.frontend import Repl, make_repl
from pyaichat.repl.ghost_text import first_word
from pyaichat.repl.prompt_session import toolbar
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakes.suggest_model import WAIT, Model, Screen

RIGHT, END, ALT_RIGHT, ALT_F = "\x1b[C", "\x1b[F", "\x1b\x1b[C", "\x1bf"


class Ghost:
    def __init__(self, repl: Repl, pipe, model: Model | None) -> None:
        self.repl, self.pipe, self.model = repl, pipe, model
        self.shown = threading.Event()
        if model is not None:
            ctrl = repl.ctrl
            ctrl._suggester = Suggester(lambda: ctrl.config, ctrl.runtime, ask=model, pause=0.01)
            buffer = repl.prompt.default_buffer
            buffer.on_suggestion_set += lambda b: self.shown.set() if b.suggestion else None

    def read_after_answer(self, typed: str, then: str) -> str:
        """Type ``typed``; once the model's suggestion is on the buffer, type ``then``; the accepted input."""

        def later() -> None:
            if self.shown.wait(WAIT):
                self.pipe.send_text(then)
            else:
                self.pipe.send_text("\r")  # no suggestion came: the input as typed fails the test

        threading.Thread(target=later, daemon=True).start()
        self.pipe.send_text(typed)
        return self.repl.read()


@pytest.fixture
def make() -> Iterator:
    made: list[Repl] = []
    with create_pipe_input() as pipe:

        def build(model: Model | None = None, **settings) -> Ghost:
            session = Session()
            session.run("import types\nsales = types.SimpleNamespace(net_revenue_eur=1.5, region_code='N')")
            chosen = {"suggest_model": "openai/x", "suggest_api_base": "http://127.0.0.1:9/v1", **settings}
            config = Config(**chosen)
            session.settings.replace(config)
            console = Console(file=io.StringIO(), width=100, no_color=True)
            history = InMemoryHistory()
            history.append_string("print('hello from history')")
            runtime = LocalRuntime(session)
            repl = make_repl(
                runtime,
                input=pipe,
                output=DummyOutput(),
                console=console,
                history=history,
            )
            made.append(repl)
            return Ghost(repl, pipe, model)

        yield build
    for repl in made:
        repl.ctrl.close()


def test_the_models_answer_is_taken_whole_with_right_arrow(make) -> None:
    ghost = make(Model("net_revenue_eur * 2"))
    assert ghost.read_after_answer("total = sales.", RIGHT + "\r") == "total = sales.net_revenue_eur * 2"
    assert len(ghost.model.requests) == 1


def test_end_takes_it_too_and_alt_right_or_alt_f_one_word(make) -> None:
    ghost = make(Model("net_revenue_eur.round(2)", "region_code.lower()"))
    assert ghost.read_after_answer("a = sales.", END + "\r") == "a = sales.net_revenue_eur.round(2)"
    ghost.shown.clear()
    assert ghost.read_after_answer("b = sales.", ALT_RIGHT + "\r") == "b = sales.region_code"
    # Alt-F on a new line: the suggestion is known already for that position, nothing is asked
    ghost.shown.clear()
    assert ghost.read_after_answer("b = sales.", ALT_F + ALT_F + "\r") == "b = sales.region_code.lower"
    assert len(ghost.model.requests) == 2


def test_history_comes_first_and_needs_no_model(make) -> None:
    ghost = make(Model("never asked"))
    ghost.pipe.send_text("print('he" + RIGHT + "\r")
    assert ghost.repl.read() == "print('hello from history')"
    # the model is not asked while the history has a match (once it was taken, the whole line may be)
    assert all(r.prompt.endswith("print('hello from history')") for r in ghost.model.requests)


def test_a_line_that_raised_is_not_offered_again_from_history(make) -> None:
    """History offered the line that had just raised; it is left out (↑ still recalls it, to fix it), and a
    line that later ran fine is offered again."""
    ghost = make(Model("sales.net_revenue_eur * 2"))
    failed = "total = sales.net_revenue_eur + missing_name"
    ghost.repl.ctrl.runtime.session.run(failed)  # NameError
    ghost.repl.prompt.default_buffer.history.append_string(failed)
    assert ghost.read_after_answer("total = ", RIGHT + "\r") == "total = sales.net_revenue_eur * 2"
    ghost.pipe.send_text("print('he" + RIGHT + "\r")  # a line that ran fine: still offered
    assert ghost.repl.read() == "print('hello from history')"


def test_off_without_a_suggestion_model_and_in_assistant_mode(make) -> None:
    ghost = make(None, suggest_model=None)
    ghost.pipe.send_text("print('he" + RIGHT + "\r")
    assert ghost.repl.read() == "print('he"  # → only moves the cursor
    assert ghost.repl.ctrl.suggester_if_any is None
    assert "suggest" not in "".join(text for _, text in toolbar(ghost.repl.ctrl))


def test_the_toolbar_names_the_model_that_gets_the_keys(make) -> None:
    ghost = make(None)
    bar = "".join(text for _, text in toolbar(ghost.repl.ctrl))
    assert "suggest: openai/x (this machine)" in bar
    ghost.repl.ctrl.settings.replace(
        ghost.repl.ctrl.config.replace(suggest_api_base="https://api.example.com/v1")
    )
    bar = toolbar(ghost.repl.ctrl)
    assert ("class:bottom-toolbar.remote", "suggest: openai/x → api.example.com") in list(bar)
    ghost.repl.ctrl.toggle_mode()
    assert "suggest" not in "".join(text for _, text in toolbar(ghost.repl.ctrl))


def test_the_toolbar_says_when_suggestions_are_failing_and_when_they_work_again(make) -> None:
    from pyaichat.errors import LLMConnectError

    failure = LLMConnectError("Cannot reach the provider at http://127.0.0.1:9/v1: is the server running?")
    ghost = make(Model(failure, "net_revenue_eur"))
    engine = ghost.repl.ctrl.suggester
    engine.edit("total = sales.", "", Screen())
    ghost.model.wait_asked()
    deadline = time.monotonic() + WAIT
    while not engine.stats.failing:  # recorded on the engine's thread
        assert time.monotonic() < deadline
        time.sleep(0.005)
    bar = list(toolbar(ghost.repl.ctrl))
    assert ("class:bottom-toolbar.remote", "suggest: openai/x ✗ failing (see /suggest)") in bar
    engine._quiet_until = 0.0  # past the back-off: the next pause asks again, and is answered
    screen = Screen()
    engine.edit("total = sales.n", "", screen)
    assert screen.arrived.wait(WAIT)
    assert "suggest: openai/x (this machine)" in "".join(text for _, text in toolbar(ghost.repl.ctrl))


def test_the_input_runs_only_once_nothing_reads_the_session(make) -> None:
    ghost = make(Model("x"))
    ran: list[float] = []
    engine = ghost.repl.ctrl.suggester
    real_quiet = engine.quiet
    engine.quiet = lambda timeout=1.0: (real_quiet(timeout), ran.append(time.monotonic()))  # type: ignore[method-assign]
    ghost.repl.execute("y = 1")
    assert ran and ghost.repl.ctrl.runtime.session.namespace["y"] == 1


@pytest.mark.parametrize(
    ("text", "word"),
    [('"net_revenue_eur"].sum()', '"net_revenue_eur'), (".sum()", ".sum"), ("(2)", "("), (" + 1", " +")],
)
def test_one_word_of_code(text: str, word: str) -> None:
    assert first_word(text) == word


def test_a_line_recalled_from_history_is_not_an_edit_nothing_is_asked_for_it(make) -> None:
    ghost = make(Model("never asked"))
    engine = ghost.repl.ctrl.suggester
    buffer = ghost.repl.prompt.default_buffer
    seen: list[tuple[str, tuple[str, str] | None]] = []
    # after the ghost text's own handler: what the engine will ask about once the user pauses
    buffer.on_text_changed += lambda b: seen.append((b.text, engine.waiting))
    ghost.pipe.send_text("\x1b[A" + "x\r")  # ↑ recalls the line; typing on it is an edit again
    assert ghost.repl.read() == "print('hello from history')x"
    assert seen[0] == ("print('hello from history')", None)
    assert seen[1] == ("print('hello from history')x", ("print('hello from history')x", ""))
