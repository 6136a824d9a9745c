"""Session semantics: echo, ``_``, multi-line input, errors and the recorded last error, SystemExit,
Ctrl-C."""

from __future__ import annotations

import signal
import sys
import threading

import pytest

from pyaichat import Session
from pyaichat.session import needs_more_input


def test_final_expression_is_echoed_and_stored_in_underscore(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    result = s.run("x = 41\nx + 1")
    assert capsys.readouterr().out == "42\n"
    assert result.ok and result.value == 42 and result.has_value
    assert s.namespace["_"] == 42


def test_statements_are_not_echoed_and_none_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("y = [1, 2]")
    s.run("None")
    s.run("print('hi')")
    assert capsys.readouterr().out == "hi\n"
    assert "_" not in s.namespace


def test_underscore_history_shifts(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("1")
    s.run("2")
    s.run("3")
    assert (s.namespace["_"], s.namespace["__"], s.namespace["___"]) == (3, 2, 1)


def test_multiline_block_and_only_last_expression_echoes(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("total = 0\nfor i in range(4):\n    total += i\n'ignored'\ntotal")
    assert capsys.readouterr().out == "6\n"


def test_namespace_persists_across_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("def f(a):\n    return a * 2\n")
    s.run("f(21)")
    assert capsys.readouterr().out.strip() == "42"


def test_exception_prints_traceback_without_pyaichat_frames(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    result = s.run("def g():\n    return {}['missing']\n\ng()")
    err = capsys.readouterr().err
    assert not result.ok
    assert err.startswith("Traceback (most recent call last):")
    assert 'File "<input-1>", line 4, in <module>' in err
    assert "session.py" not in err and "pyaichat" not in err
    assert err.rstrip().endswith("KeyError: 'missing'")


def test_last_error_records_type_message_frames_and_exact_segment() -> None:
    s = Session()
    s.run("import json")
    s.run("data = {'a': 1}\nvalue = data['a'] + json.loads('[1, 2')[0]")
    err = s.last_error
    assert err is not None
    assert err.type_name == "JSONDecodeError"
    assert "Expecting" in err.message
    assert err.input_number == 2
    assert err.lineno == 2
    assert err.segment == "json.loads('[1, 2')"
    assert err.frames[0].filename == "<input-2>"
    assert err.frames[-1].filename.endswith("decoder.py")
    assert err.source.startswith("data = {'a': 1}")


def test_sys_last_variables_are_set_like_the_standard_repl() -> None:
    s = Session()
    s.run("1/0")
    assert sys.last_type is ZeroDivisionError
    assert isinstance(sys.last_value, ZeroDivisionError)
    assert sys.last_traceback is not None
    if sys.version_info >= (3, 12):
        assert sys.last_exc is sys.last_value


def test_syntax_error_is_reported_and_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    result = s.run("x = (1,")
    assert not result.ok
    err = capsys.readouterr().err
    assert "SyntaxError" in err
    assert s.last_error is not None and s.last_error.type_name == "SyntaxError"
    # Like ``python``: no traceback header and no frames of the compiler that found it.
    assert err.startswith('  File "<input-1>", line 1\n    x = (1,\n') and "ast.py" not in err


def test_history_is_numbered_with_short_summaries(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("print('x' * 500)")
    s.run("40 + 2")
    s.run("undefined_name")
    numbers = [e.number for e in s.history]
    assert numbers == [1, 2, 3]
    assert len(s.history[0].summary) <= 200
    assert s.history[1].summary == "42"
    assert s.history[2].summary == "NameError: name 'undefined_name' is not defined"
    assert not s.history[2].ok


def test_broken_repr_is_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    result = s.run("class B:\n    def __repr__(self):\n        raise RuntimeError('nope')\n\nB()")
    assert result.ok
    assert "repr of B failed: RuntimeError: nope" in capsys.readouterr().out


def test_system_exit_propagates_with_code() -> None:
    s = Session()
    with pytest.raises(SystemExit) as info:
        s.run("import sys\nsys.exit(3)")
    assert info.value.code == 3


def test_keyboard_interrupt_stops_user_code_and_keeps_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.run("keep = [1, 2, 3]")
    timer = threading.Timer(0.2, lambda: signal.raise_signal(signal.SIGINT))
    timer.start()
    result = s.run("while True:\n    pass\n")
    timer.join()
    assert result.interrupted and not result.ok
    assert "KeyboardInterrupt" in capsys.readouterr().err
    assert s.namespace["keep"] == [1, 2, 3]
    assert s.last_error is None  # an interrupt is not an error to explain


@pytest.mark.parametrize(
    ("source", "more"),
    [
        ("x = 1", False),
        ("if x:", True),
        ("if x:\n    y = 1", True),
        ("if x:\n    y = 1\n", False),
        ("foo(1,", True),
        ('s = """abc', True),
        ("x = )", False),  # a syntax error is complete: running it reports the error
    ],
)
def test_needs_more_input_follows_the_interactive_rules(source: str, more: bool) -> None:
    assert needs_more_input(source) is more
