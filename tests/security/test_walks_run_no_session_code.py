"""The walks the REPL's process makes over the session (the secret-values scan before every call, the
sandbox's plan of where secrets sit, the picture, ``list_globals``, the summaries' gate, the adapters'
look-up, the plugins' first load) run none of the session's code: the red team's breaks B1-B5b and B9
(issue 44's in-process reads) and the walled child's break 2.

Each case's session code appends ``(pid, what)`` to ``builtins.RAN`` when it runs: a forked child appends to
its own copy, so only the REPL's process can move the counter this test reads."""

from __future__ import annotations

import builtins
import gc
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import pyaichat
from pyaichat import registry
from pyaichat.capabilities import call
from pyaichat.capabilities.picture import session_picture
from pyaichat.configuration.config import Config

# outside this module's tests (a class of a case lives on in an ABC's subclass list until it is collected, and
# anyone's isinstance against that ABC may ask its hook) there is no record to keep
HOOK = "import os, builtins\ndef hit(what):\n    getattr(builtins, 'RAN', []).append((os.getpid(), what))\n"

METACLASS_EQ = """
class M(type):
    def __eq__(c, o):
        hit('M.__eq__')
        return c is o
    __hash__ = type.__hash__
class K(metaclass=M): pass
k = K()
"""
METACLASS_HASH = """
class M(type):
    def __hash__(c):
        hit('M.__hash__')
        return 1
class K(metaclass=M): pass
k = K()
"""
ODD_KEY = """
class Key:
    def __hash__(s):
        hit('Key.__hash__')
        return 1
    def __eq__(s, o):
        hit('Key.__eq__')
        return False
    def __getattr__(s, n):
        hit('Key.__getattr__:' + n)
        raise AttributeError(n)
class W: pass
w = W()
w.__dict__[Key()] = 1
"""
ENVIRON_HOOK = """
import abc
class SM(abc.ABCMeta):
    def __subclasscheck__(c, sub):
        hit('SM.__subclasscheck__')
        return False
class EvilEnv(os._Environ, metaclass=SM): pass
class P: pass
p = P()
"""
FAKE_DTYPE = """
class FakeDtype:
    __module__ = 'pandas.x'
    def __repr__(s):
        hit('FakeDtype.__repr__')
        return 'fd'
fd = FakeDtype()
"""
FAKE_LIBRARY_CLASS = """
class E:
    def __repr__(s):
        hit('E.__repr__')
        return 'E()'
class Libby:
    def __init__(self, a=E()): pass
Libby.__module__ = 'json'
"""
# the same class put into the real module: found there, its signature is still checked as a session class's
PLANTED_LIBRARY_CLASS = FAKE_LIBRARY_CLASS + "import json\njson.Libby = Libby\n"
LOOKS_PANDAS = """
class Meta(type):
    def __getattribute__(cls, name):
        if name == '__module__':
            hit('Meta.__getattribute__')
        return type.__getattribute__(cls, name)
class Plain(metaclass=Meta): pass
p = Plain()
class LooksPandas:
    __module__ = 'pandas.core.frame'
    def __getattr__(self, name):
        hit('LooksPandas.__getattr__:' + name)
        raise AttributeError(name)
lp = LooksPandas()
"""
# a real Series holding the session's objects where pandas keeps its own: its manager, an odd attribute key
FOREIGN_IN_PANDAS = """
import pandas as pd
class Mgr:
    def __getattr__(self, n):
        hit('Mgr.__getattr__:' + n)
        raise AttributeError(n)
class Key:
    def __hash__(s):
        return hash('_mgr')
    def __eq__(s, o):
        hit('Key.__eq__')
        return False
s = pd.Series([1, 2])
object.__setattr__(s, '_mgr', Mgr())
t = pd.Series([3, 4])
t.__dict__[Key()] = 1
"""

CASES = [
    ("B1 metaclass __eq__, every call's scan", METACLASS_EQ, "eval_expr", {"expr": "1+1"}),
    ("B1 metaclass __eq__, the sandbox's plan", METACLASS_EQ, "eval_expr", {"expr": "k"}),
    ("B1 metaclass __eq__, the picture", METACLASS_EQ, "picture", {}),
    ("B1 metaclass __hash__, list_globals", METACLASS_HASH, "list_globals", {}),
    ("B1 metaclass __hash__, the picture", METACLASS_HASH, "picture", {}),
    ("B2 a key that is not a str", ODD_KEY, "eval_expr", {"expr": "1+1"}),
    ("B2 a key that is not a str, the picture", ODD_KEY, "picture", {}),
    ("B2 a key that is not a str, run_python", ODD_KEY, "run_python", {"code": "print(1)"}),
    ("B3 an os._Environ subclass's hook", ENVIRON_HOOK, "eval_expr", {"expr": "p"}),
    ("B4 a fake pandas dtype, get_repr", FAKE_DTYPE, "get_repr", {"expr": "fd"}),
    ("B4 a fake pandas dtype, list_globals", FAKE_DTYPE, "list_globals", {}),
    ("B5 a class naming json, get_doc", FAKE_LIBRARY_CLASS, "get_doc", {"expr": "Libby"}),
    ("B5 a class planted in json, get_doc", PLANTED_LIBRARY_CLASS, "get_doc", {"expr": "Libby"}),
    ("child 2 a class naming pandas", LOOKS_PANDAS, "run_python", {"code": "print(1)"}),
    ("child 2 a class naming pandas, eval_expr", LOOKS_PANDAS, "eval_expr", {"expr": "lp"}),
    ("child 2 the session's objects in a Series", FOREIGN_IN_PANDAS, "run_python", {"code": "print(1)"}),
]


@pytest.fixture
def ran() -> Iterator[list[tuple[int, str]]]:
    """What the session's code did in this process (``builtins.RAN``, see the module docstring)."""
    builtins.RAN = []  # type: ignore[attr-defined]
    try:
        yield builtins.RAN  # type: ignore[attr-defined]
    finally:
        gc.collect()  # the case's classes (an ABC subclass with its own hook) go with its session
        del builtins.RAN  # type: ignore[attr-defined]


def in_this_process(ran: list[tuple[int, str]]) -> list[str]:
    return [what for pid, what in ran if pid == os.getpid()]


def _session(code: str) -> pyaichat.Session:
    session = pyaichat.Session(config=Config(audit=False))
    result = session.run(HOOK + code)
    assert result.ok, result.error and result.error.formatted
    return session


@pytest.mark.parametrize(("title", "code", "tool", "args"), CASES, ids=[c[0] for c in CASES])
def test_no_walk_runs_the_sessions_code_in_its_process(ran, title: str, code: str, tool: str, args: Any):
    session = _session(code)
    ran.clear()
    if tool == "picture":
        text = session_picture(session, session.config)
    else:
        result = call(session, tool, args)
        assert result.ok or result.error, title
        text = result.text or result.error or ""
    assert in_this_process(ran) == [], (title, text)
    assert "AttributeError" not in text, text  # B2: every call failed with "AttributeError: rpartition"


def test_a_call_still_answers_with_an_odd_key_in_an_instance(ran):
    session = _session(ODD_KEY)
    result = call(session, "eval_expr", {"expr": "1+1"})
    assert result.ok and result.text.endswith("2"), result.error


def test_a_key_swapped_for_an_odd_one_of_the_same_count_is_seen(ran):
    """B9: the names-only check of the namespace was remembered while its size stayed the same."""
    session = _session("x = 1\ntmp = 2\n")
    assert call(session, "eval_expr", {"expr": "x"}).ok
    size = len(session.namespace)
    session.run(
        "class K:\n"
        "    def __hash__(self): return hash('x')\n"
        "    def __eq__(self, o, hit=hit):\n"
        "        hit('K.__eq__')\n"
        "        return False\n"
        "del tmp, x\n"
        "globals()[K()] = 5\n"
        "del K\n"
        "x = 1\n"
    )
    assert len(session.namespace) == size
    ran.clear()
    for expr in ("x", "x + 1"):
        call(session, "eval_expr", {"expr": expr})
    assert in_this_process(ran) == []


def test_the_first_plugin_load_asks_no_finder_of_the_sessions(ran, monkeypatch):
    """B5b: ``importlib.metadata.entry_points()`` asked every ``sys.meta_path`` finder (one the session
    appended is its code), and ``sys.path`` entries that are not folders (``__fspath__``, ``os.PathLike``'s
    ABC through ``zipfile``). The installed plugins are still found."""
    monkeypatch.setattr(registry, "_installed", None)
    session = _session(
        "import sys, abc\n"
        "class Finder:\n"
        "    def find_spec(self, *a): return None\n"
        "    def find_distributions(self, *a, **k):\n"
        "        hit('find_distributions')\n"
        "        return iter(())\n"
        "class Where:\n"
        "    def __fspath__(self):\n"
        "        hit('__fspath__')\n"
        "        return '/nonexistent'\n"
        "class Spy(abc.ABCMeta):\n"
        "    def __subclasscheck__(c, sub):\n"
        "        hit('Spy.__subclasscheck__')\n"
        "        return False\n"
        "class Sneaky(os.PathLike, metaclass=Spy):\n"
        "    def __fspath__(self): return ''\n"
    )
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, session.namespace["Finder"]()])
    monkeypatch.setattr(sys, "path", [*sys.path, session.namespace["Where"](), "/nonexistent/x.zip"])
    ran.clear()
    found = registry.installed_entry_points("pyaichat.adapters")
    assert in_this_process(ran) == []
    assert "demo_sensors" in [ep.name for ep in found]
