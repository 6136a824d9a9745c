"""An MCP server's question answered at the terminal, keys typed through prompt_toolkit's pipe input: one key
to answer, decline or cancel; each field asked with its default, checked on Enter (a wrong answer stays to be
edited); the answers shown once more and sent only on ``s``; Ctrl-C cancels whatever was typed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from pyaichat.mcptools.approval import Question
from pyaichat.mcptools.form import fields_of
from pyaichat.repl.form import ask_answer

SCHEMA = {
    "type": "object",
    "properties": {
        "warehouse": {"type": "string", "title": "Warehouse", "minLength": 2},
        "days": {"type": "integer", "minimum": 1, "maximum": 31, "default": 7},
        "format": {"type": "string", "enum": ["csv", "xlsx"], "enumNames": ["CSV", "Excel"]},
        "email_me": {"type": "boolean"},
    },
    "required": ["warehouse", "format"],
}
FORM = Question("q-1", "fault", "Which warehouse?", fields_of(SCHEMA))


@pytest.fixture
def answer() -> Iterator[Any]:
    with create_pipe_input() as pipe:

        def run(keys: str, question: Question = FORM) -> Any:
            pipe.send_text(keys)
            return ask_answer(question, input=pipe, output=DummyOutput(), color=False)

        yield run


def test_the_form_is_filled_in_checked_and_sent(answer, capsys) -> None:
    # "L" is too short: said, and kept for editing; days keeps its default; "2" picks Excel; email left empty
    got = answer("a" + "L\r" + "eeds\r" + "\r" + "2\r" + "\r" + "s")
    assert (got.action, got.content) == ("accept", {"warehouse": "Leeds", "days": 7, "format": "xlsx"})
    shown = capsys.readouterr().out
    assert "Warehouse: Leeds" in shown and "days: 7" in shown and "email_me: (left empty)" in shown


def test_edit_fills_it_in_again_from_the_answers_given(answer) -> None:
    got = answer("a" + "Leeds\r" + "\r" + "csv\r" + "y\r" + "e" + "\r" + "\x7f14\r" + "\r" + "\r" + "s")
    assert got.content == {"warehouse": "Leeds", "days": 14, "format": "csv", "email_me": True}


@pytest.mark.parametrize(
    ("keys", "action"), [("d", "decline"), ("n", "decline"), ("c", "cancel"), ("\x1b", "cancel")]
)
def test_one_key_declines_or_cancels(answer, keys, action) -> None:
    got = answer(keys)
    assert (got.action, got.content) == (action, None)


def test_ctrl_c_in_the_form_or_before_sending_cancels_and_sends_nothing(answer) -> None:
    assert answer("a" + "Leeds\r" + "\x03").action == "cancel"
    got = answer("a" + "Leeds\r" + "\r" + "1\r" + "\r" + "c")
    assert (got.action, got.content) == ("cancel", None)


def test_an_address_to_open_is_accepted_with_one_key(answer) -> None:
    question = Question("q-2", "fault", "Sign in.", url="https://tracker.example.org/sign-in")
    assert answer("a", question).action == "accept"
    assert answer("d", question).action == "decline"


def test_a_tool_calls_arguments_are_edited_as_one_line_of_json(capsys) -> None:
    """``e`` on a tool call's panel: its arguments as one line of JSON (this crashed with a TypeError before:
    prompt_toolkit's ``prompt()`` shortcut takes no input or output)."""
    from pyaichat.repl.questions import ask_arguments

    with create_pipe_input() as pipe:
        # Ctrl-A Ctrl-K clears the line; the broken JSON is said and kept, "}" finishes it
        pipe.send_text("\x01\x0b" + '{"text": "edited"\r' + "}\r")
        got = ask_arguments("fault__write_note", {"text": "x"}, input=pipe, output=DummyOutput())
        assert got == {"text": "edited"}
        assert "That is not JSON" in capsys.readouterr().out
        pipe.send_text("\x03")
        assert ask_arguments("fault__write_note", {"text": "x"}, input=pipe, output=DummyOutput()) is None
