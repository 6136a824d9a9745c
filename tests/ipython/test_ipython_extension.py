"""The extension on a real ``InteractiveShell``: loading, unloading, options, the ``?`` trap, history."""

from __future__ import annotations

import sys

import pytest
from ipy_helpers import run
from IPython.core.error import UsageError
from IPython.core.inputtransformer2 import TransformerManager

import pyaichat
from pyaichat.ipython import extension
from pyaichat.ipython.magics import parse
from pyaichat.ipython.transform import keep_question_mark
from pyaichat.runtime.cells import is_question


def post_run_callbacks(shell) -> list:
    return list(shell.events.callbacks["post_run_cell"])


# -- loading -------------------------------------------------------------------------------------------------
def test_load_ext_registers_line_and_cell_magics(ip):
    assert ip.find_line_magic("ai") is None
    result = run(ip, "%load_ext pyaichat")
    assert result.success
    assert ip.find_line_magic("ai") is not None
    assert ip.find_cell_magic("ai") is not None
    ext = extension.get(ip)
    assert ext is not None and ext.session.namespace is ip.user_ns  # the very same dict


def test_import_pyaichat_stays_light():
    import subprocess

    heavy = "('IPython', 'rich', 'litellm', 'prompt_toolkit')"
    code = f"import sys, pyaichat; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_loading_twice_is_harmless(ip):
    before = len(post_run_callbacks(ip))
    pyaichat.load_ipython_extension(ip)
    first = extension.get(ip)
    pyaichat.load_ipython_extension(ip)
    run(ip, "%load_ext pyaichat")  # IPython's own "already loaded" path
    assert extension.get(ip) is first
    assert len(post_run_callbacks(ip)) == before + 1
    assert ip.input_transformers_cleanup.count(keep_question_mark) == 1
    run(ip, "a = 1")
    assert [e.source for e in first.session.history] == ["a = 1"]  # recorded once, not twice


def test_unload_removes_magics_callbacks_and_transformer(ip):
    callbacks = post_run_callbacks(ip)
    run(ip, "%load_ext pyaichat")
    run(ip, "%unload_ext pyaichat")
    assert ip.find_line_magic("ai") is None
    assert ip.find_cell_magic("ai") is None
    assert "AIMagics" not in ip.magics_manager.registry
    assert post_run_callbacks(ip) == callbacks
    assert keep_question_mark not in ip.input_transformers_cleanup
    assert extension.get(ip) is None
    result = run(ip, "%ai hello")
    assert isinstance(result.error_in_exec, UsageError)  # "Line magic function `%ai` not found."
    run(ip, "%load_ext pyaichat")  # and it can come back
    assert ip.find_line_magic("ai") is not None


def test_extensions_list_in_ipython_config_loads_it(new_shell, monkeypatch):
    from IPython.core.shellapp import InteractiveShellApp
    from traitlets.config import LoggingConfigurable

    class App(InteractiveShellApp, LoggingConfigurable):
        pass

    shell = new_shell()
    App(shell=shell, extensions=["pyaichat"], reraise_ipython_extension_failures=True).init_extensions()
    assert shell.find_line_magic("ai") is not None
    assert "pyaichat" in shell.extension_manager.loaded


# -- configuration and the missing model --------------------------------------------------------------------
def test_missing_model_is_one_usage_error_line(ip, capsys):
    from pyaichat.agent.llm import NO_MODEL

    run(ip, "%load_ext pyaichat")
    capsys.readouterr()
    result = run(ip, "%ai why is it empty?")
    err = capsys.readouterr().err
    assert isinstance(result.error_in_exec, UsageError)
    # the sentence names the command as it is typed in IPython
    assert err.strip() == f"UsageError: {NO_MODEL}".replace("/model", "%ai /model")
    assert "Traceback" not in err


def test_broken_config_is_reported_in_one_line_and_again_on_ask(ip, capsys, monkeypatch):
    monkeypatch.setenv("PYAICHAT_MAX_STEPS", "many")
    run(ip, "%load_ext pyaichat")
    err = capsys.readouterr().err
    assert err.startswith("pyaichat: In environment variable PYAICHAT_MAX_STEPS: max_steps")
    assert err.count("\n") == 1
    result = run(ip, "%ai hello")
    assert isinstance(result.error_in_exec, UsageError)
    assert "PYAICHAT_MAX_STEPS" in capsys.readouterr().err
    # fixed in the running session: the next question sees the repaired configuration
    monkeypatch.setenv("PYAICHAT_MAX_STEPS", "3")
    monkeypatch.setenv("PYAICHAT_MODEL", "openai/x")
    ext = extension.get(ip)
    ext._retry_config()
    assert ext.controller.config.max_steps == 3
    assert ext.session.config is ext.controller.config


def test_ipython_config_section_sets_the_model(new_shell):
    shell = new_shell(PyAIChat={"model": "openai/from-ipython-config", "max_steps": 5})
    run(shell, "%load_ext pyaichat")
    config = extension.get(shell).controller.config
    assert (config.model, config.max_steps) == ("openai/from-ipython-config", 5)


def test_bad_option_is_a_usage_error(ip, capsys):
    run(ip, "%load_ext pyaichat")
    result = run(ip, "%ai --max-steps zero why")
    assert isinstance(result.error_in_exec, UsageError)
    assert "--max-steps must be a whole number from 1 to 100" in capsys.readouterr().err


def test_empty_ai_shows_usage(ip, capsys):
    run(ip, "%load_ext pyaichat")
    result = run(ip, "%ai")
    assert isinstance(result.error_in_exec, UsageError)
    assert "Usage: %ai" in capsys.readouterr().err


def test_slash_commands_pass_through(ip, capsys):
    run(ip, "%load_ext pyaichat")
    run(ip, "%ai /model openai/other")
    assert extension.get(ip).controller.config.model == "openai/other"
    assert "Model set to openai/other" in capsys.readouterr().out
    result = run(ip, "%ai --model openai/third /model")
    assert isinstance(result.error_in_exec, UsageError)
    assert extension.get(ip).controller.config.model == "openai/other"


def test_a_question_for_another_providers_model_does_not_go_to_this_ones_base(ip, monkeypatch):
    """``%ai --model ollama/… question`` in a session set up for a llama.cpp base: the base stays with its
    provider, as ``/model`` does it."""
    run(ip, "%load_ext pyaichat")
    ext = extension.get(ip)
    ext.controller.settings.replace(model="openai/local", api_base="http://127.0.0.1:8080/v1")
    asked = []
    monkeypatch.setattr(ext.controller, "ask", lambda question, config: asked.append(config))
    monkeypatch.setattr("pyaichat.agent.llm.is_loaded", lambda: True)
    run(ip, "%ai --model ollama/qwen why")
    run(ip, "%ai --model openai/other why")
    assert [(c.model, c.api_base) for c in asked] == [
        ("ollama/qwen", None),
        ("openai/other", "http://127.0.0.1:8080/v1"),
    ]


# -- option parsing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "cell", "overrides", "text"),
    [
        ("why is it empty?", None, {}, "why is it empty?"),
        ("--model m --max-steps 3 why x", None, {"model": "m", "max_steps": 3}, "why x"),
        ("--model=m q", None, {"model": "m"}, "q"),
        ("--max-steps 2", "  body line\nmore  \n", {"max_steps": 2}, "body line\nmore"),
        ("-- --model is text", None, {}, "--model is text"),
        ("what does --model do", None, {}, "what does --model do"),
    ],
)
def test_parse(line, cell, overrides, text):
    request = parse(line, cell)
    assert (request.overrides, request.text) == (overrides, text)


@pytest.mark.parametrize("line", ["--temperature 1 q", "--model", "--max-steps 101 q"])
def test_parse_rejects(line):
    with pytest.raises(UsageError):
        parse(line)


# -- the ? trap ----------------------------------------------------------------------------------------------
def test_without_the_transformer_ipython_turns_the_question_into_help():
    # The trap itself, so this test notices if IPython ever changes: the line becomes a help request.
    assert "pinfo" in TransformerManager().transform_cell("%ai why is it empty?")


@pytest.mark.parametrize(
    "cell",
    ["%ai why is it empty?", "%ai what's in {cfg}?", "%ai is x > 0??", "   %ai  why?  "],
)
def test_question_mark_reaches_the_magic(ip, monkeypatch, cell):
    seen = []
    run(ip, "%load_ext pyaichat")
    run(ip, "cfg = 'EXPANDED'")  # IPython would expand {cfg} in other magics' arguments
    monkeypatch.setattr(extension.Extension, "answer", lambda self, request: seen.append(request.text))
    result = run(ip, cell)
    assert result.success, result.error_in_exec
    assert seen == [cell.strip()[3:].strip()]


def test_question_mark_in_a_cell_magic_and_help_on_the_magic(ip, monkeypatch, capsys):
    seen = []
    run(ip, "%load_ext pyaichat")
    monkeypatch.setattr(extension.Extension, "answer", lambda self, request: seen.append(request.text))
    run(ip, "%%ai --max-steps 2\nwhy is it empty?\n")
    assert seen == ["why is it empty?"]
    run(ip, "%ai?")  # still IPython's help on the magic
    assert seen == ["why is it empty?"]
    assert "Ask pyaichat's assistant" in capsys.readouterr().out


def test_transformer_leaves_other_lines_alone():
    lines = ["x = 1\n", "%ai\n", "%ai?\n", "%air why?\n", "s = '''\\\n", "%ai not a line start?\n"]
    assert keep_question_mark(lines) == lines


def test_check_complete_accepts_a_question_with_open_brackets(ip):
    run(ip, "%load_ext pyaichat")
    assert ip.check_complete("%ai why is (x empty?")[0] == "complete"


# -- history and the last error ------------------------------------------------------------------------------
def test_cells_are_recorded_with_summaries_and_the_last_error(ip):
    run(ip, "%load_ext pyaichat")
    run(ip, "data = {'a': 1}")
    run(ip, "len(data)")
    run(ip, "%ai /history")
    failing = run(ip, "def f(d):\n    return d['b']\nf(data)")
    session = extension.get(ip).session
    assert [(e.number, e.source, e.ok, e.summary) for e in session.history] == [
        (2, "data = {'a': 1}", True, ""),
        (3, "len(data)", True, "1"),
        (5, "def f(d):\n    return d['b']\nf(data)", False, "KeyError: 'b'"),
    ]
    last = session.last_error
    assert last is not None and last.exception is failing.error_in_exec
    assert (last.type_name, last.input_number, last.segment) == ("KeyError", 5, "d['b']")
    assert last.source == "def f(d):\n    return d['b']\nf(data)"
    assert "IPython" not in last.frames[0].filename  # IPython's own run_code frame is not shown
    # ... but the exception keeps its full traceback for IPython's %tb / %debug
    assert "IPython" in failing.error_in_exec.__traceback__.tb_frame.f_code.co_filename
    assert sys.last_value is failing.error_in_exec


def test_syntax_errors_are_recorded_too(ip):
    run(ip, "%load_ext pyaichat")
    run(ip, "x = (1,")
    last = extension.get(ip).session.last_error
    assert last is not None and last.type_name == "SyntaxError"


def test_inputs_typed_before_loading_are_backfilled(ip):
    run(ip, "a = 2")
    run(ip, "a * 21")
    run(ip, "%load_ext pyaichat")
    history = extension.get(ip).session.history
    assert [(e.number, e.source, e.summary) for e in history] == [(1, "a = 2", ""), (2, "a * 21", "42")]


def test_is_question():
    assert is_question("%ai why?") and is_question("%%ai\nwhy") and is_question("  %ai")
    assert not is_question("%aim x") and not is_question("%ai q\nx = 1") and not is_question("ai = 1")


def test_variable_listings_hide_ipython_noise(ip):
    from pyaichat.capabilities.introspect import user_names

    run(ip, "%load_ext pyaichat")
    run(ip, "df_rows = 3")
    run(ip, "df_rows")
    assert user_names(ip.user_ns) == ["df_rows"]


# -- failures while answering --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raised", "shown"),
    [
        (
            RuntimeError("boom"),
            "Error: pyaichat hit an internal error (RuntimeError: boom); your session is intact.",
        ),
        (KeyboardInterrupt(), "Interrupted."),
    ],
)
def test_failures_while_answering_are_one_line(ip, monkeypatch, capsys, raised, shown):
    run(ip, "%load_ext pyaichat")
    controller = extension.get(ip).controller
    controller.settings.replace(controller.config.replace(model="openai/never-called"))

    def fail(self, question, config):
        raise raised

    monkeypatch.setattr(extension.Extension, "_ask", fail)
    capsys.readouterr()
    result = run(ip, "%ai hello")
    captured = capsys.readouterr()
    assert result.success
    assert " ".join(captured.out.split()) == shown  # rich wraps at the console width
    assert "Traceback" not in captured.err


def test_a_cancelled_proposal_leaves_the_next_input_it_was_placed_in():
    """An outside agent cancelled the proposal whose code terminal IPython put into the next input: the
    code leaves it (not yet on screen: IPython's ``rl_next_input``), so Enter does not run it."""
    from types import SimpleNamespace

    from pyaichat.configuration.config import Config
    from pyaichat.ipython.frontend import IPythonFrontEnd

    shell = SimpleNamespace(rl_next_input=None, colors="Linux")
    shell.set_next_input = lambda code: setattr(shell, "rl_next_input", code)
    frontend = IPythonFrontEnd(shell, Config())
    frontend.set_next_input("x = 1")
    frontend.withdraw("call-1", "something else")
    assert shell.rl_next_input == "x = 1"  # not that proposal's code: it stays
    frontend.withdraw("call-1", "x = 1")
    assert shell.rl_next_input is None
