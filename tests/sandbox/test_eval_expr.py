"""eval_expr: structural reads and computations over plain values in-process, the walled child for the rest
(every method of a library's or the session's objects), the same refusals."""

from __future__ import annotations

import pandas as pd
import pytest

import pyaichat
from pyaichat.capabilities import call, expression
from pyaichat.capabilities.expression.reader import NotInProcess, Reader
from pyaichat.capabilities.expression.secrets import SecretChecks
from pyaichat.configuration.config import Config


@pytest.fixture
def session() -> pyaichat.Session:
    s = pyaichat.Session()
    s.settings.replace(Config(audit=False))
    s.namespace.update(
        df=pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}),
        x=[3, 1, 2],
        d={"k": 1, "z": 2},
        n=41,
    )
    return s


def ev(session: pyaichat.Session, expr: str):
    return call(session, "eval_expr", {"expr": expr})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("n", "41"),
        ("n + 1", "42"),
        ("df.shape", "(3, 2)"),
        ("len(x)", "3"),
        ("sorted(d)[:5]", "['k', 'z']"),
        ("df['a'].mean()", "2.0"),
        ("d['z']", "2"),
        ("x[-1]", "2"),
        ("df.a.sum()", "6"),
        ("n > 40 and len(x) == 3", "True"),
        ("[v * 2 for v in x]", "[6, 2, 4]"),  # not fast: goes through the sandbox
    ],
)
def test_values(session, expr: str, expected: str) -> None:
    result = ev(session, expr)
    assert result.ok, result.error
    assert expected in result.text


NO_SECRETS = SecretChecks(lambda name: False, lambda text: False)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [("n", 41), ("df.shape", (3, 2)), ("len(x)", 3), ("sorted(d)[:5]", ["k", "z"]), ("n + 1", 42),
     ("d['k']", 1), ("sorted(d.items())", [("k", 1), ("z", 2)]), ("type(df).__name__", "DataFrame"),
     ("len(df)", 3), ("list(df.columns) if False else df.ndim", 2)],
)  # fmt: skip
def test_fast_path_handles_names_attributes_and_allowed_calls(session, expr: str, expected: object) -> None:
    fast = Reader(session.namespace, NO_SECRETS, dunders=expression.STRICT_DUNDERS)
    assert fast.eval(expression.parse_expression(expr).body) == expected  # computed here, not in the sandbox


@pytest.mark.parametrize(
    "expr",
    ["[v for v in x]", "x.copy().append(1)", "df.apply(len)", "(lambda: 1)()", "df['a'].mean()", "df.head()",
     "df.dtypes", "list(df.columns)", "x.sort()", "3 ** 10 ** 7", "'%700000000d' % 0", "'ab' * 10 ** 9"],
)  # fmt: skip
def test_everything_else_is_not_fast(session, expr: str) -> None:
    fast = Reader(session.namespace, NO_SECRETS)
    with pytest.raises(NotInProcess):
        fast.eval(expression.parse_expression(expr).body)


def test_user_property_goes_to_the_sandbox_and_is_refused(session) -> None:
    """Refused by the guards in-process and without the kernel wall; run behind it."""
    from pyaichat.capabilities.sandbox import isolation_mode
    from pyaichat.capabilities.sandbox.confine import probe

    session.run("class C:\n    @property\n    def p(self):\n        return 1\nc = C()")
    result = ev(session, "c.p")
    config = getattr(session, "config", None)
    setting = config.sandbox_isolation if config is not None else "auto"
    if isolation_mode(setting) == "fork" and probe().complete:
        assert result.ok, result.error
        assert "1" in result.text
    else:
        assert not result.ok
        assert "property" in result.error


def test_missing_key_and_unknown_name(session) -> None:
    assert "no key" in ev(session, "d['nope']").error
    assert "NameError" in ev(session, "nope").error


def test_defaultdict_never_grows(session) -> None:
    session.run("from collections import defaultdict\ndd = defaultdict(list)")
    ev(session, "dd['new']")
    assert "new" not in session.namespace["dd"]


def test_private_attribute_is_refused_with_the_expression(session) -> None:
    result = ev(session, "n.__class__")
    assert result.error == "`n.__class__`: private attributes are not available in the sandbox"


def test_inplace_call_is_refused(session) -> None:
    result = ev(session, "df.sort_values('a', inplace=True)")
    assert not result.ok
    assert session.namespace["df"]["a"].tolist() == [1, 2, 3]


def test_privacy_names_refuses_and_schema_hides_values(session) -> None:
    session.settings.replace(Config(audit=False, privacy="names"))
    assert "privacy level 'names'" in ev(session, "n").error
    assert "privacy level 'names'" in call(session, "run_python", {"code": "1"}).error
    session.settings.replace(Config(audit=False, privacy="schema"))
    result = ev(session, "df['b'].tolist()")
    assert result.ok and "'x'" not in result.text
    result = call(session, "run_python", {"code": "print(df['b'].tolist())\ndf.shape"})
    assert result.ok and "'x'" not in result.text and "withheld" in result.text


def test_resolve_returns_the_object_read_in_process_only(session) -> None:
    from pyaichat.capabilities.catalog import CapabilityContext

    ctx = CapabilityContext(session, session.config)
    assert expression.resolve(ctx, "df.shape") == (3, 2)
    with pytest.raises(pyaichat.errors.CapabilityError):
        expression.resolve(ctx, "[1 for _ in x]")


@pytest.mark.parametrize(
    ("expr", "level"),
    [("df.shape", "path"), ("df.columns", "path"), ("df['a'].mean()", "child"), ("len(x)", "pure"),
     ("sorted(d)[:5]", "pure"), ("df.dtypes", "child"), ("d['k']", "path"), ("df.head()", "child"),
     ("df.a.value_counts()", "child"), ("df[df.a > 1].b.tolist()", "child"),
     ("sorted(x, key=x.append)", "child"), ("df.a.clip(1, 2, out=df.a)", "child"),
     ("list.append(x, 1)", "child"), ("[v for v in x]", "child"),
     ("df.sort_values('a', inplace=True)", "child")],
)  # fmt: skip
def test_structural_reads_are_in_process_and_every_method_goes_to_the_child(session, expr, level) -> None:
    from pyaichat.capabilities.catalog import CapabilityContext

    session.namespace["arr"] = __import__("numpy").arange(5.0)
    assert expression.level_of(CapabilityContext(session, session.config), expr).value == level
