"""``summary.one_line`` / ``describe``: bounded, type-aware, never consuming, surviving hostile objects."""

from __future__ import annotations

import collections
import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from pyaichat.capabilities.summary import describe, one_line


class BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class BadLen:
    def __len__(self):
        raise RuntimeError("no len")

    def __repr__(self):
        return "BadLen()"


class LoopRepr:
    def __repr__(self):
        while True:
            pass


class LlmAware:
    def _repr_llm_(self):
        return "A customer table with 3 segments."


class Point:
    def __init__(self):
        self.x, self.y = 1, 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (list(range(10_000)), "list, 10,000 items: [0, 1, 2, … 9,997 more]"),
        ({"a": 1}, "dict, 1 key: {'a': 1}"),
        ("hello", "str, 5 chars: 'hello'"),
        (42, "int 42"),
        (None, "NoneType None"),
        (pd.DataFrame({"a": [1], "b": ["x"]}), "DataFrame 1×2: a int64, b str"),
        (np.zeros((3, 4)), "ndarray shape (3, 4), dtype float64"),
        (pd.Series([1.0, 2.0], name="s"), "Series 's', 2 values, dtype float64"),
        (len, "builtin_function_or_method len(obj, /)"),
    ],
)
def test_one_line_is_type_aware(value, expected):
    assert one_line(value) == expected


def test_one_line_of_a_function_shows_its_signature_and_a_class_its_name():
    def merge(left, right, how="inner"):
        return left

    assert one_line(merge) == "function merge(left, right, how='inner')"
    assert one_line(Point) == "class Point (from test_cap_summary)"


def test_one_line_respects_width_and_privacy():
    assert len(one_line(list(range(1000)), width=20)) == 20
    assert one_line("secret text", privacy="schema") == "str, 11 chars"
    assert one_line([1, 2, 3], privacy="schema") == "list, 3 items of int"
    assert one_line(pd.DataFrame({"a": [1]}), privacy="names") == "pandas.DataFrame"


def test_a_generator_and_an_iterator_are_never_advanced():
    gen = (i for i in range(5))
    it = iter([1, 2, 3])
    for privacy in ("names", "schema", "sample", "full"):
        one_line(gen, privacy), describe(gen, privacy), one_line(it, privacy), describe(it, privacy)
        describe([gen, it], privacy), describe({"g": gen}, privacy)
    assert inspect.getgeneratorstate(gen) == "GEN_CREATED"
    assert next(gen) == 0 and next(it) == 1


def test_large_values_give_bounded_output_without_building_the_whole_repr():
    big = list(range(10**6))
    text = describe(big)
    assert len(text) < 300 and "999,994 more" in text
    huge_str = "x" * 10**7
    assert len(describe(huge_str)) < 500 and "more)" in describe(huge_str)
    assert "digits" in describe(10**5000)  # repr would raise ValueError past 4,300 digits
    nested = [[list(range(100))] * 100] * 100
    assert len(describe(nested, limit=4000)) < 1000


def test_a_dataframe_shows_shape_dtypes_head_and_tail_only():
    df = pd.DataFrame({"id": range(100_000), "name": [f"row{i}" for i in range(100_000)]})
    text = describe(df)
    assert "DataFrame: 100,000 rows × 2 columns" in text
    assert "id: int64" in text and "row0" in text and "row99999" in text
    assert "row50000" not in text
    assert "row0" not in describe(df, "schema") and "id: int64" in describe(df, "schema")


def test_an_array_shows_shape_dtype_and_edges():
    text = describe(np.arange(10**6))
    assert "shape (1000000,), dtype int64" in text and "999999" in text and "..." in text
    assert "999999" not in describe(np.arange(10**6), "schema")


def test_a_dtype_is_not_described_as_an_empty_container():
    assert "items" not in describe(np.dtype("float64")) and "float64" in describe(np.dtype("float64"))
    assert "items" not in one_line(np.dtype("int32"))


def test_hostile_objects_are_survived():
    assert "raised RuntimeError" in describe(BadRepr())
    assert "raised RuntimeError" in one_line(BadRepr())
    assert "BadLen()" in describe(BadLen())
    assert "took too long" in describe(LoopRepr())
    assert "took too long" in describe([LoopRepr()])


def test_repr_llm_is_used_at_sample_and_full_only():
    assert describe(LlmAware()) == "A customer table with 3 segments."
    assert "customer" not in describe(LlmAware(), "schema")
    assert len(describe(type("Long", (), {"_repr_llm_": lambda self: "y" * 10_000})(), limit=500)) <= 500


def test_objects_with_default_repr_show_their_attributes():
    assert "x=1, y=2" in describe(Point())
    assert "x: int, y: int" in describe(Point(), "schema")


def test_secret_keys_and_attributes_are_redacted_in_containers():
    text = describe({"user": "bob", "password": "hunter2", "token_count": 3})
    assert "hunter2" not in text and "'token_count': 3" in text and "bob" in text


def test_namedtuple_defaultdict_and_deque_keep_their_types():
    P = collections.namedtuple("P", "x y")
    assert "P(x=1, y=2)" in describe(P(1, 2))
    assert "defaultdict({'a': 1})" in describe(collections.defaultdict(int, a=1))
    assert "deque([1, 2])" in describe(collections.deque([1, 2]))


def test_os_environ_and_copies_of_it_are_never_described():
    import os

    copy = dict(os.environ)
    for privacy in ("schema", "sample", "full"):
        parts = [
            describe(os.environ, privacy),
            one_line(os.environ, privacy),
            describe({"e": os.environ}, privacy),
        ]
        parts += [describe(copy, privacy), one_line(copy, privacy), describe([copy], privacy)]
        text = "\n".join(parts)
        assert os.environ["PATH"] not in text and "PATH" not in text
        assert "environment variables" in text


def test_summary_does_not_import_pandas_or_numpy():
    code = textwrap.dedent(
        """
        import sys
        from pyaichat.capabilities.summary import describe, one_line
        describe([1, {"a": (1, 2)}]); one_line("x"); describe(object())
        print("pandas" in sys.modules, "numpy" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_dataframe_cell_with_a_looping_repr_is_survived():
    df = pd.DataFrame({"obj": [LoopRepr(), 1]})
    text = describe(df)
    assert (
        text.startswith("DataFrame: 2 rows × 1 columns")
        and "rows not shown: <repr of a DataFrame cell took" in text
    )
    assert one_line(df) == "DataFrame 2×1: obj object"
    assert "values not shown" in describe(df["obj"])
