"""The six introspection capabilities, one behaviour per test."""

from __future__ import annotations

import pytest
from cap_helpers import make_session, tool

from pyaichat.capabilities.introspect import user_names

SETUP = """
import os, collections
import numpy as np
import pandas as pd
sales = pd.DataFrame({"region": ["n", "s", "e"], "amount": [1.5, 2.5, 3.5], "units": [1, 2, 3]})
arr = np.arange(12).reshape(3, 4)
names = ["ann", "bob"]
counts = collections.defaultdict(int, a=1)
def merge(left, right, how="inner"):
    "Merge two tables."
    return left
class Box:
    "A box of things."
    def __init__(self):
        self.items = [1, 2]
        self._hidden = 3
    @property
    def size(self):
        return len(self.items)
    def open(self):
        return self.items
box = Box()
_private = 1
"""


@pytest.fixture
def session():
    return make_session(SETUP)


def test_user_names_leaves_out_modules_private_names_and_repl_internals():
    ns = {
        "os": __import__("os"),
        "_": 1,
        "__name__": "m",
        "_i3": "x",
        "In": [],
        "Out": {},
        "exit": 0,
        "get_ipython": print,
        "df": 1,
        "x": 2,
        "_private": 3,
        "quit": 0,
    }
    assert user_names(ns) == ["df", "x"]


def test_list_globals_gives_name_type_and_summary_for_user_variables_only(session):
    text = tool(session, "list_globals").text
    lines = text.splitlines()
    assert lines[0] == "7 user variables:"
    assert "sales: DataFrame 3×3: region str, amount float64, units int64" in lines
    assert "arr: ndarray shape (3, 4), dtype int64" in lines
    assert "merge: function merge(left, right, how='inner')" in lines
    assert not any(line.startswith(("os:", "np:", "pd:", "_private", "collections")) for line in lines)


def test_list_globals_filters_by_glob_pattern(session):
    text = tool(session, "list_globals", pattern="s*").text
    assert text.splitlines()[0] == "1 user variable:" and "sales:" in text
    assert tool(session, "list_globals", pattern="zzz*").text == "No user variables matching 'zzz*'."


def test_list_globals_says_how_many_more_past_the_cap():
    session = make_session(namespace={f"v{i}": i for i in range(10_000)})
    result = tool(session, "list_globals")
    assert result.ok and len(result.text) <= 4000
    last = result.text.splitlines()[-1]
    shown = len(result.text.splitlines()) - 2
    assert last == f"… and {10_000 - shown:,} more (pass a pattern such as 'df*' to narrow the list)"


def test_get_type_gives_class_module_mro_and_dtypes(session):
    text = tool(session, "get_type", expr="sales").text
    assert text.startswith("sales: DataFrame\nmodule: pandas\nmro: DataFrame → NDFrame")
    assert "  amount: float64" in text and "shape: 3 rows × 3 columns" in text
    assert "shape: (3, 4), dtype: int64" in tool(session, "get_type", expr="arr").text
    assert "length: 2" in tool(session, "get_type", expr="names").text


def test_get_repr_accepts_attribute_paths_and_literal_subscripts(session):
    assert tool(session, "get_repr", expr="sales.columns").ok
    assert "'bob'" in tool(session, "get_repr", expr="names[-1]").text
    assert "2.5" in tool(session, "get_repr", expr="sales['amount']").text
    assert "[1, 2]" in tool(session, "get_repr", expr="box.items").text


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("names.append", None),  # attribute paths to methods are fine: nothing is called
        ("names[len(names) - 1]", None),  # more than a path: evaluated like eval_expr
        ("[n for n in names]", None),
        ("sorted(names)[:1]", None),
        ("merge(1, 2)", "WALLED"),  # the session's function: called behind the kernel walls only
        ("names.append('z')", "it would change the session's names"),  # ran on the walled copy, refused
        ("(x := 1)", None),  # binds a sandbox-local name only
        ("open('x', 'w')", "open() is not available in the sandbox"),
        ("sales.__class__.__subclasses__", "special attribute '__subclasses__'"),
        ("merge.__globals__", "special attribute '__globals__'"),
        ("[sales][0]._mgr", "private attributes are not available"),
        ("nothing_here", "There is no variable named 'nothing_here'"),
        ("names[5]", "has no item 5"),
        ("box.missing", "has no attribute 'missing'"),
        ("import os", "not a valid Python expression"),
        ("sales = None", "it is a statement, and this tool only reads"),  # a write: what to do instead
        ("names[", "not a valid Python expression: '[' was never closed"),
        ("", "The expression is empty"),
        ("names" + " + names" * 80, "longer than 500 characters"),
    ],
)
def test_expr_reads_paths_directly_and_evaluates_the_rest_under_the_sandbox_guards(session, expr, message):
    before = list(session.namespace["names"])
    if message == "WALLED":
        message = None if _walled(session) else "calling the session's own function merge is not allowed"
    result = tool(session, "get_repr", expr=expr)
    if message is None:
        assert result.ok, result.error
    else:
        assert not result.ok and message in result.error
    assert session.namespace["names"] == before
    assert "x" not in session.namespace


def _walled(session) -> bool:
    """The walled child runs what the in-process levels cannot read (with both kernel walls up)."""
    from pyaichat.capabilities.sandbox import policy_for

    return policy_for(session.config.sandbox_isolation).walled


def test_expr_beyond_a_path_serves_every_introspection_capability(session):
    assert "'bob'" in tool(session, "get_repr", expr="names[len(names) - 1]").text
    assert tool(session, "get_type", expr="sorted(names)[:2]").text.startswith("sorted(names)[:2]: list")
    assert "signature: sorted(" in tool(session, "get_doc", expr="sorted").text
    assert "methods (" in tool(session, "get_dir", expr="names.copy()").text


def test_expr_beyond_a_path_is_refused_at_privacy_names():
    session = make_session(SETUP, privacy="names")
    result = tool(session, "get_type", expr="sorted(names)")
    assert not result.ok and "privacy level 'names'" in result.error


def test_a_missing_defaultdict_key_is_refused_without_inserting_it(session):
    """A ``defaultdict`` is no exact ``dict``: it is read in the walled child, where the insertion its
    ``__missing__`` makes is seen and refused; the session's stays as it was."""
    result = tool(session, "get_repr", expr="counts['zzz']")
    assert not result.ok and "would change the session's counts" in result.error
    assert dict(session.namespace["counts"]) == {"a": 1}


def test_os_environ_contents_are_never_shown(session, monkeypatch):
    monkeypatch.setenv("SOME_VISIBLE_SETTING", "value-that-must-not-leak")
    for expr in ("os.environ", "os.environ['SOME_VISIBLE_SETTING']", "os.environ._data"):
        result = tool(session, "get_repr", expr=expr)
        assert "value-that-must-not-leak" not in (result.text + (result.error or ""))
    assert "never shown" in tool(session, "get_repr", expr="os.environ").text
    assert "SOME_VISIBLE_SETTING" not in tool(session, "get_repr", expr="os.environ").text


def test_get_dir_groups_public_members_into_methods_and_attributes(session):
    text = tool(session, "get_dir", expr="box").text
    assert "methods (1): open" in text
    assert "attributes (2): items: list, size (property)" in text
    assert "_hidden" not in text
    assert "_hidden" in tool(session, "get_dir", expr="box", include_private=True).text


def test_get_doc_covers_user_functions_builtins_ufuncs_and_pandas_methods(session):
    assert (
        "signature: merge(left, right, how='inner')\nMerge two tables."
        in tool(session, "get_doc", expr="merge").text
    )
    assert "signature: len(obj, /)" in tool(session, "get_doc", expr="len").text
    ufunc = tool(session, "get_doc", expr="np.add").text
    assert "Add arguments element-wise" in ufunc
    pandas = tool(session, "get_doc", expr="sales.merge").text
    assert "signature: merge(right" in pandas and "database-style join" in pandas
    instance = tool(session, "get_doc", expr="box").text
    assert "(documentation of its type, Box)" in instance and "A box of things." in instance


def test_get_last_exception_without_an_error(session):
    assert tool(session, "get_last_exception").text == "No exception has been raised in this session yet."


def test_get_last_exception_gives_type_message_frames_segment_and_local_summaries():
    session = make_session(
        "def ratio(total, parts):\n    share = total / len(parts)\n    return share / (len(parts) - 2)\n\n"
    )
    session.run("values = [1, 2]\nratio(10, values)")
    text = tool(session, "get_last_exception").text
    assert text.startswith("ZeroDivisionError: float division by zero\n")
    assert "failing segment (input [2], line 2): ratio(10, values)" in text
    assert "traceback (most recent call last, 2 frames):" in text
    assert "in ratio: return share / (len(parts) - 2)" in text
    assert "[failing part: share / (len(parts) - 2)]" in text
    assert (
        "locals of the failing frame (ratio):\n  total: int 10\n  parts: list, 2 items: [1, 2]\n"
        "  share: float 5.0" in text
    )


def test_get_last_exception_at_top_level_shows_names_the_segment_uses():
    session = make_session("import pandas as pd\ndf = pd.DataFrame({'a': [1]})")
    session.run("df['b']")
    text = tool(session, "get_last_exception").text
    assert text.startswith("KeyError: ")
    assert "caused by: KeyError: 'b'" in text
    assert "locals of the failing frame (get_loc, library code):" in text  # pandas' own frame, briefly
    assert "names used by the failing segment:\n  df: DataFrame 1×1: a int64" in text


def test_get_last_exception_reports_the_chain():
    session = make_session()
    session.run("try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad config') from e\n")
    text = tool(session, "get_last_exception").text
    assert text.startswith("ValueError: bad config") and "caused by: KeyError: 'k'" in text
