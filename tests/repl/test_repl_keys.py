"""The REPL's key bindings, driven through prompt_toolkit's pipe input as a terminal sends keys."""

from __future__ import annotations

import pytest
from prompt_toolkit.document import Document
from repl_keyseq import ALT_ENTER, BACKTAB, PASTE_END, PASTE_START

from pyaichat.controller import Mode
from pyaichat.repl.keys import next_indent
from pyaichat.session import input_is_complete


class Thing:
    def __init__(self) -> None:
        self.alpha = 1
        self.beta = 2


# -- TAB -----------------------------------------------------------------------------------------------------
def test_tab_on_empty_buffer_toggles_to_assistant_and_back(harness):
    assert harness.ctrl.mode is Mode.PYTHON
    assert harness.read("\twhy?\r") == "why?"
    assert harness.ctrl.mode is Mode.ASSISTANT
    assert harness.read("\t1 + 1\r") == "1 + 1"
    assert harness.ctrl.mode is Mode.PYTHON


def test_tab_completes_a_namespace_name(harness):
    harness.namespace["my_variable"] = 1
    assert harness.read("my_v\t\r") == "my_variable"


def test_tab_completes_an_attribute(harness):
    harness.namespace["thing"] = Thing()
    assert harness.read("thing.al\t\r") == "thing.alpha"


def test_tab_completes_a_dict_key_with_closing_quote_and_bracket(harness):
    harness.namespace["d"] = {"key": 1, "other": 2}
    assert harness.read('d["ke\t\r') == 'd["key"]'


def test_tab_inserts_common_prefix_of_several_candidates(harness):
    harness.namespace.update(my_alpha1=1, my_alpha2=2)
    assert harness.read("my_\t\r") == "my_alpha"


def test_tab_after_only_whitespace_indents(harness):
    # Alt-Enter opens a second line; TAB at its start indents instead of completing.
    assert harness.read(f"x = 1{ALT_ENTER}\ty\r") == "x = 1\n    y"


def test_tab_with_no_candidates_changes_nothing(harness):
    assert harness.read("zzz_unknown\t\r") == "zzz_unknown"


def test_shift_tab_toggles_mode_and_keeps_text(harness):
    assert harness.read(f"what is df{BACKTAB}\r") == "what is df"
    assert harness.ctrl.mode is Mode.ASSISTANT
    assert harness.read(f"x{BACKTAB}\r") == "x"
    assert harness.ctrl.mode is Mode.PYTHON


# -- Enter ---------------------------------------------------------------------------------------------------
def test_enter_on_complete_code_submits(harness):
    assert harness.read("1 + 1\r") == "1 + 1"


def test_enter_on_compound_statement_adds_indented_line_until_blank_line(harness):
    assert harness.read("if True:\rx = 1\r\r") == "if True:\n    x = 1"


def test_enter_dedents_after_return_and_runs_after_blank_line(harness):
    assert harness.read("def f():\rreturn 1\r\r") == "def f():\n    return 1"


def test_enter_inside_open_bracket_inserts_newline(harness):
    assert harness.read("x = [\r1,\r]\r") == "x = [\n1,\n]"


def test_alt_enter_always_inserts_newline(harness):
    assert harness.read(f"a = 1{ALT_ENTER}b = 2\r") == "a = 1\nb = 2"


def test_bracketed_paste_of_a_block_is_one_input(harness):
    block = "for i in range(3):\n    total = i\nprint(total)\n"
    assert harness.read(f"{PASTE_START}{block}{PASTE_END}\r") == block.rstrip()


def test_assistant_mode_enter_sends_even_unbalanced_text(harness):
    harness.ctrl.set_mode(Mode.ASSISTANT)
    assert harness.read("why is (this empty\r") == "why is (this empty"


def test_backspace_in_indentation_removes_one_level(harness):
    assert harness.read("if x:\r\x7fy\r") == "if x:\ny"


def test_ctrl_r_searches_history_and_enter_accepts_the_match(harness):
    assert harness.read("total = 1 + 2\r") == "total = 1 + 2"
    assert harness.read("other = 0\r") == "other = 0"
    assert harness.read("\x12total\r\r") == "total = 1 + 2"


def test_enter_sends_a_slash_command_at_once_even_with_an_open_bracket(harness):
    assert harness.read("/inspect d[\r") == "/inspect d["


def test_tab_completes_slash_command_names_in_both_modes(harness):
    assert harness.read("/hel\t\r") == "/help"
    harness.ctrl.set_mode(Mode.ASSISTANT)
    assert harness.read("/mod\t\r") == "/model"


# -- Assistant-mode completion -------------------------------------------------------------------------------
def test_at_mention_completes_variable_names_in_assistant_mode(harness):
    harness.namespace["merged_frame"] = [1]
    harness.ctrl.set_mode(Mode.ASSISTANT)
    assert harness.read("why is @mer\t empty\r") == "why is @merged_frame empty"


def test_python_completion_is_off_in_assistant_mode(harness):
    harness.namespace["merged_frame"] = [1]
    harness.ctrl.set_mode(Mode.ASSISTANT)
    assert harness.read("mer\t\r") == "mer"


# -- pure helpers ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("x = 1", True),
        ("if x:", False),
        ("if x:\n    y = 1", False),
        ("if x:\n    y = 1\n    ", True),
        ("x = [\n1,\n    ", False),
        ("x = 1\ny = 2", True),
        ("def f(:", True),  # a syntax error is complete: running it reports the error
    ],
)
def test_input_is_complete(text, complete):
    assert input_is_complete(text) is complete


@pytest.mark.parametrize(
    ("line", "indent"),
    [("    x = 1", "    "), ("for i in y:  # loop", "    "), ("        return x", "    "), ("pass", "")],
)
def test_next_indent(line, indent):
    assert next_indent(Document(line)) == indent
