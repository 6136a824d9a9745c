"""A reading tool refuses an expression that changes what it reads (``ReadWatch``) — but a cache the object's
own class fills on a read is not a change: a ``functools.cached_property``'s slot, a library's own cache
(Dask's partition bounds behind ``npartitions``). A session's class that only claims to be that cache, or any
other attribute that changes, is still a change."""

from __future__ import annotations

import functools
import sys
import types

import pytest

from pyaichat.capabilities import call
from pyaichat.capabilities.sandbox.confine import probe
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytestmark = pytest.mark.skipif(not probe().complete, reason="needs the walled child")


class Report:
    def __init__(self) -> None:
        self.rows = [1, 2, 3]

    @functools.cached_property
    def total(self) -> int:
        return sum(self.rows)

    def grow(self) -> int:
        self.rows.append(4)
        return len(self.rows)


def _session(**values: object) -> Session:
    session = Session(dict(values))
    session.settings.replace(Config(audit=False))
    return session


def test_a_cached_property_filled_by_the_read_is_answered_and_a_real_change_still_refused():
    session = _session(report=Report())
    assert call(session, "eval_expr", {"expr": "report.total"}).text.endswith("6")
    grown = call(session, "eval_expr", {"expr": "report.grow()"})
    assert not grown.ok and "would change the session's report" in (grown.error or "")
    assert "total" not in vars(session.namespace["report"])  # filled on the walled copy only


def test_dasks_own_partition_cache_is_not_a_change_and_an_impostor_of_it_is():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    trips = dd.from_pandas(pd.DataFrame({"a": range(100)}), npartitions=4)
    session = _session(trips=trips)
    answered = call(session, "eval_expr", {"expr": "trips.npartitions"})
    assert answered.ok and answered.text.endswith("4"), answered

    fake = types.ModuleType("fake_dask_util")  # a session's class named like Dask's cache, in its own module
    impostor = type("LRU", (), {"__module__": "dask.dataframe.dask_expr._util"})
    fake.LRU = impostor  # type: ignore[attr-defined]

    class Holder:
        def __init__(self) -> None:
            self.cache = impostor()
            self.cache.data = {}  # type: ignore[attr-defined]

        def fill(self) -> int:
            self.cache.data["k"] = 1  # type: ignore[attr-defined]
            return 1

    session = _session(holder=Holder())
    assert sys.modules["dask.dataframe.dask_expr._util"].LRU is not impostor
    filled = call(session, "eval_expr", {"expr": "holder.fill()"})
    assert not filled.ok and "would change the session's holder" in (filled.error or "")
