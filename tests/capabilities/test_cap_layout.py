"""``capabilities.layout``: where an object's data is, found without running any of its code — the one place
that knows pandas' private layout, numpy, Arrow and other buffers, and how to read a plain object's state."""

from __future__ import annotations

import array
import ast
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pyaichat.capabilities import layout, structural

SRC = Path(__file__).resolve().parents[2] / "src" / "pyaichat"
FINGERPRINTERS = (
    "persist/fingerprint.py",
    "capabilities/sandbox/forms.py",
    "capabilities/sandbox/ownership.py",
)


def test_the_fingerprinters_keep_no_private_layout_of_their_own() -> None:
    """The three fingerprints share one knowledge of layouts: none of them names a library's private
    attribute, reads raw memory or an object's ``__dict__`` itself, or iterates a container behind its
    type's back."""
    private = {"_mgr", "_ndarray", "_pa_array", "_data", "_mask", "_codes", "_levels", "_cache",
               "__array_interface__", "__dict__", "__slots__"}  # fmt: skip
    private_calls = {"buffers", "buffer_info", "data_ptr", "__getattribute__", "__iter__", "string_at"}
    for name in FINGERPRINTERS:
        tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
        read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        read |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        called = {
            n.func.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        }
        assert not read & private, f"{name} reads {sorted(read & private)} itself"
        assert not called & private_calls, f"{name} calls {sorted(called & private_calls)} itself"


def _ids(items) -> set[int]:
    return {id(x) for x in items}


def test_a_frames_parts_are_its_blocks_index_and_columns() -> None:
    df = pd.DataFrame(
        {"a": [1, 2], "b": [1.0, 2.0], "s": ["x", "y"], "m": pd.array([1, None], dtype="Int64")}
    )
    parts = layout.pandas_parts(df)
    blocks = layout.pandas_blocks(df)
    assert blocks is not None and _ids(blocks) <= _ids(parts)
    assert any(isinstance(p, np.ndarray) and np.shares_memory(p, df["a"].to_numpy()) for p in parts)
    assert {id(df.index), id(df.columns)} <= _ids(parts)
    series = df["s"]
    assert id(series.index) in _ids(layout.pandas_parts(series))


@pytest.mark.parametrize(
    ("values", "backing"),
    [
        (pd.array([1, None], dtype="Int64"), ("_data", "_mask")),
        (pd.Categorical(["a", "b", "a"]), ("_ndarray",)),
        (pd.array(pd.to_datetime(["2024-01-01"])), ("_ndarray",)),
        (pd.arrays.IntervalArray.from_breaks([0, 1, 2]), ("_left", "_right")),
    ],
)
def test_an_extension_arrays_parts_are_the_arrays_behind_it(values, backing) -> None:
    parts = layout.pandas_parts(values)
    for attr in backing:
        assert id(getattr(values, attr)) in _ids(parts), attr


def test_arrow_backed_strings_and_categories_are_parts() -> None:
    pytest.importorskip("pyarrow")
    strings = pd.array(["x", "y"], dtype="string[pyarrow]")
    assert id(strings._pa_array) in _ids(layout.pandas_parts(strings))
    cat = pd.Categorical(["a", "b"])
    assert any(isinstance(p, pd.Index) and list(p) == ["a", "b"] for p in layout.pandas_parts(cat))


def test_an_index_holds_its_values_and_a_range_index_none_it_would_compute() -> None:
    index = pd.Index([3, 1, 2])
    assert any(isinstance(p, np.ndarray) and list(p) == [3, 1, 2] for p in layout.pandas_parts(index))
    big = pd.RangeIndex(10_000_000)
    assert layout.pandas_parts(big) == [] and layout.range_of(big) == (0, 10_000_000, 1)
    assert "_data" not in big._cache  # nothing built on the user's object
    multi = pd.MultiIndex.from_arrays([[1, 2], ["a", "b"]])
    assert _ids(multi.codes) <= _ids(layout.pandas_parts(multi))


def test_an_indexer_writes_into_its_frame_and_other_pandas_objects_have_no_known_layout() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    assert layout.pandas_parts(df.loc) == [df] and layout.pandas_parts(df.iloc) == [df]
    assert layout.pandas_parts(df.groupby("a")) is None


def test_memory_of_buffer_holders() -> None:
    arr = np.arange(10, dtype=np.int64)
    start, end = layout.array_span(arr)
    assert layout.memory_of(arr) == [(start, end)] and end - start == 80
    view = arr[::-2]  # a negative stride spans backwards from its first element
    lo, hi = layout.array_span(view)
    assert start <= lo < hi <= end
    data = bytearray(b"abcd")
    ((lo, hi),) = layout.memory_of(data)
    assert bytes(layout.raw(lo, hi)) == b"abcd"
    data += b"e"  # the export ended: the bytearray can still be resized
    numbers = array.array("d", [1.0, 2.0])
    ((lo, hi),) = layout.memory_of(numbers)
    assert hi - lo == 16 and bytes(layout.raw(lo, hi)) == numbers.tobytes()
    assert layout.memory_of([1, 2]) is None and layout.memory_of(bytearray()) == []


def test_arrow_memory_is_its_buffers() -> None:
    pa = pytest.importorskip("pyarrow")
    chunked = pa.chunked_array([["a", "bb"], ["ccc"]])
    spans = layout.memory_of(chunked)
    expected = [b for chunk in chunked.chunks for b in chunk.buffers() if b is not None and b.size]
    assert [(b.address, b.address + b.size) for b in expected] == spans
    table = pa.table({"x": [1, 2], "s": ["a", "b"]})
    assert layout.memory_of(table) == [s for col in table.columns for s in layout.memory_of(col)]
    assert len(layout.memory_of(table)) == 1 + 2  # int64 data; string offsets and data (no validity)


def test_builtin_containers_are_read_through_their_base_type() -> None:
    calls = []

    class Logged(list):
        def __iter__(self):
            calls.append("iter")
            return iter(())

        def __len__(self):
            calls.append("len")
            return 0

    class Keys(dict):
        def __iter__(self):
            calls.append("iter")
            return iter(())

        def values(self):
            calls.append("values")
            return []

    logged, keys = Logged([1, 2]), Keys(a=1)
    assert layout.builtin_base(Logged) is list and layout.builtin_base(deque) is deque
    assert layout.builtin_items(logged, list) == [1, 2] and layout.builtin_len(logged, list) == 2
    assert layout.builtin_keys(keys) == ["a"] and layout.builtin_items(keys, dict) == [1]
    assert layout.builtin_base(int) is None and calls == []


def test_instance_state_runs_no_getattr_and_reads_slots() -> None:
    calls = []

    class Slotted:
        __slots__ = ("a", "b")

        def __getattr__(self, name):
            calls.append(name)
            return 1

    class Plain:
        def __init__(self):
            self.x = 1

        @property
        def prop(self):
            calls.append("prop")
            return 2

    slotted = Slotted()
    slotted.a = 5
    assert structural.instance_state(slotted) == {"Slotted.a": 5}
    assert structural.instance_state(Plain()) == {"x": 1}
    assert structural.instance_state(object()) is None and calls == []


def test_no_user_code_runs_not_even_a_class_property() -> None:
    """``isinstance`` would ask an object's ``__class__``: the layout checks types with ``issubclass``."""
    calls = []

    class Disguised:
        @property
        def __class__(self):
            calls.append("__class__")
            return np.ndarray

    obj = Disguised()
    assert not layout.is_ndarray(obj) and layout.memory_of(obj) is None
    assert layout.builtin_base(type(obj)) is None and structural.instance_state(obj) == {}
    assert calls == []


def test_the_namespaces_are_the_sessions_and_the_module_table() -> None:
    ns: dict = {}
    assert layout.namespace_ids(ns) == {id(ns), id(sys.modules)}
    assert layout.namespace_ids(None) == {id(sys.modules)}
