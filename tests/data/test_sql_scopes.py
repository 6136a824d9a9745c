"""query_sql after the red team of main 55ebf3a (reports/redteam-sql.md), on every engine where each applies:

* 1–3 a CTE stood for the person's table inside their view, a CTE named like a view was traced as the view, a
  later CTE was bound where the database binds the table: CTE names that a relation has are refused, a
  view's body is traced with none of the statement's names, a CTE reading a later one is refused;
* 4–5 two relations of one name in two schemas were one list of columns: each name resolves to one
  relation (by schema) or to none (its columns unknown, counted as secret);
* 6 ``ORDER BY (2)``, ``GROUP BY ROLLUP (1)``, ``DISTINCT ON (2)`` name result columns by number;
* 7 the column bound is checked as columns are built (a NATURAL JOIN of self-joins cost minutes);
* 8 SQLite's value bound is shared by a row's columns (forty 16 MB values were 1.3 GB);
* 9 a column's default, a function's source and SQLite's ``CREATE TABLE`` text are secret catalog columns.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.errors import CapabilityError
from pyaichat.session import Session

pytest.importorskip("sqlglot")

SECRET = "hunter2-the-secret"
HASH = "$2a$secrethashAAAA"
DEFAULT_KEY = "sk-live-DEFAULTKEY123"
SETUP = [
    "CREATE TABLE users (id INTEGER, name TEXT, password TEXT)",
    f"INSERT INTO users VALUES (1, 'ann', '{SECRET}')",
    "CREATE TABLE regions (id INTEGER)",
    "CREATE VIEW accounts AS SELECT id, name, password FROM users",
    "CREATE VIEW v_a AS SELECT id FROM users WHERE password LIKE 'h%'",
    f"CREATE TABLE keys (id INTEGER, api_key TEXT DEFAULT '{DEFAULT_KEY}')",
]
SCHEMAS = [  # PostgreSQL and DuckDB: the same names in two schemas
    "CREATE SCHEMA auth",
    "CREATE TABLE auth.users "
    "(instance_id INTEGER, uid INTEGER, aud TEXT, email TEXT, encrypted_password TEXT)",
    f"INSERT INTO auth.users VALUES (1, 1, 'a', 'a@x', '{HASH}')",
    "CREATE TABLE report (id INTEGER, password TEXT)",
    f"INSERT INTO report VALUES (1, '{SECRET}')",
    "CREATE SCHEMA other",
    "CREATE VIEW other.report AS SELECT 1 AS id",
]
ENGINES = ["sqlite", "duckdb", "psycopg", "sqlalchemy"]


@pytest.fixture(scope="module")
def pg_scopes(pg_server) -> str:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS scopes")
        admin.execute("CREATE DATABASE scopes")
    uri = psycopg.conninfo.make_conninfo(pg_server.get_uri(), dbname="scopes")
    with psycopg.connect(uri, autocommit=True) as setup:
        for sql in SETUP + SCHEMAS:
            setup.execute(sql)
        setup.execute(f"CREATE FUNCTION keyed() RETURNS text LANGUAGE sql AS $$ SELECT '{DEFAULT_KEY}' $$")
    return uri


@pytest.fixture(params=ENGINES)
def db(request, tmp_path) -> Any:
    if request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "scopes.db")
        for sql in SETUP:
            conn.execute(sql)
        conn.commit()
        yield conn
        conn.close()
    elif request.param == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        conn = duckdb.connect()
        for sql in SETUP + SCHEMAS:
            conn.execute(sql)
        yield conn
        conn.close()
    elif request.param == "psycopg":
        psycopg = pytest.importorskip("psycopg")
        conn = psycopg.connect(request.getfixturevalue("pg_scopes"))
        yield conn
        conn.close()
    else:
        psycopg = pytest.importorskip("psycopg")
        sa = pytest.importorskip("sqlalchemy")
        params = psycopg.conninfo.conninfo_to_dict(request.getfixturevalue("pg_scopes"))
        engine = sa.create_engine("postgresql+psycopg://", connect_args=params)
        yield engine
        engine.dispose()


def engine_of(conn: Any) -> str:
    module = type(conn).__module__
    return next(e for e in ENGINES if e in module or (e == "sqlite" and module == "sqlite3"))


def q(conn: Any, sql: str, limit: int = 20):
    return call(
        Session({"db": conn}),
        "query_sql",
        {"connection": "db", "sql": sql, "limit": limit},
        config=Config(audit=False, tool_timeout=5),
    )


def held(result, *secrets: str) -> None:
    """No secret came back: the query was refused with one sentence, or what it shows is masked."""
    everything = (result.text or "") + (result.error or "")
    for secret in secrets or (SECRET, HASH, DEFAULT_KEY):
        assert secret not in everything, everything
    if result.ok:
        assert "<redacted>" in result.text, result.text
    else:
        assert result.error.endswith("."), result.error


def on(db: Any, *engines: str) -> None:
    if engine_of(db) not in engines:
        pytest.skip(f"not on {engine_of(db)}")


# -- 1–3: CTEs and views -------------------------------------------------------------------------------------
CTES = {
    "a CTE named like the table a view reads": "WITH users AS (SELECT 1 AS id, 'x' AS name, 'y' AS password) "
    "SELECT id, password AS note FROM accounts",
    "a CTE named like a view": "WITH v_a AS (SELECT password AS id FROM users) SELECT id AS x FROM v_a",
}


@pytest.mark.parametrize("road", CTES)
def test_a_cte_never_stands_for_the_persons_relation(db, road):
    result = q(db, CTES[road])
    held(result)
    assert not result.ok and "CTE" in result.error, result.text


def test_a_later_cte_named_like_a_table_is_refused(db):
    recursive = "RECURSIVE " if engine_of(db) in ("psycopg", "sqlalchemy") else ""
    result = q(
        db,
        f"WITH {recursive}a AS (SELECT id AS x FROM regions), regions AS (SELECT password AS id FROM users) "
        "SELECT x FROM a",
    )
    held(result)
    assert not result.ok


def test_a_cte_that_reads_a_later_one_is_refused():
    """SQLite binds a name to a later CTE of the same WITH; the trace bound it to nothing it knew."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    for sql in SETUP:
        conn.execute(sql)
    conn.commit()
    result = q(
        conn, "WITH a AS (SELECT id AS x FROM b), b AS (SELECT password AS id FROM users) SELECT x FROM a"
    )
    held(result)
    assert not result.ok and "not defined before it" in result.error


def test_a_view_body_never_sees_the_statements_ctes(monkeypatch):
    """Without the refusal of a CTE named like a relation, the view's ``users`` is still the table."""
    from pyaichat.capabilities import sqllineage
    from pyaichat.capabilities.redact import is_secret_name
    from pyaichat.capabilities.sqlcheck import check

    monkeypatch.setattr(sqllineage, "_refuse_shadowing", lambda *args: None, raising=False)
    tables = {"users": ["id", "name", "password"], "accounts": ["id", "name", "password"]}
    views = {"accounts": "SELECT id, name, password FROM users"}
    sql = "WITH users AS (SELECT 1 AS id, 'x' AS name, 'y' AS password) SELECT password AS note FROM accounts"
    result = sqllineage.trace(check(sql, "postgres").tree, "postgres", tables, views, is_secret_name)
    assert result.masked(["note"]) == {0}


def test_a_cte_inside_a_view_is_never_expanded_as_the_view_of_its_name():
    from pyaichat.capabilities.redact import is_secret_name
    from pyaichat.capabilities.sqlcheck import check
    from pyaichat.capabilities.sqllineage import trace

    views = {"v1": "WITH v2 AS (SELECT password AS x FROM users) SELECT x FROM v2", "v2": "SELECT 1 AS x"}
    tables = {"users": ["id", "name", "password"], "v1": ["x"], "v2": ["x"]}
    result = trace(check("SELECT x FROM v1", "sqlite").tree, "sqlite", tables, views, is_secret_name)
    assert result.masked(["x"]) == {0}


def test_a_cte_with_its_own_name_still_answers(db):
    result = q(db, "WITH recent AS (SELECT id, name FROM users) SELECT name FROM recent WHERE id = 1")
    assert result.ok and "ann" in result.text, result.error


# -- 4–5: schemas --------------------------------------------------------------------------------------------
def test_two_tables_of_one_name_in_two_schemas_are_two_relations(db):
    on(db, "duckdb", "psycopg", "sqlalchemy")
    held(q(db, "SELECT e FROM (SELECT * FROM auth.users) q(a, b, c, d, e)"), HASH)
    held(q(db, "SELECT email, encrypted_password FROM auth.users"), HASH)
    if engine_of(db) == "duckdb":
        held(q(db, "SELECT #5 AS x FROM auth.users"), HASH)


def test_a_table_is_never_traced_as_a_view_of_its_name_in_another_schema(db):
    on(db, "duckdb", "psycopg", "sqlalchemy")
    schema = "main" if engine_of(db) == "duckdb" else "public"
    held(q(db, f"SELECT password AS x FROM {schema}.report"), SECRET)
    result = q(db, "SELECT id FROM other.report")
    assert result.ok and "<redacted>" not in result.text, result.error


def test_the_relation_a_bare_name_finds_answers_plainly(db):
    on(db, "psycopg", "sqlalchemy")
    result = q(db, "SELECT name FROM users WHERE id = 1")
    assert result.ok and "ann" in result.text, result.error


# -- 6: column numbers ---------------------------------------------------------------------------------------
NUMBERS = {
    "ORDER BY (2)": "SELECT name, password FROM users ORDER BY (2)",
    "ORDER BY ((2))": "SELECT name, password FROM users ORDER BY ((2)) DESC",
    "GROUP BY (2)": "SELECT name, password FROM users GROUP BY 1, (2)",
    "a set operation's ORDER BY (2), (1)": "SELECT name, password FROM users UNION ALL "
    "SELECT 'PROBE', 'n' ORDER BY (2), (1) LIMIT 1",
    "ORDER BY -(-2)": "SELECT name, password FROM users ORDER BY -(-2)",
}
PG_NUMBERS = {
    "DISTINCT ON (2)": "SELECT DISTINCT ON (2) name, password FROM users",
    "ROLLUP (1)": "SELECT password, count(*) FROM users GROUP BY ROLLUP (1)",
    "CUBE (1)": "SELECT password, count(*) FROM users GROUP BY CUBE (1)",
    "GROUPING SETS ((1))": "SELECT password, count(*) FROM users GROUP BY GROUPING SETS ((1))",
}


@pytest.mark.parametrize("shape", [*NUMBERS, *PG_NUMBERS])
def test_a_column_number_in_any_spelling_is_that_column(db, shape):
    if shape in PG_NUMBERS:
        on(db, "duckdb", "psycopg", "sqlalchemy")
    result = q(db, NUMBERS.get(shape) or PG_NUMBERS[shape])
    assert not result.ok and "users.password" in result.error, result.text


def test_column_numbers_without_a_secret_still_answer(db):
    result = q(db, "SELECT id, name FROM users ORDER BY (2), 1")
    assert result.ok and "ann" in result.text, result.error


# -- 7: the column bound, as columns are built ---------------------------------------------------------------
def test_columns_built_by_a_join_count_before_the_join_is_done(monkeypatch):
    """A NATURAL JOIN of a self-join chain built its columns uncounted (c13: ten minutes of CPU); with a
    bound of 50, the 48 columns of ``c3 a NATURAL JOIN c3 b`` pass it once the 42 of the CTEs are counted."""
    from pyaichat.capabilities import sqllineage
    from pyaichat.capabilities.redact import is_secret_name
    from pyaichat.capabilities.sqlcheck import check

    monkeypatch.setattr(sqllineage, "_MAX_COLUMNS", 50)
    chain = ", ".join(f"c{i} AS (SELECT * FROM c{i - 1} x, c{i - 1} y)" for i in range(1, 4))
    sql = (
        f"WITH c0 AS (SELECT id, name, score FROM users), {chain} SELECT count(*) FROM c3 a NATURAL JOIN c3 b"
    )
    tree = check(sql, "sqlite").tree
    with pytest.raises(CapabilityError, match="more than 50 columns"):
        sqllineage.trace(tree, "sqlite", {"users": ["id", "name", "score"]}, {}, is_secret_name)


# -- 8: SQLite's bound is a row's ----------------------------------------------------------------------------
def test_sqlite_values_share_the_rows_budget(tmp_path):
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute("CREATE TABLE t (a INTEGER)")
    conn.commit()
    result = q(conn, "SELECT zeroblob(8000000) AS a, zeroblob(8000000) AS b, zeroblob(8000000) AS c", limit=1)
    assert not result.ok and "shared among the columns" in result.error, result.text
    result = q(conn, "SELECT length(zeroblob(8000000)) AS a, 1 AS b")
    assert result.ok and "8000000" in result.text, result.error
    conn.close()


def test_sqlalchemy_over_sqlite_shares_it_too(tmp_path):
    sa = pytest.importorskip("sqlalchemy")
    path = tmp_path / "m.db"
    sqlite3.connect(path).execute("CREATE TABLE t (a INTEGER)").connection.commit()
    engine = sa.create_engine(f"sqlite:///{path}")
    result = q(
        engine, "SELECT zeroblob(8000000) AS a, zeroblob(8000000) AS b, zeroblob(8000000) AS c", limit=1
    )
    assert not result.ok and "shared among the columns" in result.error, result.text
    engine.dispose()


# -- 9: defaults and sources ---------------------------------------------------------------------------------
DEFAULTS = {
    "sqlite": [
        "SELECT name, sql FROM sqlite_master WHERE name = 'keys'",
        "SELECT name, dflt_value FROM pragma_table_info('keys')",
        "SELECT * FROM pragma_table_info('keys')",
    ],
    "duckdb": [
        "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'keys'",
        "SELECT name, dflt_value FROM pragma_table_info('keys')",
        "SELECT sql FROM sqlite_master WHERE name = 'keys'",
    ],
    "psycopg": [
        "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'keys'",
        "SELECT adbin FROM pg_attrdef",
        "SELECT pg_get_expr(adbin, adrelid) AS d FROM pg_attrdef",
        "SELECT prosrc FROM pg_proc WHERE proname = 'keyed'",
        "SELECT routine_definition FROM information_schema.routines WHERE routine_name = 'keyed'",
    ],
}
DEFAULTS["sqlalchemy"] = DEFAULTS["psycopg"]


def test_a_default_or_a_functions_source_is_a_secret_catalog_column(db):
    for sql in DEFAULTS[engine_of(db)]:
        result = q(db, sql)
        held(result, DEFAULT_KEY, "DEFAULTKEY")
    counted = q(
        db, DEFAULTS[engine_of(db)][0].replace("SELECT", "SELECT count(*) AS n FROM (SELECT", 1) + ") s"
    )
    assert counted.ok, counted.error  # how many there are is not what they hold
