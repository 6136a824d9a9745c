"""/tools, /inspect, /last_error and /audit through the shared Controller, in both modes and in piped
input."""

from __future__ import annotations

import io

import pytest

from pyaichat.assemble import assemble
from pyaichat.controller import Controller, Mode
from pyaichat.piped import PlainFrontEnd, run_piped
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


def plain_controller(out: io.StringIO) -> Controller:
    runtime = LocalRuntime(Session())
    return assemble(runtime, PlainFrontEnd(out=out))


@pytest.fixture
def ctrl():
    out = io.StringIO()
    controller = plain_controller(out)
    controller.out = out  # type: ignore[attr-defined]
    return controller


def said(ctrl) -> str:
    text = ctrl.out.getvalue()
    ctrl.out.seek(0)
    ctrl.out.truncate()
    return text


def test_tools_lists_every_capability_with_its_one_line_description(ctrl):
    ctrl.handle("/tools")
    text = said(ctrl)
    lines = text.splitlines()
    for name in ("list_globals", "get_type", "get_repr", "get_dir", "get_doc", "get_last_exception"):
        start = next(n for n, line in enumerate(lines) if line.strip().startswith(name + " "))
        column = len(lines[start]) - len(lines[start][2:].split(" ", 1)[1].lstrip())
        row = [lines[start]]  # the description goes on under its own column, never at column 0
        for line in lines[start + 1 :]:
            if not (line[:column].isspace() and line[column] != " "):
                break
            row.append(line)
        description = " ".join(line.strip() for line in row)[len(name) :].strip()
        assert description.endswith(".") and len(description) < 250
        assert all(len(line) <= 100 for line in row)
    assert "privacy level: sample" in lines[0]


@pytest.mark.parametrize("mode", [Mode.PYTHON, Mode.ASSISTANT])
def test_inspect_shows_type_value_and_doc_in_both_modes(ctrl, mode):
    ctrl.handle("def area(w, h=2):\n    'Area of a rectangle.'\n    return w * h\n")
    ctrl.handle("sizes = [3, 4, 5]")
    ctrl.set_mode(mode)
    said(ctrl)
    ctrl.handle("/inspect sizes")
    text = said(ctrl)
    assert text.startswith("sizes: list\nmodule: builtins\n")
    assert "value:\nlist, 3 items of int\n[3, 4, 5]" in text
    assert "doc:\n(documentation of its type, list)" in text
    ctrl.handle("/inspect area")
    assert "signature: area(w, h=2)\nArea of a rectangle." in said(ctrl)


def test_inspect_explains_refusals_and_usage(ctrl):
    ctrl.handle("/inspect open('x', 'w')")
    assert "open() is not available in the sandbox" in said(ctrl)
    ctrl.handle("/inspect")
    assert said(ctrl).startswith("Usage: /inspect <expr>")


def test_last_error_shows_the_structured_exception(ctrl):
    ctrl.handle("/last_error")
    assert said(ctrl).strip() == "No exception has been raised in this session yet."
    ctrl.handle("data = {'a': 1}")
    ctrl.handle("data['b']")
    said(ctrl)
    ctrl.handle("/last_error")
    text = said(ctrl)
    assert text.startswith("KeyError: 'b'\nfailing segment (input [2], line 1): data['b']")
    assert "names used by the failing segment:\n  data: dict, 1 key: {'a': 1}" in text


def test_audit_shows_the_last_calls_readably(ctrl):
    ctrl.handle("/audit")
    assert "No capability calls recorded" in said(ctrl)
    ctrl.handle("x = 1")
    ctrl.handle("/inspect x")
    said(ctrl)
    ctrl.handle("/audit 2")
    lines = said(ctrl).splitlines()
    assert lines[0].startswith("Last 2 capability calls (")
    assert "get_repr(expr='x')  ok" in lines[1] and lines[1].endswith("[user]")
    assert "get_doc(expr='x')  ok" in lines[2]
    ctrl.handle("/audit many")
    assert said(ctrl).startswith("Usage: /audit [n]")


def test_the_commands_work_in_piped_input():
    out = io.StringIO()
    ctrl = plain_controller(out)
    script = "nums = [1, 2]\n/inspect nums\n1/0\n/last_error\n/tools\n/audit 1\n"
    import contextlib

    with contextlib.redirect_stderr(io.StringIO()):
        assert run_piped(ctrl, io.StringIO(script)) == 0
    text = out.getvalue()
    assert "nums: list" in text and "[1, 2]" in text
    assert "ZeroDivisionError: division by zero\nfailing segment (input [2], line 1): 1/0" in text
    assert "get_last_exception" in text and "capabilities (read-only" in text
    assert "Last 1 capability call" in text
