"""The undo engine: names created, rebound or deleted go back; an in-place change (however it was made) is
detected and undo refuses, changing nothing; names changed again since are not clobbered."""

from __future__ import annotations

import pytest

from pyaichat import Session
from pyaichat.persist.fingerprint import Context, fingerprint
from pyaichat.persist.undo import checkpoint, finish, reachable_names, undo

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


@pytest.fixture
def session(capsys) -> Session:
    s = Session()
    s.run(
        "import numpy as np, pandas as pd\n"
        "df = pd.DataFrame({'a': np.arange(6), 's': list('uvwxyz')})\n"
        "arr = np.arange(10.0)\n"
        "items = [1, 2, 3]\n"
        "conf = {'k': [1]}\n"
        "k = 3\n"
        "class Box:\n"
        "    def __init__(self):\n"
        "        self.content = []\n"
        "    def put(self, x):\n"
        "        self.content.append(x)\n"
        "    def tally(self):\n"
        "        counts.append(len(self.content))\n"
        "box = Box()\n"
        "counts = []\n"
        "def grow():\n"
        "    items.append(4)\n"
        "def helper():\n"
        "    grow()\n"
    )
    return s


def approve(s: Session, code: str):
    cp = checkpoint(s.namespace, code)
    s.run(code)
    return cp, finish(s.namespace, cp)


def test_created_rebound_and_deleted_names_go_back(session):
    old_df, old_k = session.namespace["df"], session.namespace["k"]
    cp, changes = approve(session, "df = df[df.a > 2]\nnew = 1\ndel k\n_ = 5")
    assert changes.created == ["new"] and changes.rebound == ["df"] and changes.deleted == ["k"]
    assert changes.in_place == [] and changes.unchecked == []
    assert changes.text() == "Created new; rebound df; deleted k."
    result = undo(session.namespace, cp)
    assert result.ok, result.text
    assert result.text == "Undone: restored df; brought back k; removed new."
    assert session.namespace["df"] is old_df and len(old_df) == 6  # the very object, not a copy
    assert session.namespace["k"] is old_k and "new" not in session.namespace
    again = undo(session.namespace, cp)
    assert not again.ok and again.text == "The last proposal was already undone."


IN_PLACE = [
    ("df.loc[0, 'a'] = 100", "df"),
    ("df['a'] += 1", "df"),
    ("df.loc[1, 's'] = 'changed'", "df"),
    ("df.insert(0, 'c', 1)", "df"),
    ("df.index = range(10, 16)", "df"),
    ("arr[3] = -1", "arr"),
    ("arr += 1", "arr"),
    ("arr[[2, 3]] = arr[[3, 2]]", "arr"),  # a swap: same values, other places
    ("np.copyto(arr, 0.5)", "arr"),
    ("arr.fill(0)", "arr"),
    ("items.append(9)", "items"),
    ("items[0] = 10", "items"),
    ("conf['k'].append(2)", "conf"),
    ("conf['new'] = 1", "conf"),
    ("box.put(1)", "box"),
    ("box.content = [1]", "box"),
    ("helper()", "items"),  # through the user's own functions, two calls deep
    ("box.tally()", "counts"),  # through a method of the user's own class
]


@pytest.mark.parametrize(("code", "name"), IN_PLACE)
def test_in_place_changes_are_detected_and_undo_refuses(session, code, name):
    before = {k: v for k, v in session.namespace.items() if not k.startswith("_")}
    cp, changes = approve(session, code + "\nextra = 1")
    assert name in changes.in_place, changes
    after = dict(session.namespace)
    result = undo(session.namespace, cp)
    assert not result.ok
    assert result.text.startswith(f"Cannot undo: the proposal changed {name}") or name in result.text
    assert "in place" in result.text and "nothing was changed" in result.text
    assert session.namespace == after  # the refusal changed nothing: 'extra' is still there
    assert all(session.namespace[k] is v for k, v in before.items())


@pytest.mark.parametrize(
    "code",
    [
        "total = df.a.sum()",
        "view = arr[2:5].copy()",
        "n = len(items)",
        "df.iloc[0, 0] = df.iloc[0, 0]",  # writes the same value: nothing changed
        "print(box.content, conf)",
    ],
)
def test_reading_is_not_a_change(session, code):
    _, changes = approve(session, code)
    assert changes.in_place == [] and changes.rebound == [] and changes.deleted == []


def test_the_namespace_held_by_an_object_is_compared_name_by_name(session):
    """``g = globals()`` (or the shell's ``exit``, which holds the shell, which holds the namespace): a name
    created through it is created, and undo takes it back; the holder did not change in place."""
    ns = session.namespace
    ns["g"] = ns
    ns["shell"] = {"user_ns": ns}
    cp, changes = approve(session, "g['y'] = 2\nshell['user_ns']['z'] = 3")
    assert changes.created == ["y", "z"] and changes.in_place == [], changes
    assert undo(ns, cp).ok and "y" not in ns and "z" not in ns


@pytest.mark.parametrize(
    "code",
    [
        "df.columns = ['b', 't']",
        "df.index = pd.RangeIndex(10, 16)",
        "cat = df.s.astype('category')\ndf['s'] = cat",
        "df['m'] = pd.array([1, None, 3, 4, 5, 6], dtype='Int64')",
    ],
)
def test_frame_changes_in_every_layout_are_found(session, code):
    _, changes = approve(session, code)
    assert changes.in_place == ["df"], changes


def test_names_changed_again_since_are_not_clobbered(session):
    cp, _ = approve(session, "df = df.head(2)\nz = 1")
    session.run("df = df.head(1)")  # the user carries on with the new frame
    result = undo(session.namespace, cp)
    assert not result.ok and result.text.startswith("Cannot undo: df changed again after the proposal ran")
    assert len(session.namespace["df"]) == 1 and session.namespace["z"] == 1
    cp, _ = approve(session, "del k")
    session.run("k = 'user again'")
    assert not undo(session.namespace, cp).ok and session.namespace["k"] == "user again"


def test_nothing_to_undo(session):
    cp, changes = approve(session, "print(k)")
    assert changes.text() == "No names changed."
    result = undo(session.namespace, cp)
    assert not result.ok and "nothing to undo" in result.text


def test_undo_without_finish_computes_the_changes(session):
    cp = checkpoint(session.namespace, "k = 4")
    session.run("k = 4")
    assert undo(session.namespace, cp).ok and session.namespace["k"] == 3


def test_bookkeeping_names_are_neither_reported_nor_restored(session):
    session.namespace["_i5"] = "x"
    _, changes = approve(session, "k\n")  # echo: rebinds _ (and __, ___)
    assert changes.created == changes.rebound == changes.deleted == []


def test_only_the_names_to_restore_are_kept_after_finish(session):
    cp, _ = approve(session, "arr = None")
    assert set(cp.bindings) == {"arr"}  # everything else was released
    assert cp.watched == {} and cp.keep == []


def test_opaque_and_oversized_objects_are_reported_unchecked(session):
    import sqlite3

    session.namespace["conn"] = sqlite3.connect(":memory:")
    _, changes = approve(session, "conn.execute('select 1')")
    assert changes.unchecked == ["conn"] and changes.in_place == []
    assert "Not checked for in-place changes (too large or opaque): conn." in changes.text()
    ctx = Context(bytes_left=100)
    fingerprint(np.zeros(1000), ctx)
    assert ctx.unchecked


def test_fingerprints_run_no_user_code(session):
    calls = []

    class Spy:
        def __init__(self):
            self.value = [1]

        def __eq__(self, other):
            calls.append("eq")
            return True

        def __hash__(self):
            calls.append("hash")
            return 1

        def __repr__(self):
            calls.append("repr")
            return "Spy"

        def __len__(self):
            calls.append("len")
            return 1

        def __getattr__(self, name):
            calls.append(name)
            raise AttributeError(name)

        @property
        def prop(self):
            calls.append("prop")
            return 1

    class Disguised:
        @property
        def __class__(self):  # isinstance() would ask this
            calls.append("__class__")
            return list

    class Items(list):
        def __iter__(self):
            calls.append("iter")
            return iter([])

    class Holder:
        shared = Spy()  # a class attribute the reachability scan must not poke

        def method(self):
            return 1

    Holder.__module__ = "__main__"  # as if defined at the prompt: its methods are scanned for globals
    session.namespace["spy"] = Spy()
    session.namespace["spies"] = {"a": Spy(), "b": [Spy()]}
    session.namespace["spy_set"] = {Spy()}
    session.namespace["disguised"] = Disguised()
    session.namespace["items2"] = Items([1, 2])
    session.namespace["holder"] = Holder()
    calls.clear()
    code = "spy.value.append(2)\nitems2.append(3)\nseen = (spies, spy_set, disguised, holder)"
    _, changes = approve(session, code)
    assert changes.in_place == ["items2", "spy"]
    assert calls == []


def test_reachable_names_follow_functions_and_classes(session):
    ns = session.namespace
    assert reachable_names("helper()", ns) >= {"helper", "grow", "items"}
    assert reachable_names("box.tally()", ns) >= {"box", "counts"}
    assert reachable_names("syntax error here (", ns) == set()


def test_a_ten_million_row_frame_costs_one_pass(session):
    """Cheap means one read of the data at memory speed: a 10M x 2 frame is checked, and a change to one
    value in the middle is found."""
    big = pd.DataFrame({"x": np.random.default_rng(0).normal(size=10_000_000), "y": np.arange(10_000_000)})
    session.namespace["big"] = big
    _, changes = approve(session, "big.iloc[5_000_000, 0] = big.iloc[5_000_000, 0] + 1")
    assert changes.in_place == ["big"] and changes.unchecked == []


@pytest.mark.parametrize("index", [1, 4095, 4096, 70_000, 123_455])  # first block, block edge, tail words
def test_the_checksum_sees_a_swap_anywhere(index):
    a = np.random.default_rng(1).normal(size=123_456)
    before = fingerprint(a)
    a[[index - 1, index]] = a[[index, index - 1]]
    assert fingerprint(a) != before
    a[[index - 1, index]] = a[[index, index - 1]]
    assert fingerprint(a) == before
