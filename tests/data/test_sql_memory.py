"""query_sql within memory: what one query brings into the person's process is bounded in bytes as it is
fetched, one value's size too (``benchmarks/query_sql.py --memory`` measures the growth of the process).

* SQLite refuses to make or read a value past the budget (``zeroblob(300000000)`` grew the process 0.9 GB);
* PostgreSQL sends only the rows asked for (a server-side cursor: a client-side one buffered 276 MB before
  the deadline) and cuts each long value on the server;
* DuckDB cuts each long value before it becomes a Python object; every engine's rows are counted in bytes.
"""

from __future__ import annotations

import sqlite3

import pytest

from pyaichat.capabilities import call
from pyaichat.capabilities.adapters import database_for
from pyaichat.capabilities.adapters.sqldb import CELL_CHARS, RESULT_BYTES, take_rows
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytest.importorskip("sqlglot")


def q(conn, sql: str, limit: int = 20):
    session = Session({"db": conn})
    args = {"connection": "db", "sql": sql, "limit": limit}
    return call(session, "query_sql", args, config=Config(audit=False, tool_timeout=5))


def longest_cell(conn, sql: str, limit: int = 5) -> int:
    result = database_for(conn).query(conn, sql, limit, 4.0)
    return max(len(v) for row in result.rows for v in row if isinstance(v, (str, bytes)))


def test_sqlite_refuses_a_value_past_the_budget(tmp_path):
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute("CREATE TABLE t (a INTEGER)")
    conn.commit()
    result = q(conn, "SELECT zeroblob(300000000) AS b", limit=1)
    assert not result.ok and f"longer than {RESULT_BYTES // 2**20} MB" in result.error, result.text
    assert longest_cell(conn, "SELECT hex(zeroblob(1000000)) AS h") <= CELL_CHARS + 1
    conn.close()


def test_sqlalchemy_over_sqlite_refuses_it_too(tmp_path):
    sa = pytest.importorskip("sqlalchemy")
    path = tmp_path / "m.db"
    sqlite3.connect(path).execute("CREATE TABLE t (a INTEGER)").connection.commit()
    engine = sa.create_engine(f"sqlite:///{path}")
    result = q(engine, "SELECT zeroblob(300000000) AS b", limit=1)
    assert not result.ok and "MB" in result.error, result.text
    engine.dispose()


def test_duckdb_cuts_a_long_value_before_it_becomes_a_python_object():
    duckdb = pytest.importorskip("duckdb")
    conn = duckdb.connect()
    assert longest_cell(conn, "SELECT repeat('x', 20000000) AS s, 1 AS n") <= CELL_CHARS
    result = q(conn, "SELECT i, repeat('y', 5000) AS s FROM range(100000000) AS t(i)", limit=3)
    assert result.ok and "row limit reached" in result.text
    conn.close()


@pytest.fixture(params=["psycopg", "sqlalchemy"])
def pg(request, pg_server):
    psycopg = pytest.importorskip("psycopg")
    if request.param == "psycopg":
        conn = psycopg.connect(pg_server.get_uri())
        yield conn
        conn.close()
    else:
        sa = pytest.importorskip("sqlalchemy")
        params = psycopg.conninfo.conninfo_to_dict(pg_server.get_uri())
        engine = sa.create_engine("postgresql+psycopg://", connect_args=params)
        yield engine
        engine.dispose()


def test_postgresql_sends_only_the_rows_asked_for_each_value_cut_on_the_server(pg):
    assert (
        longest_cell(pg, "SELECT repeat('x', 5000000 + g) AS s, 1 AS n FROM generate_series(1, 2) AS g")
        <= CELL_CHARS
    )
    # the rows after the fourth are never computed (a client-side cursor computes and buffers them all)
    many = q(pg, "SELECT g, g / (g - 11) AS v FROM generate_series(1, 100) AS g", limit=3)
    assert many.ok and "row limit reached" in many.text, many.error
    typed = q(pg, "SELECT 1 AS n, true AS b, 2.5::float8 AS f, 'x'::text AS t, now() > now() AS later")
    assert typed.ok and typed.text.splitlines()[-1].split()[:5] == ["1", "True", "2.5", "x", "False"]


def test_rows_are_counted_in_bytes_as_they_come():
    wide = [tuple("v" * 900 for _ in range(400))] * 300
    taken: list[int] = []

    def next_rows(count: int):
        start = sum(taken)
        taken.append(count)
        return wide[start : start + count]

    rows, more, cut = take_rows(next_rows, 200, 400)
    assert cut and not more and len(rows) < 200  # stopped by the budget, not the row limit
    assert sum(len(v) for row in rows for v in row) <= RESULT_BYTES + max(taken) * 400 * CELL_CHARS
    assert max(taken) * 400 * CELL_CHARS <= RESULT_BYTES  # never asked for more than fits at once
