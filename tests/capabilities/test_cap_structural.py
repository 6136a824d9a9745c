"""``structural`` and ``library_metadata``: reading an object by structure runs none of its code — not a
property whatever its getter (``property(list.pop)``, ``property(partial(next, it))``), not a
``__getattribute__``/``__getattr__``/``__class__`` of its class, not a metaclass's, not a key's ``__eq__`` —
and numpy's and pandas' metadata comes from where they store it, with no code of theirs run."""

from __future__ import annotations

import collections
import functools
import sys
import types

import numpy as np
import pandas as pd
import pytest

from pyaichat.capabilities import library_metadata as meta
from pyaichat.capabilities import structural

CALLS: list[str] = []


class Meta(type):
    def __getattribute__(cls, name):
        CALLS.append(f"meta.{name}")
        return super().__getattribute__(name)

    def __eq__(cls, other):
        CALLS.append("meta.__eq__")
        return False

    def __hash__(cls):
        CALLS.append("meta.__hash__")
        return 1


class Loud(metaclass=Meta):
    """Every hook a class can have, each one counted."""

    stack = [1, 2, 3]
    top = property(list.pop)
    it = iter([1, 2, 3])
    nxt = property(functools.partial(next, it))

    def __init__(self) -> None:
        self.x = 1

    def __getattribute__(self, name):
        CALLS.append(f"getattribute.{name}")
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        CALLS.append(f"getattr.{name}")
        raise AttributeError(name)

    @property
    def __class__(self):
        CALLS.append("__class__")
        return int


class Quiet:
    """No hook of its own but a property and a slot-free ``__dict__``."""

    kind = "k"
    top = property(list.pop)

    def __init__(self) -> None:
        self.x = 1

    def method(self) -> int:
        return 1


class Key:
    def __eq__(self, other):
        CALLS.append("key.__eq__")
        return False

    def __hash__(self):
        CALLS.append("key.__hash__")
        return hash("x")


@pytest.fixture(autouse=True)
def _quiet() -> None:
    CALLS.clear()


def test_a_class_is_read_through_types_own_descriptors() -> None:
    assert structural.name_of(Loud) == "Loud" and structural.module_of(Loud) == __name__
    assert structural.mro(Loud)[0] is Loud and "top" in structural.own_dict(Loud)
    assert structural.is_subclass(Loud, object) and not structural.is_subclass(Loud, int)
    assert not structural.one_of(Loud, structural.ids(int, str))
    assert CALLS == []


def test_an_instance_with_its_own_getattribute_is_not_read() -> None:
    loud = object.__new__(Loud)
    for name in ("x", "top", "nxt", "__class__"):
        with pytest.raises(structural.NotStructural):
            structural.attribute(loud, name)
    assert CALLS == [] and Loud.stack == [1, 2, 3]


def test_a_property_is_never_read_whatever_its_getter() -> None:
    quiet = Quiet()
    quiet.stack = [1, 2]
    with pytest.raises(structural.NotStructural, match="property"):
        structural.attribute(quiet, "top")
    assert structural.attribute(quiet, "x") == 1 and structural.attribute(quiet, "kind") == "k"
    bound = structural.attribute(quiet, "method")
    assert type(bound) is types.MethodType and bound() == 1
    with pytest.raises(structural.NoAttribute):
        structural.attribute(quiet, "nothing")


def test_a_key_that_is_not_a_name_stops_the_look_up() -> None:
    quiet = Quiet()
    quiet.__dict__[Key()] = 1
    keyed = {Key(): 1}
    CALLS.clear()
    with pytest.raises(structural.NotStructural):
        structural.attribute(quiet, "x")
    assert structural.is_plain({"a": [1, (2, "b")]}) and not structural.is_plain(keyed)
    assert CALLS == []


def test_class_attributes_and_metadata_run_no_metaclass_code() -> None:
    assert structural.class_attribute(Quiet, "__name__") == "Quiet"
    assert structural.class_attribute(Quiet, "top") is Quiet.__dict__["top"]  # the property object itself
    with pytest.raises(structural.NotStructural, match="metaclass"):
        structural.class_attribute(Loud, "__name__")
    assert CALLS == []


def test_a_chainmap_and_a_defaultdict_are_never_asked() -> None:
    layers = collections.ChainMap({}, collections.defaultdict(list))
    state = structural.instance_state(layers)
    assert state is not None and type(state["maps"]) is list
    assert not structural.is_plain(layers) and not structural.is_plain(collections.defaultdict(list))
    assert dict(layers.maps[1]) == {}


def test_pandas_metadata_is_read_from_its_stores_without_pandas_code(monkeypatch) -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": pd.array([1, None], dtype="Int64")})
    frame.attrs["note"] = Key()
    column = frame["c"]
    monkeypatch.setattr(pd.DataFrame, "shape", property(lambda self: CALLS.append("shape")))
    monkeypatch.setattr(pd.Index, "__len__", lambda self: CALLS.append("len") or 0)
    assert meta.metadata(frame, "shape") == (2, 3)
    assert [meta.dtype_text(d) for d in meta.frame_dtypes(frame)] == ["int64", "str", "Int64"]
    assert meta.index_labels(meta.metadata(frame, "columns"), 5) == ["a", "b", "c"]
    assert meta.dtype_text(meta.metadata(column, "dtype")) == "Int64"
    assert CALLS == []


def test_numpy_metadata_is_its_c_fields() -> None:
    arr = np.arange(6.0).reshape(2, 3)
    assert [meta.metadata(arr, n) for n in ("shape", "ndim", "size", "nbytes", "itemsize")] == [
        (2, 3), 2, 6, 48, 8
    ]  # fmt: skip
    assert meta.dtype_text(meta.metadata(arr, "dtype")) == "float64"
    assert structural.is_numpy_scalar(np.float64(1.5)) and not structural.is_numpy_scalar(
        np.array([Key()], dtype=object)[0]
    )
    with pytest.raises(structural.NotStructural):
        meta.metadata(arr, "T")  # a view: not in the table


# -- the red team's walks (tests/security/test_walks_run_no_session_code.py goes through the public door) ----
def test_an_instance_with_a_key_that_is_not_a_name_is_not_read_and_its_key_not_hashed():
    asked: list[str] = []

    class Key:
        def __hash__(self) -> int:
            asked.append("__hash__")
            return 1

    class Holder:
        pass

    holder = Holder()
    holder.__dict__[Key()] = 1
    asked.clear()
    assert structural.instance_state(holder) is None
    assert not structural.str_keys(holder.__dict__)
    assert asked == []


def test_a_class_is_a_librarys_only_where_its_module_holds_it(monkeypatch):
    import json

    assert structural.defined_at(json.JSONDecoder) and structural.library_root(pd.DataFrame) == "pandas"
    assert structural.library_root(np.ndarray) == "numpy"  # compiled: its module is its C code's
    impostor = type("DataFrame", (), {"__module__": "pandas.core.frame"})
    assert not structural.defined_at(impostor) and structural.library_root(impostor) == ""
    outer = type("Outer", (), {"__module__": "fake_mod_nested"})
    inner = type("Inner", (), {"__module__": "fake_mod_nested", "__qualname__": "Outer.Inner"})
    outer.Inner = inner
    module = types.ModuleType("fake_mod_nested")
    module.Outer = outer
    monkeypatch.setitem(sys.modules, "fake_mod_nested", module)
    assert structural.defined_at(inner) and structural.defined_at(outer)
    assert not structural.defined_at(type("Inner", (), {"__module__": "fake_mod_nested"}))


def test_a_namespace_key_swapped_for_one_of_the_same_count_is_seen():
    namespace = {"x": 1, "y": 2}
    assert structural.names_only(namespace)
    del namespace["y"]
    namespace[("not", "a name")] = 2
    assert len(namespace) == 2 and not structural.names_only(namespace)


def test_a_module_table_key_that_is_not_a_name_stops_the_look_up_after_a_remembered_check(monkeypatch):
    """``sys.modules``' keys are checked once per version of the table: a key swapped in afterwards — one
    whose hash is the name's, which a look-up would compare with its own ``__eq__`` — is still seen."""
    import json

    asked: list[str] = []

    class Twin:
        def __hash__(self) -> int:
            asked.append("hash")
            return hash("json")

        def __eq__(self, other: object) -> bool:
            asked.append("eq")
            return False

    assert structural.loaded_module("json") is json and structural.loaded_module("json") is json  # remembered
    twin = Twin()
    monkeypatch.setitem(sys.modules, twin, json)  # type: ignore[call-overload]  # the attack: a key of no str
    asked.clear()
    assert structural.loaded_module("json") is None and asked == []


def test_a_large_namespace_key_swapped_for_one_of_the_same_count_is_seen_after_a_remembered_check():
    """A large namespace's check is remembered by its version tag: a swap of the same count moves the tag."""
    namespace = {f"name{i}": i for i in range(200)}
    assert structural.names_only(namespace) and structural.names_only(namespace)  # the second remembered
    del namespace["name7"]
    namespace[("not", "a name")] = 7
    assert len(namespace) == 200 and not structural.names_only(namespace)
