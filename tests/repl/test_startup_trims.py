"""The start-up trims move prompt_toolkit work past the first prompt; the user gets the same prompt."""

from __future__ import annotations

import subprocess
import sys

import pytest
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.key_binding import defaults
from prompt_toolkit.output import DummyOutput

from pyaichat.config import Config
from pyaichat.repl.frontend import Repl
from pyaichat.repl.startup_trims import vi_bindings_built_on_first_use
from pyaichat.session import Session

ESC = "\x1b"


@pytest.fixture
def vi_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts real builds of prompt_toolkit's Vi bindings."""
    builds: list[str] = []
    for name in ("load_vi_bindings", "load_vi_search_bindings"):
        original = getattr(defaults, name)

        def counted(original=original, name=name):
            builds.append(name)
            return original()

        monkeypatch.setattr(defaults, name, counted)
    return builds


@pytest.mark.parametrize("mode", ["vi", "emacs"])
def test_vi_bindings_are_built_at_the_first_key_and_work(vi_builds: list[str], mode: str) -> None:
    with create_pipe_input() as pipe:
        repl = Repl(
            Config(editing_mode=mode), Session(), input=pipe, output=DummyOutput(), history=InMemoryHistory()
        )
        assert vi_builds == []  # the session is built, the Vi bindings are not
        if mode == "vi":  # insert "hello", Esc to normal mode, 0 to the line start, x deletes the "h"
            pipe.send_text(f"hello{ESC}0x\r")
            assert repl.read() == "ello"
        else:  # Emacs: Ctrl-A to the line start, Ctrl-D deletes the "h"
            pipe.send_text("hello\x01\x04\r")
            assert repl.read() == "ello"
    assert sorted(vi_builds) == ["load_vi_bindings", "load_vi_search_bindings"]  # once each, on demand


def test_only_the_block_sees_the_proxy(vi_builds: list[str]) -> None:
    before = defaults.load_vi_bindings
    with vi_bindings_built_on_first_use():
        assert defaults.load_vi_bindings is not before
        defaults.load_key_bindings()
    assert defaults.load_vi_bindings is before and vi_builds == []
    defaults.load_key_bindings()  # outside the block: built at once, as prompt_toolkit does
    assert sorted(vi_builds) == ["load_vi_bindings", "load_vi_search_bindings"]


# The real start-up order: the package __init__s are deferred, the prompt module loads, the first render
# completes them. Run in a fresh interpreter, where prompt_toolkit is not imported yet.
FRESH_START = """
import sys
from pyaichat.repl.startup_trims import defer_package_inits, deferred_modules, finish_package_inits
defer_package_inits()
from pyaichat.repl.frontend import Repl
waiting = deferred_modules()
shortcuts_loaded = "prompt_toolkit.shortcuts.dialogs" in sys.modules
finish_package_inits()
import prompt_toolkit
from prompt_toolkit.shortcuts import prompt, PromptSession
from prompt_toolkit import PromptSession as Again, __version__
assert Again is PromptSession and callable(prompt) and not isinstance(prompt, type(sys))
print(waiting, shortcuts_loaded, deferred_modules(), __version__ == prompt_toolkit.__version__)
"""


def test_a_fresh_start_defers_the_package_inits_and_the_first_render_completes_them() -> None:
    proc = subprocess.run([sys.executable, "-c", FRESH_START], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['prompt_toolkit', 'prompt_toolkit.shortcuts'] False [] True"
