"""The first wall of query_sql: one read-only statement, parsed the way its database reads it (sqlglot, in
the connection's dialect), every spelling of a function compared under the name the database resolves."""

from __future__ import annotations

import sys

import pytest

from pyaichat.capabilities.sqlcheck import check
from pyaichat.errors import CapabilityError

pytest.importorskip("sqlglot")

ALLOWED = [
    "SELECT * FROM t",
    "select a, \"delete\" from t where b = 'drop table x; --'",
    "WITH x AS (SELECT 1) SELECT * FROM x;",
    "EXPLAIN SELECT 1",
    "EXPLAIN ANALYZE SELECT * FROM t",
    "EXPLAIN QUERY PLAN SELECT * FROM t",
    "EXPLAIN (ANALYZE, BUFFERS) SELECT 1",
    "VALUES (1), (2)",
    "SELECT replace(a, 'x', 'y') FROM t",
    "SELECT count(*) FROM t /* just counting */",
    "(SELECT 1) UNION (SELECT 2)",
    'SELECT 1 AS "into"',
    "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, coalesce(a, 0), upper(b) FROM t",
    "SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t",
    "SELECT * FROM t1 JOIN t2 USING (id) LEFT JOIN t3 ON t3.x = t1.x WHERE t1.y LIKE 'a%' LIMIT 5",
]

REFUSED = {
    # writes and DDL, also hidden in a CTE or behind EXPLAIN ANALYZE
    "DELETE FROM t": "this is DELETE",
    "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d": "uses DELETE",
    "EXPLAIN ANALYZE DELETE FROM t": "this is DELETE",
    "EXPLAIN (ANALYZE) INSERT INTO t VALUES (1)": "this is INSERT",
    "SELECT * INTO new_table FROM t": "SELECT … INTO",
    "UPDATE t SET a = 1": "this is UPDATE",
    # several statements, however hidden
    "SELECT 1; SELECT 2": "one SQL statement",
    "SELECT a[1; DROP TABLE t; SELECT 1] FROM t": "could not be read",
    # locks, settings, sessions, files, extensions
    "SELECT * FROM t FOR UPDATE": "row lock",
    "SELECT * FROM t FOR SHARE": "row lock",
    "SET search_path = evil": "this is SET",
    "COPY t TO STDOUT": "this is COPY",
    "ATTACH 'x.db' AS x": "not run",
    "PRAGMA writable_schema = 1": "this is PRAGMA",
    "CALL f()": "this is",
    "BEGIN": "this is",
    "SELECT * FROM read_csv('/etc/passwd')": "read_csv()",
    "SELECT * FROM query('DELETE FROM t')": "query()",
    "SELECT pg_sleep(10)": "pg_sleep()",
    "SELECT pg_terminate_backend(42)": "pg_terminate_backend()",
    "SELECT set_config('a', 'b', false)": "set_config()",
    "SELECT nextval('s')": "nextval()",
    "SELECT lo_export(1, '/tmp/x')": "lo_export()",
    "SELECT load_extension('x')": "load_extension()",
    "SELECT my_function(1)": "not on query_sql's list",
    # malformed
    "SELECT 'unterminated": "could not be read",
    "": "empty",
    ";": "empty",
}


@pytest.mark.parametrize("sql", ALLOWED)
def test_reads_are_allowed_and_sent_as_the_parser_read_them(sql):
    sent = check(sql, "postgres").sql
    assert sent.upper().startswith(("SELECT", "WITH", "EXPLAIN", "VALUES", "("))
    assert "/*" not in sent and check(sent, "postgres").sql == sent  # written back, stable


@pytest.mark.parametrize(("sql", "why"), REFUSED.items())
def test_everything_else_is_refused_with_a_sentence(sql, why):
    for dialect in ("postgres", "duckdb", "sqlite", ""):
        if dialect == "sqlite" and "a[1;" in sql:
            continue  # SQLite reads [...] as a quoted name: written back as one, harmless (tested below)
        with pytest.raises(CapabilityError) as info:
            check(sql, dialect)
        if dialect in ("postgres", ""):
            assert why in str(info.value)
        assert str(info.value).endswith(".")


# Every spelling PostgreSQL resolves to one function: quoted, schema-qualified, any case, Unicode escapes.
SPELLINGS = [
    "SELECT \"pg_read_file\"('/etc/hostname')",
    "SELECT pg_catalog.\"pg_read_file\"('/etc/hostname')",
    "SELECT PG_CATALOG.PG_READ_FILE('/etc/hostname')",
    "SELECT Pg_Read_File('/etc/hostname')",
    "SELECT U&\"pg_r\\0065ad_file\"('/etc/hostname')",
    "SELECT U&\"pg_r!0065ad_file\" UESCAPE '!'('/etc/hostname')",
    "SELECT u&\"\\+000070g_read_file\"('/etc/hostname')",
    "SELECT /* x */ \"pg_read_file\" /* y */ ('/etc/hostname')",
    "SELECT * FROM \"pg_ls_dir\"('/')",
    "SELECT (SELECT \"pg_read_file\"('/etc/hostname'))",
    "WITH x AS (SELECT \"pg_read_file\"('/etc/hostname') AS f) SELECT f FROM x",
]


@pytest.mark.parametrize("sql", SPELLINGS)
def test_a_function_is_refused_under_every_spelling_postgresql_resolves(sql):
    with pytest.raises(CapabilityError, match=r"pg_(read_file|ls_dir)\(\), which reads or writes files"):
        check(sql, "postgres")


@pytest.mark.parametrize(
    ("dialect", "sql", "why"),
    [
        ("postgres", "SELECT \"lo_export\"(1, '/tmp/x')", "large objects"),
        ("postgres", 'SELECT "pg_terminate_backend"(42)', "ends database sessions"),
        ("postgres", "SELECT pg_catalog.pg_reload_conf()", "settings"),
        ("postgres", "SELECT \"set_config\"('work_mem', '1GB', false)", "settings"),
        ("postgres", "SELECT pg_advisory_lock(1)", "locks"),
        ("postgres", "SELECT \"nextval\"('s'), setval('s', 1)", "sequence"),
        ("postgres", "SELECT txid_current()", "transaction id"),
        ("postgres", "SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a int)", "outside this database"),
        ("postgres", "COPY (SELECT 1) TO PROGRAM 'id'", "this is COPY"),
        ("postgres", "SELECT rolpassword FROM pg_authid", "stored secrets"),
        ("postgres", "SELECT public.my_func(1)", "schema 'public'"),
        ("postgres", "SELECT 'x'::my_type", "not a built-in type"),
        ("postgres", "SELECT 1 OPERATOR(public.+++) 2", "OPERATOR"),
        ("duckdb", "SELECT * FROM \"read_text\"('/etc/passwd')", "files"),
        ("duckdb", "SELECT * FROM READ_CSV_AUTO('/etc/passwd')", "files"),
        ("duckdb", "SELECT * FROM glob('/etc/*')", "files"),
        ("duckdb", "SELECT getenv('HOME')", "secrets"),
        ("duckdb", "SELECT * FROM duckdb_secrets()", "secrets"),
        ("duckdb", "SELECT * FROM query_table('t')", "programs"),
        ("duckdb", "INSTALL httpfs", "this is INSTALL"),
        ("duckdb", "LOAD httpfs", "this is LOAD"),
        ("duckdb", "PRAGMA enable_profiling", "this is PRAGMA"),
        ("duckdb", "SET enable_external_access = true", "this is SET"),
        ("duckdb", "ATTACH '/tmp/x.db'", "this is ATTACH"),
        ("sqlite", "SELECT \"load_extension\"('/tmp/evil.so')", "loads code"),
        ("sqlite", "SELECT writefile('/tmp/x', 'y')", "files"),
        ("sqlite", "PRAGMA query_only = 0", "this is PRAGMA"),
        ("mysql", "SELECT `load_file`('/etc/passwd')", "files"),
        ("mysql", "SELECT SLEEP(10)", "waits"),
        ("mysql", "SELECT GET_LOCK('x', 10)", "locks"),
    ],
)
def test_calls_with_effects_outside_the_result_are_refused_per_database(dialect, sql, why):
    with pytest.raises(CapabilityError, match=why):
        check(sql, dialect)


def test_what_is_sent_is_the_checked_statement_without_comments():
    checked = check("select /* a comment */ region, COUNT(*) from sales group by 1 -- done", "postgres")
    assert checked.sql == "SELECT region, COUNT(*) FROM sales GROUP BY 1"
    assert check('SELECT U&"d\\0061ta" FROM t', "postgres").sql == 'SELECT "data" FROM t'
    sent = check("SELECT a[1; DROP TABLE t; SELECT 1] FROM t", "sqlite").sql
    assert sent == 'SELECT a AS "1; DROP TABLE t; SELECT 1" FROM t'  # SQLite's [quoted name], kept one


def test_explain_kinds():
    assert (
        check("EXPLAIN SELECT 1").sql.startswith("EXPLAIN") and not check("EXPLAIN SELECT 1").runs_statement
    )
    assert check("explain analyze select 1").runs_statement and not check("SELECT 1").sql.startswith(
        "EXPLAIN"
    )
    assert check("EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1", "postgres").runs_statement
    with pytest.raises(CapabilityError, match="option query_sql does not know"):
        check("EXPLAIN (ANALYZE, FORMAT JSON, pg_sleep) SELECT 1", "postgres")


def test_the_check_reads_a_bounded_statement():
    """The parser runs in the person's process, where no deadline stops it (a 460 KB CASE cost 5.7 s of
    CPU): a statement longer than MAX_CHARS is refused before it is read, and one nested past what the
    parser can follow gets a sentence, not a RecursionError."""
    from pyaichat.capabilities.sqlcheck import MAX_CHARS

    huge = "SELECT CASE " + " ".join(f"WHEN a = {i} THEN 'v{i}'" for i in range(20_000)) + " END FROM t"
    assert len(huge) > 400_000
    with pytest.raises(CapabilityError, match=f"at most {MAX_CHARS:,}"):
        check(huge, "postgres")
    deep = "SELECT " + "(" * 300 + "a" + ")" * 300 + " FROM t"
    with pytest.raises(CapabilityError, match=r"nested too deeply"):
        check(deep, "postgres")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # as mypy, or the person's session, may have set it: the bound is the same
    try:
        with pytest.raises(CapabilityError, match=r"nested too deeply"):
            check(deep, "postgres")
    finally:
        sys.setrecursionlimit(limit)
    assert check("SELECT '" + "(" * 300 + "' AS a", "postgres").sql  # in a string, a parenthesis is text
    long_chain = "SELECT a FROM t WHERE " + " OR ".join("a = 1" for _ in range(1_000))
    assert len(long_chain) < MAX_CHARS and check(long_chain, "postgres").sql
