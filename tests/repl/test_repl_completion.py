"""Completion reads the live namespace without running user code that could have side effects."""

from __future__ import annotations

import threading
import types

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from pyaichat.repl.completion import MentionCompleter, RuntimeCompleter
from pyaichat.runtime import LocalRuntime
from pyaichat.runtime.completion import Unresolvable, resolve_path
from pyaichat.runtime.completion import complete as complete_in
from pyaichat.session import Session


def complete(namespace: dict, text: str, **kwargs) -> list[str]:
    """What TAB offers at the end of ``text``: through the REPL's completer and the local runtime (or, with
    ``dir_timeout``, the runtime's completion itself)."""
    if kwargs:
        return [c.text for c in complete_in(namespace, text, **kwargs)]
    completer = RuntimeCompleter(LocalRuntime(Session(namespace)))
    return [
        c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    ]


def mentions(namespace: dict, text: str) -> list[str]:
    completer = MentionCompleter(LocalRuntime(Session(namespace)))
    return [
        c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    ]


class Watched:
    """Records every attribute access that runs Python code."""

    def __init__(self) -> None:
        self.visible = 1
        self.calls: list[str] = []

    @property
    def expensive(self) -> int:
        self.calls.append("expensive")
        return 42

    def __getattr__(self, name: str):
        object.__getattribute__(self, "calls").append(f"getattr:{name}")
        raise AttributeError(name)


def test_names_come_from_namespace_keywords_and_builtins():
    ns = {"results": 1, "_private": 2}
    assert complete(ns, "res") == ["results"]
    assert complete(ns, "whi") == ["while"]
    assert "print" in complete(ns, "pri")
    assert complete(ns, "_pri") == ["_private"]


def test_private_attributes_only_when_asked_for():
    obj = types.SimpleNamespace(public=1, _hidden=2)
    assert "public" in complete({"o": obj}, "o.")
    assert "_hidden" not in complete({"o": obj}, "o.")
    assert complete({"o": obj}, "o._h") == ["_hidden"]


def test_property_is_listed_but_never_called():
    obj = Watched()
    assert "expensive" in complete({"w": obj}, "w.exp")
    assert complete({"w": obj}, "w.expensive.") == []  # resolving it would run the getter
    assert obj.calls == []


def test_dunder_getattr_is_never_triggered():
    obj = Watched()
    assert complete({"w": obj}, "w.missing.") == []
    assert obj.calls == []


def test_nested_instance_attributes_and_module_attributes_resolve():
    inner = types.SimpleNamespace(leaf=1)
    ns = {"outer": types.SimpleNamespace(inner=inner), "os": __import__("os")}
    assert complete(ns, "outer.inner.le") == ["leaf"]
    assert "getcwd" in complete(ns, "os.getc")


def test_methods_of_builtin_types_complete():
    assert complete({"s": "text"}, "s.upp") == ["upper"]
    assert "upper" in complete({}, "str.upp")


def test_values_stored_on_the_instance_resolve_even_if_they_are_descriptors():
    holder = types.SimpleNamespace(func=lambda: None, prop=property(lambda self: 1))
    assert "__name__" in complete({"h": holder}, "h.func.__na")
    assert complete({"h": holder}, "h.prop.fg") == ["fget"]


def test_resolve_path_refuses_properties():
    with pytest.raises(Unresolvable):
        resolve_path({"w": Watched()}, "w.expensive")


def test_hanging_dir_is_abandoned_and_static_names_still_complete():
    release = threading.Event()

    class Hangs:
        static_name = 1

        def __dir__(self):
            release.wait()
            return ["dynamic_name"]

    try:
        names = complete({"h": Hangs()}, "h.", dir_timeout=0.05)
    finally:
        release.set()
    assert "static_name" in names
    assert "dynamic_name" not in names


def test_custom_dir_adds_dynamic_names():
    class Dynamic:
        def __dir__(self):
            return ["from_dir"]

    assert complete({"d": Dynamic()}, "d.from") == ["from_dir"]


def test_dict_keys_complete_with_the_typed_quote():
    ns = {"d": {"alpha": 1, "beta": 2, 3: "int key", "it's": 0}}
    assert complete(ns, 'd["al') == ['alpha"]']
    assert complete(ns, "d['b") == ["beta']"]
    assert complete(ns, "d['") == ["alpha']", "beta']"]  # the key holding the quote is skipped


def test_dict_subclass_with_custom_keys_is_not_called():
    class Tricky(dict):
        def keys(self):
            raise AssertionError("keys() must not be called")

    assert complete({"t": Tricky(a=1)}, 't["') == []


def test_no_completion_inside_a_string_or_comment():
    ns = {"results": 1}
    assert complete(ns, 'print("res') == []
    assert complete(ns, "x = 1  # res") == []


def test_dataframe_columns_complete_as_keys_and_attributes():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"price": [1.0], "product": ["a"]})
    assert complete({"df": df}, 'df["pr') == ['price"]', 'product"]']
    assert "price" in complete({"df": df}, "df.pr")
    assert "columns" in complete({"df": df}, "df.col")


def test_mentions_complete_public_variables_but_not_modules():
    ns = {"merged": [], "merge_keys": {}, "_tmp": 1, "math": __import__("math")}
    assert mentions(ns, "why is @mer") == ["merge_keys", "merged"]
    assert mentions(ns, "@ma") == []
    assert mentions(ns, "email me@mer") == []  # not a mention
    assert mentions(ns, "no at sign") == []
