"""Read-only: no run changes a user variable or anything reachable from one, in either isolation mode.

In a forked child the code may change its private copy (a scratch ``df['ratio'] = …`` is useful there) but the
session's objects stay as they were; in-process the same code is refused with a clear message.
"""

from __future__ import annotations

import pytest
from sbx_helpers import assert_unchanged, snapshot

MUTATIONS: list[tuple[str, str]] = [
    ("list-append", "lst.append(4)"),
    ("list-extend", "lst.extend([4, 5])"),
    ("list-iadd", "lst += [4]"),
    ("list-imul", "lst *= 2"),
    ("list-setitem", "lst[0] = 99"),
    ("list-delitem", "del lst[0]"),
    ("list-slice-assign", "lst[:] = []"),
    ("list-sort", "lst.sort()"),
    ("list-clear", "lst.clear()"),
    ("list-unbound-append", "list.append(lst, 4)"),
    ("dict-setitem", "d['new'] = 1"),
    ("dict-update", "d.update(k=2)"),
    ("dict-pop", "d.pop('k')"),
    ("dict-del", "del d['k']"),
    ("dict-setdefault", "d.setdefault('z', 1)"),
    ("dict-ior", "d |= {'z': 1}"),
    ("nested-list", "d['inner'].append(3)"),
    ("nested-dict", "d['nested']['x'] = 2"),
    ("nested-via-alias", "inner = d['inner']\ninner.append(3)"),
    ("set-add", "s.add(3)"),
    ("set-ior", "s |= {9}"),
    ("attr-set", "acct.owner = 'eve'"),
    ("attr-del", "del acct.owner"),
    ("attr-nested", "acct.items.append(3)"),
    ("class-attr", "type(acct).owner = 'eve'"),
    ("df-setitem", "df['ratio'] = df['sales'] / df['units']"),
    ("df-loc", "df.loc[0, 'sales'] = -1"),
    ("df-iloc", "df.iloc[0, 1] = -1"),
    ("df-at", "df.at[0, 'sales'] = -1"),
    ("df-columns", "df.columns = ['a', 'b', 'c']"),
    ("df-index-name", "df.index.name = 'row'"),
    ("df-drop-inplace", "df.drop(columns=['units'], inplace=True)"),
    ("df-rename-inplace", "df.rename(columns={'sales': 'x'}, inplace=True)"),
    ("df-insert", "df.insert(0, 'z', 1)"),
    ("df-pop", "df.pop('units')"),
    ("df-query-inplace", "df.query('units > 1', inplace=True)"),
    ("arr-setitem", "arr[0] = 100"),
    ("arr-fill", "arr.fill(0)"),
    ("arr-sort", "arr.sort()"),
    ("arr-iadd", "arr += 1"),
    ("arr-view", "v = arr[:5]\nv[0] = 7"),
    ("arr-flat", "arr.flat[0] = 5"),
    ("arr-shape", "arr.shape = (2, 5)"),
    ("arr-data-buffer", "arr.data[0] = 9"),
    ("np-frombuffer", "import numpy as np\nv = np.frombuffer(arr, dtype=arr.dtype)\nv[0] = 9"),
    ("series-array", "df['sales'].array[0] = -1.0"),
    ("frame-values", "df.values[0, 1] = -1.0"),
    ("column-to-numpy", "df['units'].to_numpy()[0] = -1"),
    ("np-copyto", "import numpy as np\nnp.copyto(arr, 0)"),
    ("np-out", "import numpy as np\nnp.add(arr, 1, out=arr)"),
    ("np-ufunc-at", "import numpy as np\nnp.add.at(arr, [0], 5)"),
    ("np-put", "import numpy as np\nnp.put(arr, [0], [9])"),
    ("random-shuffle", "import random\nrandom.shuffle(lst)"),
    ("heapq-push", "import heapq\nheapq.heappush(lst, 0)"),
    ("bisect-insort", "import bisect\nbisect.insort(lst, 0)"),
    ("exception-obj", "try:\n    lst.nope\nexcept AttributeError as e:\n    e.obj.append(1)"),
    (
        "sandbox-class-holding-user-list",
        "class Box:\n    def __init__(self, v):\n        self.v = v\nBox(lst).v.append(1)",
    ),
    ("name-rebind", "lst = []\ndf = None\nnew_name = 1"),
    ("name-delete", "del lst"),
    ("global-stmt", "def f():\n    global lst\n    lst = []\nf()"),
    ("walrus", "(lst := [])"),
]


@pytest.mark.parametrize("code", [m[1] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_user_objects_never_change(run, session, mode: str, code: str) -> None:
    before = snapshot(session)
    result = run(code)
    assert_unchanged(session, before)
    # Rebinding names is allowed (sandbox-local); df.values of a mixed-dtype frame is a fresh copy.
    allowed = ("lst = []", "del lst", "def f()", "(lst :=", "df.values")
    if mode == "inprocess" and not code.startswith(allowed):
        assert not result.ok
        assert "Traceback" not in (result.error or "")


def test_derived_series_is_a_copy(run, session) -> None:
    """pandas copy-on-write: writing into a column taken from the user's frame never reaches the frame."""
    before = snapshot(session)
    run("col = df['sales']\ncol[0] = -5\ncol")
    assert_unchanged(session, before)


def test_fork_child_may_change_its_private_copy(session, run, mode: str) -> None:
    if mode != "fork":
        pytest.skip("copy-on-write scratch work is a fork-mode feature")
    before = snapshot(session)
    result = run("df['ratio'] = df['sales'] / df['units']\nlst.append(4)\n(df.shape, len(lst))")
    assert result.ok, result.error
    assert "(4, 4)" in result.text
    assert_unchanged(session, before)


def test_inprocess_refusal_says_how_to_proceed(session, run, mode: str) -> None:
    if mode != "inprocess":
        pytest.skip("in-process wording")
    result = run("lst.append(4)")
    assert result.error == (
        "line 1, `lst.append`: .append() would change the session's object; "
        "work on a copy (list(x), dict(x), x.copy())"
    )
    result = run("df['ratio'] = 1")
    assert "line 1, `df['ratio']`" in result.error and "copy" in result.error


def test_copies_are_freely_mutable(run) -> None:
    code = (
        "mine = list(lst)\nmine.append(4)\nmine.sort()\n"
        "frame = df.copy()\nframe['ratio'] = frame['sales'] / frame['units']\n"
        "frame.loc[0, 'sales'] = 0\nframe.drop(columns=['units'], inplace=True)\n"
        "a2 = arr.copy()\na2[0] = 100\na2 += 1\n"
        "dd = dict(d)\ndd['new'] = 1\n"
        "print(mine, list(frame.columns), int(a2[0]), sorted(dd))"
    )
    result = run(code)
    assert result.ok, result.error
    assert "[1, 2, 3, 4]" in result.text
    assert "'city', 'sales', 'ratio'" in result.text
    assert "101" in result.text


def test_sandbox_variables_vanish(session, run) -> None:
    assert run("scratch = 41\nscratch + 1").ok
    assert "scratch" not in session.namespace
    assert run("scratch").error.endswith("NameError: name 'scratch' is not defined")


def test_fingerprint_safety_net_reports_a_slipped_mutation(monkeypatch, session, mode: str) -> None:
    """If a guard ever missed a write, the before/after fingerprint fails the run and says so."""
    if mode != "inprocess":
        pytest.skip("the safety net guards in-process runs")
    from pyaichat.capabilities import call
    from pyaichat.capabilities.sandbox import guards

    monkeypatch.setattr(guards.Guards, "write", lambda self, obj: obj)  # simulate a hole in the write guard
    result = call(session, "run_python", {"code": "lst[0] = 99"})
    assert not result.ok
    assert "changed the session's variable lst" in result.error
