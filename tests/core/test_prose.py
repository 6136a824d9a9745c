"""A question typed at the Python prompt is told apart from Python with a typo (``looks_like_question``)."""

from __future__ import annotations

import pytest

from pyaichat.prose import looks_like_question

QUESTIONS = [
    "why did that fail?",
    "Why did that merge fail?",
    "what is in df",
    "what's in df?",
    "what’s wrong with df?",
    "why is df.merge(other, on='id') empty?",
    "why does x == 2 fail?",
    "for which rows is total negative?",
    "is df empty?",
    "show me the data",
    "the mean of df.price is wrong",
    "how many rows does sales have",
    "explain the last error",
    "can you fix it",
    "  why did that fail?",
]

NOT_QUESTIONS = [
    "x = = 2",
    "for i in range(3) print(i)",
    "import pandas as pd numpy",
    "def f(x) return x",
    "class Foo bar baz",
    "if x is not None return x",
    "print hello world",
    "print 'the answer'",
    "return the value",
    "x = the value of y",
    "lambda x: x +",
    "df.groupby('a').sum() the",
    "pd.read_csv('a b c'",
    "f(x y z)",
    "df?",  # IPython's help syntax, one word
    "df.head?",
    "a b c",
    "hello world foo",
    "1 2 3 4",
    "what",
    "SELECT * FROM orders",
    "%timeit why does this take so long",  # IPython's own syntax
    "!ls what is here",
    "x = 1",  # parses: not a failed question
]


@pytest.mark.parametrize("line", QUESTIONS)
def test_a_question_is_seen(line):
    assert looks_like_question(line)


@pytest.mark.parametrize("line", NOT_QUESTIONS)
def test_code_with_a_typo_is_not_a_question(line):
    assert not looks_like_question(line)


def test_what_parses_is_not_a_question_that_failed():
    """Python runs these (a NameError follows, not a SyntaxError): only input that did not parse is asked
    about."""
    assert not looks_like_question("what is x")  # a comparison of two names
    assert not looks_like_question("what if x else y")  # a conditional expression
    assert not looks_like_question("not the_end")


def test_several_lines_are_code():
    assert not looks_like_question("why did\nthat fail?")
