"""The session keeps each input's text output in its history entry: what a saved notebook shows."""

from __future__ import annotations

from pyaichat import Session
from pyaichat.session import OUTPUT_CHARS


def run(session: Session, source: str):
    session.run(source)
    return session.history[-1]


def test_stdout_stderr_and_value_are_kept_apart(capsys):
    s = Session()
    entry = run(s, "import sys\nprint('out'); print('err', file=sys.stderr)\n6 * 7")
    assert entry.stdout == "out\n"
    assert entry.stderr == "err\n"
    assert entry.result == "42"
    assert entry.summary == "out err | 42"  # unchanged: the short summary the assistant reads
    assert capsys.readouterr().out == "out\n42\n"  # still written through, the value echoed once


def test_no_value_no_result_and_a_failure_keeps_its_traceback(capsys):
    s = Session()
    assert run(s, "x = 1").result is None
    assert run(s, "None").result is None
    failed = run(s, "1 / 0")
    assert not failed.ok
    assert failed.stdout == "" and failed.result is None
    assert "Traceback" in failed.stderr
    assert failed.stderr.rstrip().endswith("ZeroDivisionError: division by zero")


def test_output_is_bounded_and_marked_when_cut(capsys):
    s = Session()
    entry = run(s, f"print('a' * {OUTPUT_CHARS + 500})\n'b' * 100")
    assert entry.stdout.startswith("a" * OUTPUT_CHARS)
    assert entry.stdout.endswith("… [501 more characters not kept]\n")  # 500 + the newline
    assert entry.result == "\n… [102 more characters not kept]\n"  # no room left: only the mark
    total = len(entry.stdout) + len(entry.stderr) + len(entry.result)
    assert total < OUTPUT_CHARS + 100


def test_exec_result_output_is_still_the_short_capture(capsys):
    s = Session()
    result = s.run("print('x' * 1000)")
    assert result.output == "x" * 200  # what the model is told about a run stays as it was
    assert len(s.history[-1].stdout) == 1001


def test_a_broken_repr_is_not_a_failure(capsys):
    s = Session()
    s.run("class B:\n    def __repr__(self):\n        raise ValueError('no')\n")
    entry = run(s, "B()")
    assert entry.ok and entry.result is None and entry.summary == "<B>"
