"""pyaichat's sentences worded for the front end that shows them (``commands.wording``)."""

from __future__ import annotations

import pytest

from pyaichat.commands import all_commands
from pyaichat.commands.wording import worded


@pytest.fixture(autouse=True)
def _registry() -> None:
    all_commands()  # as a front end that words sentences loads it first


@pytest.mark.parametrize(
    ("text", "ipython"),
    [
        ("receipts: 2 of 2 numbers found (/receipts)", "receipts: 2 of 2 numbers found (%ai /receipts)"),
        (
            "changes df in place — /undo cannot take this back",
            "changes df in place — %ai /undo cannot take this back",
        ),
        (
            "Use /model <name>, --model or the config file.",
            "Use %ai /model <name>, --model or the config file.",
        ),
        ("ends with /undo.", "ends with %ai /undo."),
        ("already %ai /undo here", "already %ai /undo here"),
        ("a path /tmp/undo and /undone and /undo/x stay", "a path /tmp/undo and /undone and /undo/x stay"),
        ("a file /save.py stays", "a file /save.py stays"),
    ],
)
def test_commands_are_named_as_typed_after_percent_ai(text: str, ipython: str) -> None:
    assert worded(text, "ipython") == ipython
    assert worded(text, "repl") == text and worded(text, "piped") == text


def test_a_notebook_names_its_places_and_answers_keep_their_paths() -> None:
    edit = "The proposed code is waiting in your next input: edit it if you like, then run it yourself."
    assert worded(edit, "jupyter") == (
        "The proposed code is in a new cell below: edit it if you like, then run it yourself."
    )
    assert worded("see /save x.md", "jupyter", commands=False) == "see /save x.md"
