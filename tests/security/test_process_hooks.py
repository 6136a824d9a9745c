"""Hooks the session may set on the whole process are not reached by a read made in the REPL's process
(issue 44, point 1): a warning goes through the ``warnings`` module's ``showwarning`` and filters (the
session's to replace, or to send to its log files with ``logging.captureWarnings``), and an ``encode`` or
``decode`` through the codec registry's search functions and error handlers (the session may register its
own, even a new ``strict``). Each read below reached one of them in the REPL's process before; now it is
read in C only, read in the walled child (whose hooks are the child's), or refused in one sentence."""

from __future__ import annotations

import codecs
import contextlib
import warnings
from collections.abc import Iterator

import pytest

import pyaichat
from pyaichat.capabilities import call
from pyaichat.configuration.config import Config

HANDLERS = ("strict", "ignore", "replace", "backslashreplace", "surrogateescape")
SETUP = """
import codecs, warnings
import numpy as np, pandas as pd
HITS = []
def search(name):
    HITS.append("codec search " + name)
codecs.register(search)
def handler(exc):
    HITS.append("error handler")
    return ("?", exc.end)
for name in HANDLERS:
    codecs.register_error(name, handler)
big = np.float64(1e308)
wide = np.int64(2**62)
names = pd.Series(["a1", "bb"])
raw = b"\\xff\\xfe"
text = "caf\\xe9"
x = 5
"""
WARNING_READS = ["'\\d'", "len('a\\d')", "1if x else 2", "big * 10", "wide * 4", "names.str.contains('\\d')"]
# Set in the test's own phase: pytest restores the warnings module's state around each phase.
HOOK_WARNINGS = """
warnings.simplefilter("always")
warnings.showwarning = lambda *args, **kwargs: HITS.append("showwarning")
warnings.catch_warnings = lambda *args, **kwargs: HITS.append("catch_warnings")
"""
CODEC_READS = [
    "'a'.encode('pwned')",
    "raw.decode()",
    "str(raw, 'pwned')",
    "text.encode()",
    "raw.decode('ascii')",
]
REFUSED = ["x is 1", "'a'['x']", "(1)(2)"]


@pytest.fixture
def session() -> Iterator[pyaichat.Session]:
    handlers = {name: codecs.lookup_error(name) for name in HANDLERS}
    session = pyaichat.Session(config=Config(audit=False, tool_timeout=5.0))
    session.namespace["HANDLERS"] = HANDLERS
    try:
        result = session.run(SETUP)
        assert result.ok, result.error and result.error.formatted
        yield session
    finally:
        for name, original in handlers.items():
            codecs.register_error(name, original)
        if "search" in session.namespace:
            codecs.unregister(session.namespace["search"])


@pytest.mark.parametrize("expr", WARNING_READS)
def test_a_read_reaches_no_warning_hook_of_the_session_here(session: pyaichat.Session, expr: str) -> None:
    with hooked_warnings(session):
        result = call(session, "eval_expr", {"expr": expr})
    assert session.namespace["HITS"] == [], (expr, result.text, result.error)


@pytest.mark.parametrize("expr", CODEC_READS)
def test_a_read_reaches_no_codec_of_the_session_here(session: pyaichat.Session, expr: str) -> None:
    result = call(session, "eval_expr", {"expr": expr})
    assert session.namespace["HITS"] == [], (expr, result.text, result.error)


@contextlib.contextmanager
def hooked_warnings(session: pyaichat.Session) -> Iterator[None]:
    saved = (warnings.showwarning, warnings.catch_warnings, list(warnings.filters))
    try:
        assert session.run(HOOK_WARNINGS).ok
        yield
    finally:
        warnings.showwarning, warnings.catch_warnings = saved[0], saved[1]
        warnings.filters[:] = saved[2]
        warnings.resetwarnings()
        warnings.filters[:] = saved[2]


@pytest.mark.parametrize("expr", REFUSED)
def test_a_shape_the_compiler_warns_about_is_refused_in_one_sentence(
    session: pyaichat.Session, expr: str
) -> None:
    with hooked_warnings(session):
        result = call(session, "eval_expr", {"expr": expr})
    assert not result.ok and "which Python warns about" in (result.error or ""), result
    assert session.namespace["HITS"] == []


def test_the_same_reads_answer_as_python_would(session: pyaichat.Session) -> None:
    answers = {e: call(session, "eval_expr", {"expr": e}).text or "" for e in ("'\\d'", "1if x else 2")}
    assert "'\\\\d'" in answers["'\\d'"] and answers["1if x else 2"].endswith("1")
