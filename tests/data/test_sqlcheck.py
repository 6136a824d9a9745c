"""The first wall of query_sql: one read-only statement, read the way databases read SQL."""

from __future__ import annotations

import pytest

from pyaichat.capabilities.sqlcheck import check_read_only, explain_runs_statement, is_explain
from pyaichat.errors import CapabilityError

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
    "SELECT $$it's; drop$$",
    "SELECT count(*) FROM t /* just counting */",
    "(SELECT 1) UNION (SELECT 2)",
    'SELECT 1 AS "into"',
]

REFUSED = {
    # writes and DDL, also hidden in a CTE or behind EXPLAIN ANALYZE
    "DELETE FROM t": "starts with DELETE",
    "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d": "contains DELETE",
    "EXPLAIN ANALYZE DELETE FROM t": "starts with DELETE",
    "EXPLAIN (ANALYZE) INSERT INTO t VALUES (1)": "starts with INSERT",
    "SELECT * INTO new_table FROM t": "contains INTO",
    "UPDATE t SET a = 1": "starts with UPDATE",
    # several statements, however hidden
    "SELECT 1; SELECT 2": "one SQL statement",
    "SELECT 'a\\''; DROP TABLE t; -- '": "comment",
    "SELECT 1 /* ; DROP TABLE t */": "comment",
    "SELECT a[1; DROP TABLE t; SELECT 1] FROM t": "one SQL statement",
    # locks, settings, sessions, files, extensions
    "SELECT * FROM t FOR UPDATE": "contains UPDATE",
    "SELECT * FROM t FOR SHARE": "FOR SHARE",
    "SET search_path = evil": "starts with SET",
    "COPY t TO STDOUT": "starts with COPY",
    "ATTACH 'x.db' AS x": "starts with ATTACH",
    "PRAGMA writable_schema = 1": "starts with PRAGMA",
    "INSTALL httpfs": "starts with INSTALL",
    "LOAD httpfs": "starts with LOAD",
    "CALL f()": "starts with CALL",
    "BEGIN": "starts with BEGIN",
    "SELECT * FROM read_csv('/etc/passwd')": "read_csv()",
    "SELECT * FROM '/etc/passwd'": "file or URL",
    "SELECT * FROM t JOIN 'https://x/y.parquet' USING (a)": "file or URL",
    "SELECT * FROM query('DELETE FROM t')": "query()",
    "SELECT pg_sleep(10)": "pg_sleep()",
    "SELECT pg_terminate_backend(42)": "pg_terminate_backend()",
    "SELECT set_config('a', 'b', false)": "set_config()",
    "SELECT nextval('s')": "nextval()",
    "SELECT lo_export(1, '/tmp/x')": "lo_export()",
    "SELECT load_extension('x')": "load_extension()",
    "SELECT 1 INTO OUTFILE '/tmp/x'": "contains INTO",
    # malformed
    "SELECT 'unterminated": "unterminated string",
    "SELECT 1 /* open": "unterminated /*",
    "": "empty",
    ";": "empty",
}


@pytest.mark.parametrize("sql", ALLOWED)
def test_reads_are_allowed(sql):
    assert check_read_only(sql) == sql.strip().rstrip(";").rstrip()


@pytest.mark.parametrize(("sql", "why"), REFUSED.items())
def test_everything_else_is_refused_with_a_sentence(sql, why):
    with pytest.raises(CapabilityError, match=None) as info:
        check_read_only(sql)
    assert why in str(info.value)
    assert str(info.value).endswith(".")


def test_explain_kinds():
    assert is_explain("EXPLAIN SELECT 1") and not explain_runs_statement("EXPLAIN SELECT 1")
    assert explain_runs_statement("explain analyze select 1") and not is_explain("SELECT 1")
