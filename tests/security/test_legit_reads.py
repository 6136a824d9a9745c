"""Legitimate reads keep working (issue 44, point 8): typical data-science expressions over pandas, numpy,
polars, dicts, strings and the session's own objects answer ``eval_expr`` with the value a person expects —
read in-process where structure alone reads them, else in the walled child — and reaching the interpreter's
own modules through a library's attributes stays refused."""

from __future__ import annotations

import os

import pytest

import pyaichat
from pyaichat.capabilities import call
from pyaichat.capabilities.sandbox import policy_for
from pyaichat.configuration.config import Config

SETUP = """
from dataclasses import dataclass
import numpy as np
import pandas as pd
import polars as pl

df = pd.DataFrame({"city": ["Oslo", "Lima", "Oslo", "Pune"], "sales": [10.5, 3.0, 2.5, 7.0],
                   "units": [1, 2, 3, 4]})
s = df["sales"]
arr = np.arange(12.0).reshape(3, 4)
v = np.array([3, 1, 2])
pf = pl.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
d = {"b": 2, "a": 1}
cfg = {"db": {"host": "h", "port": 5432}, "debug": True}
xs = [3, 1, 2]
names = ["ann", "bob"]
text = "Hello World"
n = 41


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


@dataclass
class Settings:
    lr: float = 0.1
    epochs: int = 3


p = Point(3, 4)
run = Settings()
"""

# (expression, a piece of the expected answer, where it is read: "here" in-process, "child" the walled child)
READS: list[tuple[str, str, str]] = [
    # plain values
    ("n", "41", "here"),
    ("n + 1", "42", "here"),
    ("len(xs)", "3", "here"),
    ("sorted(xs)", "[1, 2, 3]", "here"),
    ("max(xs)", "3", "here"),
    ("sum(xs) / len(xs)", "2.0", "here"),
    ("xs[-1]", "2", "here"),
    ("xs[::-1]", "[2, 1, 3]", "here"),
    ("sorted(d.items())", "[('a', 1), ('b', 2)]", "here"),
    ("list(d)", "['b', 'a']", "here"),
    ("d['a']", "1", "here"),
    ("d.get('z', 0)", "0", "here"),
    ("cfg['db']['port']", "5432", "here"),
    ("'db' in cfg", "True", "here"),
    ("len(cfg)", "2", "here"),
    ("text.lower()", "'hello world'", "here"),
    ("text.split()", "['Hello', 'World']", "here"),
    ("', '.join(names)", "'ann, bob'", "here"),
    ("names[0].upper()", "'ANN'", "here"),
    ("isinstance(n, int)", "True", "here"),
    ("abs(-n)", "41", "here"),
    ("round(3.14159, 2)", "3.14", "here"),
    ("divmod(17, 5)", "(3, 2)", "here"),
    ("sorted(set(names) | {'cy'})", "['ann', 'bob', 'cy']", "here"),
    ("'%.2f' % 3.14159", "'3.14'", "here"),
    ("2 ** 10", "1024", "here"),
    ("f'{n:05d}'", "'00041'", "child"),
    ("[x * 2 for x in xs]", "[6, 2, 4]", "child"),
    ("{k: v for k, v in d.items() if v > 1}", "{'b': 2}", "child"),
    # pandas
    ("type(df).__name__", "'DataFrame'", "here"),
    ("df.shape", "(4, 3)", "here"),
    ("len(df)", "4", "here"),
    ("df.columns", "'sales'", "here"),
    ("df.index", "RangeIndex", "here"),
    ("s.shape", "(4,)", "here"),
    ("s.name", "'sales'", "here"),
    ("list(df.columns)", "['city', 'sales', 'units']", "child"),
    ("df.dtypes", "float64", "child"),
    ("df['sales'].mean()", "5.75", "child"),
    ("df.sales.sum()", "23.0", "child"),
    ("df.head(2)", "Lima", "child"),
    ("df.describe().loc['mean', 'units']", "2.5", "child"),
    ("df.groupby('city')['sales'].sum()", "13.0", "child"),
    ("df[df.sales > 5].city.tolist()", "['Oslo', 'Pune']", "child"),
    ("df['city'].value_counts()['Oslo']", "2", "child"),
    ("df.isna().sum().sum()", "0", "child"),
    ("df.sort_values('sales').city.iloc[0]", "'Oslo'", "child"),
    ("df.loc[0, 'city']", "'Oslo'", "child"),
    ("df.iloc[-1]['units']", "4", "child"),
    ("s.max()", "10.5", "child"),
    ("df.nunique()['city']", "3", "child"),
    # numpy
    ("arr.shape", "(3, 4)", "here"),
    ("arr.ndim", "2", "here"),
    ("v.size", "3", "here"),
    ("arr.dtype", "float64", "here"),
    ("arr.sum()", "66.0", "child"),
    ("arr.mean(axis=0)", "4.", "child"),
    ("arr[1, 2]", "6.0", "child"),
    ("arr.T.shape", "(4, 3)", "child"),
    ("np.argmax(v)", "0", "child"),
    ("v.tolist()", "[3, 1, 2]", "child"),
    ("np.sort(v)", "[1 2 3]", "child"),
    # polars
    ("pf.shape", "(3, 2)", "child"),
    ("pf.columns", "['a', 'b']", "child"),
    ("pf['a'].sum()", "6", "child"),
    ("pf.height", "3", "child"),
    # the session's own objects
    ("p.x", "3", "here"),
    ("p.norm()", "5.0", "child"),
    ("p", "Point(3, 4)", "child"),
    ("run.lr", "0.1", "here"),
    ("run", "Settings(lr=0.1, epochs=3)", "child"),
]
MODULE_ROADS = ["pd.compat.sys", "pd.io.common.os", "pd.core.common.builtins"]


@pytest.fixture(scope="module")
def session() -> pyaichat.Session:
    s = pyaichat.Session(config=Config(audit=False))
    result = s.run(SETUP)
    assert result.ok, result.error and result.error.formatted
    return s


def test_there_are_sixty_typical_reads() -> None:
    assert len(READS) >= 60


@pytest.mark.parametrize(("expr", "expected", "where"), READS, ids=[r[0] for r in READS])
def test_a_typical_read_answers_with_the_expected_value(
    session, monkeypatch: pytest.MonkeyPatch, expr: str, expected: str, where: str
) -> None:
    if where == "child" and not policy_for(session.config.sandbox_isolation).walled and "norm" in expr:
        pytest.skip("calling the session's own method needs the kernel walls")
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    result = call(session, "eval_expr", {"expr": expr})
    assert result.ok, result.error
    assert expected in result.text, result.text
    assert ("child" if forks else "here") == where


@pytest.mark.parametrize("expr", MODULE_ROADS)
def test_the_interpreters_modules_stay_refused(session, expr: str) -> None:
    result = call(session, "eval_expr", {"expr": expr})
    assert not result.ok and "module is not available" in result.error, result
