"""Facts about the names around the cursor, for a suggestion: nearest first, bounded, masked, at the privacy
level, and found without running anything (no property, no ``__getattr__``, no computation)."""

from __future__ import annotations

import pytest

from pyaichat.configuration.config import Config
from pyaichat.runtime import LocalRuntime
from pyaichat.runtime.facts import FACTS_CHARS, MAX_FACTS, code_paths, suggestion_facts
from pyaichat.session import Session

pd = pytest.importorskip("pandas")


def test_paths_are_read_from_unfinished_code_nearest_the_cursor_first() -> None:
    before = 'merged = pd.merge(orders, customers, on="'
    assert code_paths(before)[:4] == ["customers", "orders", "pd.merge", "merged"]
    # strings, comments, keywords and attributes of call results are not names
    assert code_paths('f(x).attr + "s".upper()  # df\nfor k in d') == ["d", "k", "x", "f"]


def frames() -> dict:
    orders = pd.DataFrame({"order_id": ["00042"], "total_eur": [9.5]})
    customers = pd.DataFrame({"order_id": [42], "loyalty_tier": ["gold"]})
    return {"pd": pd, "orders": orders, "customers": customers}


def test_frames_give_their_columns_and_dtypes_and_methods_their_signature() -> None:
    found = suggestion_facts(frames(), [], Config(), 'orders.merge(customers, on="', "")
    facts = found["facts"]
    assert "customers: DataFrame 1×2: order_id int64, loyalty_tier str" in facts[0]
    assert any(f.startswith("orders: DataFrame 1×2: order_id str, total_eur float64") for f in facts)
    merge = next(f for f in facts if f.startswith("orders.merge:"))
    assert merge.startswith("orders.merge: method merge(right, how='inner', on=None")


@pytest.mark.parametrize(
    ("privacy", "shown", "hidden"),
    [
        ("names", ["customers: pandas.DataFrame"], ["loyalty_tier", "gold"]),
        ("schema", ["loyalty_tier str"], ["gold", "'tier'"]),
        ("sample", ["loyalty_tier str", "'tier': 'gold'"], []),
    ],
)
def test_the_privacy_level_bounds_what_a_fact_says(privacy: str, shown: list[str], hidden: list[str]) -> None:
    namespace = {**frames(), "settings": {"tier": "gold"}}
    text = "\n".join(
        suggestion_facts(namespace, [], Config(privacy=privacy), "customers.x + settings[", "")["facts"]
    )
    for part in shown:
        assert part in text
    for part in hidden:
        assert part not in text


def test_secret_names_give_no_fact_and_recent_inputs_are_masked() -> None:
    session = Session()
    session.run('api_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"')
    session.run("vault = {'db_password': 'hunter2hunter2', 'host': 'db'}")
    found = LocalRuntime(session).suggestion_facts("connect(api_key, vault[", "")
    text = str(found)
    assert "api_key: <redacted: secret-looking name>" in found["facts"]
    assert "sk-proj-abcdefghijklmnop" not in text
    assert "hunter2hunter2" not in text
    assert len(found["inputs"]) == 2


class Lazy:
    """Looking at it must run nothing: a property, ``__getattr__`` or ``__len__`` would count."""

    calls = 0

    @property
    def rows(self) -> int:
        Lazy.calls += 1
        return 10**9

    def __getattr__(self, name: str) -> object:
        Lazy.calls += 1
        raise AttributeError(name)

    def __len__(self) -> int:
        Lazy.calls += 1
        return 10**9


def test_nothing_runs_to_find_a_fact() -> None:
    Lazy.calls = 0
    found = suggestion_facts({"big": Lazy()}, [], Config(), "big.rows + big.remote_thing + big.", "")
    assert Lazy.calls == 0
    assert found["facts"] == ["big: Lazy object"] or found["facts"][0].startswith("big: ")


def test_facts_stay_bounded_however_many_names_the_code_uses() -> None:
    namespace = {f"frame_{i}": pd.DataFrame({f"column_{j}_{i}": [1] for j in range(40)}) for i in range(30)}
    code = " + ".join(namespace)
    facts = suggestion_facts(namespace, [], Config(), code, "")["facts"]
    assert len(facts) <= MAX_FACTS
    assert sum(len(f) for f in facts) <= FACTS_CHARS
    assert facts[0].startswith("frame_29:")  # the nearest name first
