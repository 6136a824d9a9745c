"""Proof of read-only: calling every capability with many arguments changes nothing reachable from the
session.

Deep fingerprints of a list, dict, set, user object with properties, a defaultdict, a generator, a DataFrame
and an ndarray are compared before and after; the generator must not have advanced, and an object whose
``__getattr__`` records every dynamic lookup must not have been probed.
"""

from __future__ import annotations

import collections
import inspect
from typing import Any

import numpy as np
import pandas as pd
from cap_helpers import make_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyaichat.capabilities import all_capabilities, call


class Account:
    """A user object with properties and a private cache."""

    def __init__(self) -> None:
        self.owner = "ann"
        self.history = [1, 2, 3]
        self._cache: dict[str, int] = {}

    @property
    def balance(self) -> int:
        return sum(self.history)

    @property
    def doubled(self) -> list[int]:
        return [x * 2 for x in self.history]


class Recorder:
    """Logs every dynamic attribute lookup (like a Mock would create one)."""

    def __init__(self) -> None:
        object.__setattr__(self, "log", [])

    def __getattr__(self, name: str) -> Any:
        self.log.append(name)
        raise AttributeError(name)


def _namespace() -> dict[str, Any]:
    return {
        "items": [3, [1, 2], {"k": "v"}],
        "table": {"a": [1, 2], "b": {"c": (1, 2)}, "x": 1},
        "tags": {"red", "green"},
        "acct": Account(),
        "counts": collections.defaultdict(list, a=[1]),
        "gen": (i * i for i in range(5)),
        "df": pd.DataFrame({"a": range(1000), "b": [f"s{i}" for i in range(1000)]}),
        "arr": np.arange(24, dtype=float).reshape(4, 6),
        "rec": Recorder(),
    }


def fingerprint(obj: Any, depth: int = 0) -> Any:
    """A deep, comparable snapshot of ``obj`` (data, order, types and identity of nested containers)."""
    if depth > 6:
        return ("deep", type(obj).__name__)
    if isinstance(obj, pd.DataFrame):
        hashed = pd.util.hash_pandas_object(obj, index=True).to_numpy().tobytes()
        return ("df", tuple(obj.columns), tuple(map(str, obj.dtypes)), hashed, dict(obj.attrs), obj.shape)
    if isinstance(obj, np.ndarray):
        return ("nd", obj.shape, obj.dtype.str, obj.tobytes(), obj.flags.writeable)
    if inspect.isgenerator(obj):
        frame = obj.gi_frame
        return ("gen", inspect.getgeneratorstate(obj), frame.f_lasti if frame else None)
    if isinstance(obj, Recorder):
        return ("rec", tuple(obj.log))
    if isinstance(obj, dict):
        return (
            type(obj).__name__,
            id(obj),
            [(fingerprint(k), fingerprint(v, depth + 1)) for k, v in obj.items()],
        )
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, id(obj), [fingerprint(v, depth + 1) for v in obj])
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, id(obj), sorted(map(repr, obj)))
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return (type(obj).__name__, fingerprint(vars(obj), depth + 1))
    return (type(obj).__name__, repr(obj))


def snapshot(namespace: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (id(value), fingerprint(value)) for name, value in namespace.items() if name != "__builtins__"
    }


SESSION = make_session(namespace=_namespace())
SESSION.run("boom = items[5]")  # a last error, so get_last_exception has frames to walk
BEFORE = snapshot(SESSION.namespace)

names = st.sampled_from([n for n in _namespace() if n != "rec"] + ["len", "missing_name"])
attrs = st.sampled_from(
    [
        "columns",
        "shape",
        "T",
        "values",
        "dtype",
        "index",
        "iloc",
        "loc",
        "a",
        "b",
        "owner",
        "history",
        "balance",
        "doubled",
        "_cache",
        "gi_frame",
        "gi_running",
        "keys",
        "real",
        "flat",
        "__doc__",
        "__class__",
        "nope",
    ]
)
keys = st.sampled_from(["0", "-1", "1", "'a'", "'b'", "'k'", "'x'", "'missing'", "(0, 1)", "'c'"])
suffix = st.one_of(attrs.map(lambda a: f".{a}"), keys.map(lambda k: f"[{k}]"))
exprs = st.one_of(
    st.builds(lambda base, parts: base + "".join(parts), names, st.lists(suffix, max_size=3)),
    st.just("rec"),
    st.text(max_size=12),
)
CAPS = [c for c in all_capabilities() if c.executable and c.name != "run_python"]


def _args_for(cap, expr: str, flag: bool, pattern: str | None) -> dict[str, Any]:
    props = cap.args_model.model_json_schema().get("properties", {})
    args: dict[str, Any] = {}
    if "expr" in props:
        args["expr"] = expr
    if "include_private" in props:
        args["include_private"] = flag
    if "pattern" in props:
        args["pattern"] = pattern
    return args


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cap=st.sampled_from(CAPS),
    expr=exprs,
    flag=st.booleans(),
    pattern=st.sampled_from([None, "*", "a*", "[dg]*", "?"]),
    privacy=st.sampled_from(["names", "schema", "sample", "full"]),
)
def test_no_capability_changes_anything(cap, expr, flag, pattern, privacy):
    SESSION.settings.replace(SESSION.config.replace(privacy=privacy))
    result = call(SESSION, cap.name, _args_for(cap, expr, flag, pattern))
    assert result.ok or result.error  # a refusal is fine; a change is not
    assert snapshot(SESSION.namespace) == BEFORE
    assert inspect.getgeneratorstate(SESSION.namespace["gen"]) == "GEN_CREATED"
    assert SESSION.namespace["rec"].log == []


def test_every_capability_on_every_value_at_every_privacy_level_changes_nothing():
    session = make_session(namespace=_namespace())
    session.run("boom = items[5]")
    before = snapshot(session.namespace)
    for privacy in ("names", "schema", "sample", "full"):
        session.settings.replace(session.config.replace(privacy=privacy))
        for cap in CAPS:
            for name in _namespace():
                call(session, cap.name, _args_for(cap, name, True, name))
    assert snapshot(session.namespace) == before
    assert next(session.namespace["gen"]) == 0  # the generator still starts at its first item
