"""Wiring into the controller: light start-up, background warm-up on entering Assistant mode."""

from __future__ import annotations

import subprocess
import sys
import threading

from pyaichat.agent.assistant import Assistant
from pyaichat.agent.llm import Loader
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller, Mode
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


def test_start_up_modules_do_not_import_litellm():
    code = (
        "import sys, pyaichat.cli, pyaichat.controller, pyaichat.piped, pyaichat.agent.assistant, "
        "pyaichat.commands.assistant\n"
        "from pyaichat.commands import names; names()\n"
        "print(sorted(m for m in ('litellm', 'rich', 'pandas', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def controller(config: Config, loader: Loader) -> Controller:
    runtime = LocalRuntime(Session(config=config))
    assistant = Assistant(runtime.settings, runtime, loader=loader)
    return Controller(runtime, frontend=None, assistant=assistant)  # type: ignore[arg-type]


def test_entering_assistant_mode_warms_litellm_in_the_background():
    loaded = threading.Event()
    loader = Loader(loaded.set)
    ctrl = controller(Config(model="openai/test"), loader)
    ctrl.set_mode(Mode.ASSISTANT)
    thread = loader.thread
    assert (
        thread is not None and not thread.daemon
    )  # shutdown waits for it rather than freezing it mid-import
    assert loaded.wait(5)
    ctrl.set_mode(Mode.PYTHON)
    ctrl.set_mode(Mode.ASSISTANT)
    assert loader.thread is thread  # once per process


def test_quitting_while_litellm_warms_up_exits_cleanly():
    """Leaving right after entering Assistant mode waits for the import instead of deadlocking the exit."""
    code = (
        "from pyaichat.configuration.config import Config; from pyaichat.controller import Controller, Mode; "
        "from pyaichat.session import Session; from pyaichat.runtime import LocalRuntime; "
        "from pyaichat.assemble import assemble; "
        "config = Config(model='openai/test'); runtime = LocalRuntime(Session(config=config)); "
        "assemble(runtime, None)"
        ".set_mode(Mode.ASSISTANT)"
    )
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
        assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]


def test_no_warm_up_without_a_model():
    loader = Loader(lambda: None)
    controller(Config(), loader).set_mode(Mode.ASSISTANT)
    assert loader.thread is None


def test_an_internal_error_in_the_assistant_is_one_sentence(ctrl, recorder, fake, session):
    def broken() -> None:
        raise RuntimeError("boom")

    fake.enqueue(lambda: broken())
    session.run("x = 1")
    ctrl.ask("q")
    (error,) = recorder.of("error")
    assert error.kind == "internal" and "RuntimeError: boom" in error.message and "intact" in error.message
    assert session.run("x + 1").value == 2
