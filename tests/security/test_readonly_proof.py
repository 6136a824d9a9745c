"""The property behind "read-only by construction": no expression any agent can send through the ``expr`` of
a reading tool writes anything or shows a secret.

Hypothesis generates expressions from a grammar over a session that holds what a real one holds — lists,
dicts, a defaultdict, sets, DataFrames, a Series, numpy arrays, the session's own objects whose methods mutate
them and write files (and whose ``__eq__``/``__lt__``/``__repr__`` do), an open file, a sqlite3 connection, a
generator, an iterator, a dict of secrets, a frame with a ``password`` column, a copy of the environment —
including method references as values, ``key=``, ``map``, ``filter``, ``sorted``/``min``/``max``, ``out=`` by
keyword and by position, ``inplace=True``, unbound methods applied to session objects (``list.append(xs, 1)``,
``type(xs).append(xs, 1)``) and lambdas. Each goes through the public door, ``capabilities.call``, as
``eval_expr`` or as the ``expr`` of ``get_type``/``get_repr``/``get_dir``/ ``get_doc``, and after every call:

* every fingerprint is unchanged (``persist.fingerprint`` — undo's checksum of every byte — and a deep
  structural one), and so are the generator's and the iterator's position, the open file's position and
  size, the database's rows, the objects' counters;
* no code of the session ran in this process: the adversarial objects (issue 44) — a ``ChainMap`` over a
  ``defaultdict``, a property whose getter is ``list.pop`` or ``partial(next, it)``, a frame whose ``attrs``
  hold an object with ``__del__``, objects whose ``__repr__``, ``__len__``, ``__eq__``, ``__hash__``,
  ``__format__``, ``__bool__``, ``__iter__``, ``__getattr__``, ``__getattribute__`` and ``__class__``
  property count their calls, a weakref with a callback — count in the session's process, so a count that
  moved is code of theirs run here (the walled child's counts stay in the child);
* no file is created or changed in the watched folder;
* no secret — nor its reverse, its hex, the text of its bytes — is in the text or the error;
* no call held the GIL longer than ``GIL_BOUND`` (a ticker thread measures the longest gap between its
  ticks: C work that holds the GIL — ``3**1999999 * 3**1999999``, ``"%700000000d" % 0``, ``sorted()`` of a
  19-million-character string — stops it; a gap while the walled child is forked is the kernel copying page
  tables, left out here and reported by the slow mode).

Bounded for CI (``READONLY_EXAMPLES``, default 100; each known break through two of the five tools). The
slow mode runs thousands: ``READONLY_EXAMPLES=5000 .venv/bin/python -m pytest
tests/security/test_readonly_proof.py`` (or ``benchmarks/readonly_proof.py``, which sends every known break
through all five tools and reports the longest GIL hold).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyaichat
from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.persist.fingerprint import fingerprint as undo_fingerprint
from readonly_breaks import PIN_PASSWORD, GilTicker, issue_44_source

EXAMPLES = int(os.environ.get("READONLY_EXAMPLES", "100"))
SECRET_KEY = "sk-proj-Q9vRk2LmT7pXw4ZsN8bYc3HdF6gJ1aE5uKoVi0Pq"
SECRET_TOKEN = "tok-deep-8d7f6e5c4b3a2910"
DB_PASSWORD = "correct-horse-battery-staple"
PASSWORDS = ["pw-ann-Zx81Lq93", "pw-bob-Mn27Rt64"]
ACCOUNT_TOKEN = "acct-tok-44Hh8Jj2Kk6L"
CREDENTIAL = "sk-proj-zyxw9876543210abcdefghijklmnop"
ENV_CANARY = "env-canary-5e1f9b3c7a2d"
SECRETS = [SECRET_KEY, SECRET_TOKEN, DB_PASSWORD, *PASSWORDS, ACCOUNT_TOKEN, CREDENTIAL, ENV_CANARY,
           str(PIN_PASSWORD)]  # fmt: skip
# A piece of a secret long enough to be one: any 12 characters of it, forwards or reversed, or of its hex.
_FORMS = [form for s in SECRETS for form in (s, s[::-1], s.encode().hex())]
NEEDLES = sorted({form[i : i + 12] for form in _FORMS for i in range(len(form) - 11)})
GIL_BOUND = float(os.environ.get("READONLY_GIL_BOUND", "0.5"))  # seconds; the breaks held it for seconds


def _walled() -> bool:
    from pyaichat.capabilities.sandbox import policy_for

    return policy_for("auto").walled


SETUP = """
import collections, os, sqlite3
import numpy as np
import pandas as pd

xs = [3, 1, 2]
nested = [[1, 2], [3]]
d = {"a": 1, "b": [1, 2], "c": "text"}
counts = collections.defaultdict(list, a=[1])
tags = {"red", "green"}
df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
s = pd.Series([1.5, 2.5, 3.5], name="values")
arr = np.arange(12.0).reshape(3, 4)
iarr = np.array([5, 3, 9])
users = pd.DataFrame({"name": ["ann", "bob"], "password": PASSWORDS})
settings = {"host": "db.local", "api_key": SECRET_KEY,
            "nested": {"deep": {"deeper": {"token": SECRET_TOKEN}}}}
db_password = DB_PASSWORD
note = "my key is " + CREDENTIAL + " ok"
env = dict(os.environ)
gen = (i * i for i in range(5))
it = iter([1, 2, 3])
fh = open(os.path.join(WATCH, "log.txt"), "a+")
con = sqlite3.connect(os.path.join(WATCH, "db.sqlite"), check_same_thread=False)
con.execute("create table t (x)")
con.execute("insert into t values (1)")
con.commit()
TATTLED = []


class Account:
    def __init__(self):
        self.items = [1]
        self.api_token = ACCOUNT_TOKEN
        self.reads = 0

    @property
    def balance(self):
        self.reads += 1
        return sum(self.items)

    def add(self, x=1):
        self.items.append(x)
        return x

    def save(self, path=os.path.join(WATCH, "saved.txt")):
        with open(path, "w") as out:
            out.write(str(self.items))
        return path

    def __repr__(self):
        self.reads += 1
        return f"Account({self.items})"


class Tattle:
    def __eq__(self, other):
        TATTLED.append("eq")
        if WRITE_FILES:
            open(os.path.join(WATCH, "tattle.txt"), "w").close()
        return False

    def __lt__(self, other):
        TATTLED.append("lt")
        return False

    def __hash__(self):
        TATTLED.append("hash")
        return 1


acct = Account()
tattles = [Tattle(), Tattle()]

ISSUE_44_SOURCE
"""

NAMES = [
    "xs", "nested", "d", "counts", "tags", "df", "s", "arr", "iarr", "users", "settings", "db_password",
    "note", "env", "gen", "it", "fh", "con", "acct", "tattles", "TATTLED", "os", "np", "pd", "Account",
    "sqlite3", "layers", "stack", "peek", "framed", "counted", "counted_list", "keyed", "anchor",
    "anchor_ref", "blob", "code", "bigstr", "twins",
]  # fmt: skip
ATTRIBUTES = [
    "append", "pop", "setdefault", "add", "update", "clear", "extend", "insert", "remove", "sort", "copy",
    "get", "values", "items", "keys", "to_csv", "to_json", "to_pickle", "fill", "put", "clip", "round",
    "mean", "max", "head", "T", "iloc", "loc", "shape", "columns", "password", "api_key", "api_token",
    "execute", "commit", "write", "read", "close", "seek", "save", "balance", "items", "environ", "system",
    "count", "index", "drop", "sort_values", "value_counts", "tolist", "nested", "a", "b", "name", "reads",
    "__class__", "__dict__", "fetchall", "cursor", "putenv", "remove", "top", "nxt", "attrs", "maps", "n",
    "hex", "encode", "decode", "upper",
]  # fmt: skip
LITERALS = [
    "0", "1", "2", "-1", "3.5", "None", "True", "False", "'a'", "'b'", "'x'", "'api_key'", "'password'",
    "'token'", "'nested'", "'HOME'", "'PYAICHAT_PROOF_CANARY'", "'insert into t values (2)'",
    "'delete from t'", "repr(WATCH + '/out.csv')", "[1, 2]", "(0, 1)", "{'k': 1}", "slice(0, 1)",
    "'x'", "1999999", "10 ** 18", "'%700000000d'",
]  # fmt: skip
CALLEES = [
    "sorted", "min", "max", "map", "filter", "list", "len", "str", "repr", "sum", "any", "next", "iter",
    "getattr", "vars", "dict", "set", "tuple", "type", "print", "open", "hash", "isinstance", "setattr",
    "list.append", "dict.setdefault", "set.add", "np.ndarray.fill", "pd.DataFrame.pop", "np.multiply",
    "np.add", "np.copyto", "type(xs).append", "type(d).update", "os.putenv", "os.system",
]  # fmt: skip


def _literal(draw: Any) -> str:
    text = draw(st.sampled_from(LITERALS))
    return text.replace("repr(WATCH + '/out.csv')", repr(os.path.join(WATCH, "out.csv")))


ITERABLES = [
    "xs",
    "nested",
    "d",
    "counts",
    "tags",
    "df",
    "s",
    "iarr",
    "tattles",
    "['a', 'b']",
    "[1, 2]",
    "'ab'",
]
MUTATORS = [
    "append", "pop", "setdefault", "add", "update", "clear", "extend", "insert", "remove", "sort", "fill",
    "put", "discard", "popitem", "reverse", "to_csv", "to_json", "to_pickle", "to_parquet", "save", "execute",
    "executescript", "write", "seek", "truncate", "drop", "__setitem__", "__delitem__", "get", "count",
]  # fmt: skip
UNBOUND = [
    "list.append(xs, {v})", "type(xs).append(xs, {v})", "dict.setdefault(d, {v})",
    "type(d).update(d, {{1: 2}})", "set.add(tags, {v})", "pd.DataFrame.pop(df, 'a')",
    "np.ndarray.fill(arr, 0)", "list.sort(xs)", "dict.clear(counts)", "type(acct).add(acct, {v})",
    "Account.save(acct)", "np.copyto(arr, 0)",
    "sqlite3.Connection.execute(con, 'delete from t')",
]  # fmt: skip
OUT_FORMS = [
    "arr.clip(1, 3, out={t})", "arr.clip(1, 3, {t})", "arr.round(0, {t})", "arr.round(decimals=0, out={t})",
    "np.multiply(arr, 2, {t})", "np.add(arr, 1, out={t})", "arr.sum(0, None, {t}[0])", "np.abs(arr, {t})",
    "arr.max(axis=0, out={t}[0])", "iarr.cumsum(0, None, {t})", "np.negative(iarr, iarr)",
]  # fmt: skip


# The red team's GIL holders and the reads of issue 44 that wrote: always in the mix.
HEAVY = [
    "3 ** 1999999 * 3 ** 1999999", "'%700000000d' % 0", "sorted(bigstr)", "np.diff(iarr, 10 ** 18)",
    "list(bigstr)", "set(bigstr * 2)", "bigstr * 100", "1 << 10 ** 9", "(bigstr + bigstr).count('a')",
    "'%*d' % (700000000, 0)", "10 ** 10 ** 6", "layers['x']", "stack.top", "peek.nxt", "framed.head(2)",
    "framed.copy()", "keyed[1]", "counted.n", "counted_list[0]", "counted == counted", "blob[::-1]",
    "blob.hex()", "code + 1", "str(code)", "f'{counted}'", "format(counted)", "len(counted)",
    "sorted(counted_list)", "counted in counted_list", "1 in keyed", "anchor_ref()", "list(layers)",
    "twins * 2000 == twins[::-1] * 2000", "len(set(twins * 2000))",
]  # fmt: skip


def _method_ref(draw: Any) -> str:
    """A method of a session object, as a value: the argument a higher-order builtin would call."""
    return f"{draw(st.sampled_from(NAMES))}.{draw(st.sampled_from(MUTATORS + ATTRIBUTES))}"


@st.composite
def expressions(draw: Any, depth: int = 0) -> str:
    """One expression of the grammar (module docstring): the shapes that write or leak are drawn often, and
    anything else the general grammar builds, at most three levels deep."""
    if depth == 0:
        shape = draw(st.integers(0, 21))
        if shape >= 20:
            return draw(st.sampled_from(HEAVY))
        if shape < 4:  # sorted / min / max with key=
            func = draw(st.sampled_from(["sorted", "min", "max"]))
            return f"{func}({draw(st.sampled_from(ITERABLES))}, key={_method_ref(draw)})"
        if shape < 6:  # map / filter with a method
            func = draw(st.sampled_from(["map", "filter"]))
            return f"list({func}({_method_ref(draw)}, {draw(st.sampled_from(ITERABLES))}))"
        if shape < 8:  # out= by keyword or by position
            return draw(st.sampled_from(OUT_FORMS)).format(
                t=draw(st.sampled_from(["arr", "iarr", "s.values"]))
            )
        if shape < 10:  # unbound methods applied to session objects
            return draw(st.sampled_from(UNBOUND)).format(v=_literal(draw))
        if shape < 11:
            method = draw(st.sampled_from(["sort_values", "drop", "fillna", "rename", "reset_index", "clip"]))
            return f"df.{method}({_literal(draw)}, inplace=True)"
        if shape < 13:  # roads to a secret
            return draw(st.sampled_from([
                "settings.get({v})", "settings.values()", "list(settings.items())", "str(settings)",
                "users.iloc[0, {i}]", "users.values", "users.T", "users.to_csv()", "users.to_dict()",
                "list(users.password)", "users.loc[0]", "env[{v}]", "env.get({v})", "list(env)", "str(env)",
                "note[{i}:{j}]", "note.split()", "db_password[{i}:{j}]", "acct.api_token", "vars(acct)",
                "str(acct)", "users.sort_values('name')", "users.head()", "[db_password]", "{{'k': note}}",
            ])).format(v=_literal(draw), i=draw(st.integers(-2, 3)), j=draw(st.integers(5, 40)))  # fmt: skip
    leaf = depth >= 2 or draw(st.integers(0, 9)) < 3
    if leaf:
        kind = draw(st.integers(0, 9))
        if kind < 4:
            return draw(st.sampled_from(NAMES))
        if kind < 7:
            return _method_ref(draw)
        return _literal(draw)
    inner = expressions(depth + 1)
    kind = draw(st.sampled_from(["attr", "call", "method", "subscript", "binop", "compare", "lambda", "kw"]))
    if kind == "attr":
        return f"{draw(inner)}.{draw(st.sampled_from(ATTRIBUTES))}"
    if kind == "subscript":
        return f"{draw(inner)}[{draw(inner)}]"
    if kind == "binop":
        return (
            f"({draw(inner)} {draw(st.sampled_from(['+', '-', '*', '==', '<', 'in', 'or']))} {draw(inner)})"
        )
    if kind == "compare":
        return f"not {draw(inner)}"
    if kind == "lambda":
        return f"(lambda v: {draw(inner)})"
    args = draw(st.lists(inner, max_size=3))
    keywords = draw(
        st.lists(
            st.sampled_from(["key", "out", "inplace", "default", "axis", "reverse"]), max_size=2, unique=True
        )
    )
    parts = args + [f"{k}={'True' if k == 'inplace' else draw(inner)}" for k in keywords]
    if kind == "method":
        return f"{draw(inner)}.{draw(st.sampled_from(MUTATORS + ATTRIBUTES))}({', '.join(parts)})"
    return f"{draw(st.sampled_from(CALLEES))}({', '.join(parts)})"


# Expressions each of the old in-process path (or its roads to the secret values) got wrong.
KNOWN_BREAKS = [
    "arr.clip(1, 3, out=arr)",
    "arr.round(0, arr)",
    "sorted([9], key=xs.append)",
    "sorted(['a'], key=df.pop)",
    "sorted(['zz'], key=counts.setdefault)",
    "sorted(['t'], key=tags.add)",
    f"sorted([{os.path.join('WATCHDIR', 'planted.csv')!r}], key=df.to_csv)",
    "min(['k'], key=d.setdefault)",
    "max([0], key=acct.add)",
    "sorted([1], key=con.execute)",
    "tattles.count(1)",
    "sorted(tattles)",
    "acct.balance",
    "settings.get('api_key')",
    "settings.values()",
    "list(settings.items())",
    "settings['nested']['deep']['deeper'].values()",
    "users.iloc[0, 1]",
    "users.values",
    "users.T",
    "users.to_csv()",
    "env['HOME']",
    "list(env)",
    "note[10:30]",
    "acct.__dict__",
    "str(acct)",
    *HEAVY,
]


class Proof:
    """The session under test and everything that must stay as it is."""

    def __init__(self, watch: Path) -> None:
        self.watch = watch
        self.build()

    def build(self) -> None:
        """A fresh session over a fresh folder (also after a failure, so that Hypothesis shrinks an example
        that fails on its own rather than one that inherits an earlier write)."""
        self.dirty = False
        for path in self.watch.iterdir():
            path.unlink()
        os.environ["PYAICHAT_PROOF_CANARY"] = ENV_CANARY
        self.session = pyaichat.Session(config=Config(audit=False, tool_timeout=2.0))
        source = SETUP.replace("WRITE_FILES", repr(_walled())).replace("ISSUE_44_SOURCE", issue_44_source())
        values = {
            "WATCH": str(self.watch), "SECRET_KEY": SECRET_KEY, "SECRET_TOKEN": SECRET_TOKEN,
            "DB_PASSWORD": DB_PASSWORD, "PASSWORDS": PASSWORDS, "ACCOUNT_TOKEN": ACCOUNT_TOKEN,
            "CREDENTIAL": CREDENTIAL,
        }  # fmt: skip
        self.session.namespace.update(values)
        result = self.session.run(source)
        assert result.ok, result.error and result.error.formatted
        self.before = self.state()

    def state(self) -> dict[str, Any]:
        ns = self.session.namespace
        gen = ns["gen"]
        frame = gen.gi_frame
        checker = sqlite3.connect(os.path.join(self.watch, "db.sqlite"))
        try:
            rows = checker.execute("select * from t").fetchall()
        finally:
            checker.close()
        return {
            "names": sorted(ns),
            "fingerprints": {n: (id(v), _deep(v)) for n, v in ns.items() if n not in ("__builtins__",)},
            "undo": {
                n: repr(undo_fingerprint(ns[n]))
                for n in NAMES
                if n not in ("os", "np", "pd", "fh", "con", "sqlite3")
            },
            "gen": (frame.f_lasti if frame is not None else None, gen.gi_running),
            "it": ns["it"].__length_hint__(),
            "fh": (ns["fh"].tell(), os.path.getsize(os.path.join(self.watch, "log.txt"))),
            "db": (rows, ns["con"].total_changes, ns["con"].in_transaction),
            "acct": (list(ns["acct"].items), ns["acct"].reads),
            "tattled": list(ns["TATTLED"]),
            "session code run here": dict(ns["CALLS"]),
            "issue 44": (
                [sorted(dict.keys(m), key=repr) for m in ns["layers"].maps],
                list.__len__(ns["stack"]),
                ns["peek_it"].__length_hint__(),
                sorted(map(id, dict.keys(ns["keyed"]))),
                ns["anchor_ref"]() is ns["anchor"],
            ),
            "files": sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in self.watch.iterdir()),
        }

    def check(self, capability: str, expr: str) -> None:
        if self.dirty:
            self.build()
        self.dirty = True  # until every assertion below has held
        os.environ["PYAICHAT_PROOF_CANARY"] = ENV_CANARY  # (the suite's fixtures reset the environment)
        environ = dict(os.environ)
        with GilTicker() as ticker:
            result = call(self.session, capability, {"expr": expr})
        self.longest_hold = max(getattr(self, "longest_hold", 0.0), ticker.longest)
        self.longest_fork = max(getattr(self, "longest_fork", 0.0), ticker.fork_held)
        shown = (result.text or "") + "\n" + (result.error or "")
        assert ticker.longest <= GIL_BOUND, f"{capability}({expr!r}) held the GIL {ticker.longest:.2f} s"
        assert dict(os.environ) == environ, f"{capability}({expr!r}) changed the environment"
        after = self.state()
        for key, value in self.before.items():
            assert after[key] == value, f"{capability}({expr!r}) changed {key}: {shown[:300]}"
        leaked = [n for n in NEEDLES if n in shown]
        assert not leaked, f"{capability}({expr!r}) showed a secret ({leaked[0]!r}): {shown[:300]}"
        self.dirty = False


def _instance_dict(obj: Any) -> dict[str, Any] | None:
    """An instance's ``__dict__`` through its class's own descriptor (``obj.__dict__`` would ask the
    object's ``__getattribute__``, which counts)."""
    for klass in type.__dict__["__mro__"].__get__(type(obj)):
        found = type.__dict__["__dict__"].__get__(klass).get("__dict__")
        if found is not None:
            return found.__get__(obj) if type(found) is types.GetSetDescriptorType else None
    return None


def _deep(obj: Any, depth: int = 0) -> Any:
    """A structural fingerprint of builtin containers and the session's objects (values, order, ids)."""
    if depth > 6:
        return "deep"
    t = type(obj)  # by type and the types' own namespaces: the session's hooks must not count the harness
    if any(t is k for k in (int, float, str, bytes, bool, type(None), complex)):
        return obj
    name = type.__dict__["__name__"].__get__(t)
    if issubclass(t, dict):
        return (name, id(obj), [(repr(k) if type(k) is str else id(k), _deep(v, depth + 1)) for k, v in
                                dict.items(obj)])  # fmt: skip
    if issubclass(t, (list, tuple)):
        base = list if issubclass(t, list) else tuple
        return (name, id(obj), [_deep(v, depth + 1) for v in base.__iter__(obj)])
    if t is set or t is frozenset:
        return (name, id(obj), sorted(map(id, obj)))
    state = _instance_dict(obj)
    if type.__dict__["__module__"].__get__(t) == "__main__" and state is not None:
        return (name, _deep(state, depth + 1))
    return (name, id(obj))


WATCH = tempfile.mkdtemp(prefix="pyaichat-proof-")
CAPABILITIES = ["eval_expr", "get_type", "get_repr", "get_dir", "get_doc"]


@pytest.fixture(scope="module")
def proof() -> Proof:
    return Proof(Path(WATCH))


# Each known break through eval_expr and through one of the other four tools in turn (all five share one
# reading policy; the slow mode sends every one through all five).
KNOWN_CALLS = [("eval_expr", e) for e in KNOWN_BREAKS] + [
    (CAPABILITIES[1 + i % 4], e) for i, e in enumerate(KNOWN_BREAKS)
]


@pytest.mark.parametrize(("capability", "expr"), KNOWN_CALLS)
def test_the_known_breaks_neither_write_nor_show_a_secret(proof: Proof, capability: str, expr: str) -> None:
    proof.check(capability, expr.replace("WATCHDIR", WATCH))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(capability=st.sampled_from(CAPABILITIES), expr=expressions())
def test_no_generated_expression_writes_or_shows_a_secret(proof: Proof, capability: str, expr: str) -> None:
    proof.check(capability, expr)
