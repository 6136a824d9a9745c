"""query_sql at its edges, against real databases: a function PostgreSQL resolves under another spelling, a
SQLAlchemy pool that would hand the tool the person's own connection, a secret carried out under another
column name, and a DuckDB query that would fetch an extension."""

from __future__ import annotations

import os
import sqlite3
import time
import types
from pathlib import Path

import pytest

from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytest.importorskip("sqlglot")


def q(session: Session, conn: str, sql: str, **config):
    cfg = Config(**{"audit": False, "tool_timeout": 3, **config})
    return call(session, "query_sql", {"connection": conn, "sql": sql}, config=cfg)


# -- PostgreSQL: every spelling, whatever the role ----------------------------------------------------------
ATTACKS = [
    "SELECT \"pg_read_file\"('/etc/hostname')",
    "SELECT pg_catalog.\"pg_read_file\"('/etc/hostname')",
    "SELECT U&\"pg_r\\0065ad_file\"('/etc/hostname')",
    "SELECT * FROM \"pg_ls_dir\"('.')",
    'SELECT "pg_reload_conf"()',
    "SELECT \"lo_export\"(\"lo_from_bytea\"(0, 'owned'), '{out}')",
    "SELECT \"set_config\"('statement_timeout', '0', false)",
    'SELECT "pg_advisory_lock"(42)',
    "SELECT \"nextval\"('sales_id_seq')",
]


def test_a_superuser_connection_cannot_be_talked_past_with_another_spelling(pg_server, tmp_path):
    psycopg = pytest.importorskip("psycopg")
    sa = pytest.importorskip("sqlalchemy")
    out = tmp_path / "written-by-the-database"
    admin = psycopg.connect(pg_server.get_uri())  # the superuser, as in development
    engine = sa.create_engine(pg_server.get_uri().replace("postgresql://", "postgresql+psycopg://"))
    session = Session({"admin": admin, "engine": engine})
    for name in ("admin", "engine"):
        for sql in ATTACKS:
            result = q(session, name, sql.format(out=out))
            assert not result.ok, (name, sql, result.text)
            assert "not allowed here" in result.error and result.error.endswith(".")
        assert q(session, name, "SELECT upper('still answers')").ok
    assert not out.exists()
    assert admin.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone() == (0,)
    admin.close()
    engine.dispose()


def test_an_ordinary_role_keeps_its_open_transaction(pg_shop):
    psycopg = pytest.importorskip("psycopg")
    params = {k: pg_shop[k] for k in ("host", "dbname", "user", "password")}
    conn = psycopg.connect(**params)
    conn.execute("INSERT INTO sales (region, amount) VALUES ('uncommitted', 1)")
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    session = Session({"conn": conn})
    for sql in (
        f'SELECT "pg_terminate_backend"({pid})',
        f'SELECT pg_catalog."pg_cancel_backend"({pid})',
        f'SELECT U&"pg_terminate_b\\0061ckend"({pid})',
    ):
        result = q(session, "conn", sql)
        assert not result.ok and "ends database sessions" in result.error
    assert not conn.closed and conn.info.transaction_status.name == "INTRANS"
    conn.commit()
    assert conn.execute("SELECT count(*) FROM sales WHERE region = 'uncommitted'").fetchone() == (1,)
    conn.execute("DELETE FROM sales WHERE region = 'uncommitted'")
    conn.commit()
    conn.close()


# -- SQLAlchemy pools that share one DBAPI connection --------------------------------------------------------
@pytest.fixture
def shop_file(tmp_path) -> Path:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT)")
        db.execute("INSERT INTO sales (region) VALUES ('north')")
    return path


@pytest.mark.parametrize("pool", ["StaticPool", "SingletonThreadPool", "AssertionPool"])
def test_a_pool_sharing_the_persons_connection_is_never_used(shop_file, pool):
    sa = pytest.importorskip("sqlalchemy")
    import sqlalchemy.pool

    engine = sa.create_engine(f"sqlite:///{shop_file}", poolclass=getattr(sqlalchemy.pool, pool))
    mine = engine.connect()
    mine.exec_driver_sql("INSERT INTO sales (region) VALUES ('my uncommitted row')")
    session = Session({"engine": engine, "mine": mine})
    for name in ("engine", "mine"):
        result = q(session, name, "SELECT region FROM sales ORDER BY id")
        assert result.ok, result.error
        assert "north" in result.text and "my uncommitted row" not in result.text
    assert mine.in_transaction()
    assert mine.exec_driver_sql("PRAGMA query_only").scalar() == 0  # never set on their connection
    mine.commit()
    mine.close()
    with sqlite3.connect(shop_file) as db:
        assert db.execute("SELECT count(*) FROM sales").fetchone() == (2,)  # their commit committed
    engine.dispose()


def test_a_creator_returning_one_object_is_refused_in_one_sentence(shop_file):
    sa = pytest.importorskip("sqlalchemy")
    shared = sqlite3.connect(shop_file, check_same_thread=False)
    asked: list[int] = []

    def creator() -> sqlite3.Connection:  # the session's code: query_sql never calls it in this process
        asked.append(1)
        return shared

    engine = sa.create_engine("sqlite://", creator=creator)
    mine = engine.connect()
    mine.exec_driver_sql("INSERT INTO sales (region) VALUES ('pending')")
    asked.clear()
    result = q(Session({"engine": engine}), "engine", "SELECT count(*) FROM sales")
    assert not result.ok and "Not read: the assistant reads a SQLAlchemy engine only when" in result.error
    assert shared.in_transaction and asked == []  # its URL names an in-memory database: no creator is called
    mine.commit()
    assert shared.execute("SELECT count(*) FROM sales").fetchone() == (2,)
    mine.close()
    shared.close()


def test_an_engine_is_read_from_its_url_alone_and_none_of_its_code_runs_here(shop_file, monkeypatch):
    """query_sql and get_repr run in the person's process, so an engine is never used to connect (its
    creator, listeners, connect_args, plugins and patched methods are code of the session's): the URL's
    fields are read by structure and a connection of pyaichat's own is opened from them through SQLite's
    own C entry point. An engine of a session's subclass is not read at all; a DuckDB connection whose class
    the session patched is refused (registered functions: ``test_database_reads_run_no_session_code``)."""
    sa = pytest.importorskip("sqlalchemy")
    duckdb = pytest.importorskip("duckdb")
    from sqlalchemy import event

    ran: list[str] = []
    listened = sa.create_engine(f"sqlite:///{shop_file}")

    @event.listens_for(listened, "do_connect")
    def hook(*args: object) -> None:
        ran.append("do_connect")

    class Spy(sqlite3.Connection):
        def execute(self, *args: object, **kwargs: object) -> sqlite3.Cursor:  # type: ignore[override]
            ran.append("factory")
            return super().execute(*args, **kwargs)  # type: ignore[arg-type]

    factory = sa.create_engine(f"sqlite:///{shop_file}", connect_args={"factory": Spy})

    class MyEngine(sa.engine.Engine):
        pass

    subclassed = sa.create_engine(f"sqlite:///{shop_file}")
    subclassed.__class__ = MyEngine
    conn = listened.connect()  # the person's own connection: their listener runs, in their code
    ran.clear()
    session = Session({"listened": listened, "factory": factory, "subclassed": subclassed, "conn": conn})
    monkeypatch.setattr(sa.engine.Engine, "connect", lambda self: ran.append("Engine.connect"))
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: ran.append("sqlite3.connect"))
    for name in ("listened", "factory", "conn"):
        answered = q(session, name, "SELECT count(*) FROM sales")
        assert answered.ok and "mode=ro" in answered.text, answered
    assert "sales" in call(session, "get_repr", {"expr": "factory"}, config=Config(audit=False)).text
    refused = q(session, "subclassed", "SELECT count(*) FROM sales")
    assert not refused.ok and "would run code of your session's to connect" in refused.error
    assert refused.error.count(".") == 1
    assert ran == []

    duck = duckdb.connect()
    duck.execute("CREATE TABLE t (a BIGINT)")
    duck.execute("INSERT INTO t VALUES (1), (2)")
    ducks = Session({"duck": duck})
    assert q(ducks, "duck", "SELECT a FROM t").ok
    monkeypatch.setattr(
        duckdb.DuckDBPyConnection, "cursor", types.MethodType(lambda *a: ran.append("cursor"), object())
    )
    patched = q(ducks, "duck", "SELECT a FROM t")  # its class patched by the session: not used here
    assert not patched.ok and "would run code of your session's" in patched.error
    assert ran == []


def test_a_url_is_shown_without_its_password_or_its_query_values():
    sa = pytest.importorskip("sqlalchemy")
    engine = sa.create_engine(
        "postgresql+psycopg://ann:hunter2@db.example/shop?sslmode=require&password=tok3n"
    )
    listed = call(Session({"engine": engine}), "list_globals", {}, config=Config(audit=False)).text
    assert "postgresql+psycopg://ann:<redacted password>@db.example/shop?password=" in listed
    assert "&sslmode=… (PostgreSQL" in listed
    assert "hunter2" not in listed and "tok3n" not in listed and "require" not in listed


# -- masking by lineage --------------------------------------------------------------------------------------
LEAKS = [
    "SELECT password AS x FROM users",
    "SELECT substr(password, 1) AS note FROM users",
    "SELECT name || ':' || password AS both FROM users",
    "SELECT n FROM (SELECT password AS n FROM users) AS s",
    "WITH c AS (SELECT upper(password) AS q FROM users) SELECT q FROM c",
    "SELECT (SELECT password FROM users LIMIT 1) AS x",
    "SELECT name FROM users UNION ALL SELECT password FROM users",
    "SELECT * FROM people",  # a view: SELECT name, password AS pw FROM users
    "SELECT pw AS harmless FROM people",
    "SELECT * FROM people_again",  # a view over the view
    "SELECT u AS whole_row FROM users AS u",  # PostgreSQL and DuckDB: the row as one value
]


def _people(execute) -> None:
    execute("CREATE TABLE users (id INTEGER, name TEXT, password TEXT)")
    execute("INSERT INTO users VALUES (1, 'ann', 'hunter2-the-secret')")
    execute("CREATE VIEW people AS SELECT name, password AS pw FROM users")
    execute("CREATE VIEW people_again AS SELECT * FROM people")


@pytest.fixture(params=["sqlite", "duckdb", "postgres"])
def people(request, tmp_path):
    if request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "people.db")
        _people(conn.execute)
        conn.commit()
        yield conn
        conn.close()
    elif request.param == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        conn = duckdb.connect()
        _people(conn.execute)
        yield conn
        conn.close()
    else:
        psycopg = pytest.importorskip("psycopg")
        server = request.getfixturevalue("pg_server")
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS people")
            admin.execute("CREATE DATABASE people")
        uri = psycopg.conninfo.make_conninfo(server.get_uri(), dbname="people")
        with psycopg.connect(uri, autocommit=True) as setup:
            _people(setup.execute)
        conn = psycopg.connect(uri)
        yield conn
        conn.close()


@pytest.mark.parametrize("sql", LEAKS)
def test_a_column_computed_from_a_secret_is_masked_like_the_column(people, sql):
    """Selected as it is, under any name, a secret comes back masked; computed on, it is refused by name
    (a computation's errors and time would tell it a query at a time)."""
    result = q(Session({"db": people}), "db", sql)
    if not result.ok:
        assert "hunter2" not in result.error
        if isinstance(people, sqlite3.Connection) and "whole_row" in sql:
            return  # SQLite has no whole-row values: it refuses that one itself
        assert "secret column users.password in a computation" in result.error, result.error
        return
    assert "hunter2" not in result.text and "<redacted>" in result.text


def test_lineage_masks_only_what_comes_from_a_secret(people):
    result = q(Session({"db": people}), "db", "SELECT id, upper(name) AS who, password AS n FROM users")
    assert result.ok, result.error
    assert "ANN" in result.text and "hunter2" not in result.text
    row = result.text.splitlines()[-1].split()
    assert row[:2] == ["1", "ANN"] and row[2] == "<redacted>"
    computed = q(Session({"db": people}), "db", "SELECT id, length(password) AS n FROM users")
    assert not computed.ok and "users.password" in computed.error


# -- DuckDB: no extension installed or loaded by a read-only query -------------------------------------------
def test_duckdb_never_installs_or_loads_an_extension_for_a_query(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.setenv("HOME", str(tmp_path))
    conn = duckdb.connect(config={"extension_directory": str(tmp_path / "ext")})
    settings = ("autoinstall_known_extensions", "autoload_known_extensions", "enable_external_access")
    before = [conn.execute(f"SELECT current_setting('{s}')").fetchone() for s in settings]
    session = Session({"db": conn})
    for sql in (
        "SELECT '1.2.3.4'::INET",
        "SELECT CAST('{\"a\": 1}' AS INET)",
        "SELECT ST_Point(1, 2)",
    ):
        started = time.monotonic()
        result = q(session, "db", sql)
        assert not result.ok, result.text
        assert (
            "never installs or loads an extension" in result.error
            or "not on query_sql's list" in result.error
        )
        assert time.monotonic() - started < 2.0  # refused, not waiting on a download to its deadline
    assert not (tmp_path / "ext").exists() and not (tmp_path / ".duckdb").exists()
    assert [conn.execute(f"SELECT current_setting('{s}')").fetchone() for s in settings] == before
    assert q(session, "db", "SELECT upper('ok'), list_value(1, 2), '2024-01-01'::DATE").ok
    assert not os.path.exists(tmp_path / ".duckdb")
    conn.close()
