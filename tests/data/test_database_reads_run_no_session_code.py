"""The red team's second round on the database reads (``/work/wt/reports/redteam-today-2.md``): each road ran
the session's own code in the person's process while the assistant read a database. Every case counts its hits
in this process and asserts none."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading

import pytest

from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytest.importorskip("sqlglot")


def _session(**values: object) -> Session:
    session = Session(dict(values))
    session.settings.replace(Config(audit=False, tool_timeout=3))
    return session


def test_an_in_memory_sqlite_database_is_copied_without_a_statement_on_the_persons_connection():
    """N1: the size check ran PRAGMAs on the person's connection: their row factory, trace, authorizer and
    progress handler ran here."""
    ran: list[str] = []
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE TABLE t (a)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.row_factory = lambda cursor, row: ran.append("row_factory") or row
    conn.set_trace_callback(lambda statement: ran.append("trace"))
    conn.set_authorizer(lambda *args: ran.append("authorizer") or 0)
    conn.set_progress_handler(lambda: ran.append("progress") or 0, 1)
    session = _session(conn=conn)
    answered = call(session, "query_sql", {"connection": "conn", "sql": "SELECT a FROM t"})
    assert answered.ok and answered.text.splitlines()[-1] == "1", answered
    assert "t (query_sql reads it)" in call(session, "list_globals", {}).text
    assert ran == []


def test_duckdb_macros_and_registered_functions_are_refused_before_any_statement_of_ours():
    """N6: ``CREATE MACRO lower(x)`` stood in for the built-in in the adapter's own catalog queries (688 calls
    of the session's function for one SELECT); N5: a registered function hidden behind a view of a name
    another schema also has."""
    duckdb = pytest.importorskip("duckdb")
    ran: list[str] = []
    conn = duckdb.connect()
    conn.execute("CREATE TABLE t (a VARCHAR)")
    conn.execute("INSERT INTO t VALUES ('x')")
    session = _session(conn=conn)
    assert call(session, "query_sql", {"connection": "conn", "sql": "SELECT a FROM t"}).ok
    conn.create_function("spy", lambda x: ran.append("spy") or x, ["VARCHAR"], "VARCHAR")
    conn.execute("CREATE MACRO lower(x) AS spy(x)")
    for tool, args in (
        ("query_sql", {"connection": "conn", "sql": "SELECT a FROM t"}),
        ("get_repr", {"expr": "conn"}),
    ):
        result = call(session, tool, args)
        said = result.error or result.text
        assert "functions beyond DuckDB's own (lower, spy" in said, said
    assert ran == []


def test_a_view_naming_a_python_variable_is_refused():
    """N4: a view's body may name a Python variable, which DuckDB scans in the person's process."""
    duckdb = pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    from pyaichat.capabilities.adapters import duckdb as adapter

    conn = duckdb.connect()
    hidden = pd.DataFrame({"a": [42]})
    conn.execute(
        "CREATE VIEW v AS SELECT * FROM hidden"
    )  # made while the frame is in scope, as a person would
    del hidden
    adapter.hidden = pd.DataFrame({"a": [7]})  # type: ignore[attr-defined]  # where the scan would find one
    try:
        result = call(_session(conn=conn), "query_sql", {"connection": "conn", "sql": "SELECT * FROM v"})
    finally:
        del adapter.hidden  # type: ignore[attr-defined]
    assert not result.ok and "the view v, whose own query is refused" in result.error


def test_a_sqlite_url_naming_a_fifo_is_not_opened(tmp_path):
    """N10: a FIFO named as the database held a reading thread forever."""
    sa = pytest.importorskip("sqlalchemy")
    fifo = tmp_path / "db.sqlite"
    os.mkfifo(fifo)
    before = threading.active_count()
    result = call(_session(engine=sa.create_engine(f"sqlite:///{fifo}")), "query_sql",
                  {"connection": "engine", "sql": "SELECT 1 AS one"})  # fmt: skip
    assert not result.ok and "is not a regular file" in result.error
    assert threading.active_count() <= before + 1  # the pool's worker, not one stuck in open()


def test_a_trace_function_of_the_session_sees_no_frame_of_a_read():
    """N8: a trace or profile function set for the thread and for new threads saw every frame of a read."""
    seen: list[str] = []

    def tracer(frame: object, event: str, arg: object) -> object:
        code = getattr(frame, "f_code", None)
        seen.append(getattr(code, "co_filename", ""))
        return tracer

    session = _session(x=[1, 2, 3])
    threading.settrace(tracer)
    sys.settrace(tracer)
    try:
        result = call(session, "get_repr", {"expr": "x"})
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    assert result.ok
    inside = os.sep + "capabilities" + os.sep  # the wrappers that put the tracer aside are seen entering
    deep = [f for f in seen if inside in f and not f.endswith(os.sep + "invoke.py")]
    assert deep == [], deep[:5]


def test_duckdb_values_are_not_built_with_classes_the_session_replaced(monkeypatch):
    """N7: DuckDB made each DECIMAL, date and UUID with the class found in its module when converting."""
    duckdb = pytest.importorskip("duckdb")
    import datetime
    import decimal

    ran: list[str] = []
    conn = duckdb.connect()
    conn.execute("CREATE TABLE t (d DECIMAL(10, 2), day DATE, n INTEGER)")
    conn.execute("INSERT INTO t VALUES (1.5, '2024-01-02', 3)")
    original = decimal.Decimal

    class Spy(original):  # type: ignore[valid-type, misc]
        def __new__(cls, *args: object, **kwargs: object) -> Spy:
            ran.append("Decimal")
            return original.__new__(cls, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(decimal, "Decimal", Spy)
    monkeypatch.setattr(datetime, "date", type("date", (datetime.date,), {}))
    result = call(_session(conn=conn), "query_sql", {"connection": "conn", "sql": "SELECT d, day, n FROM t"})
    assert result.ok and "1.50  2024-01-02  3" in result.text, result
    assert ran == []


def test_a_replaced_module_table_stops_every_read(monkeypatch):
    """N9: ``sys.modules`` replaced by a dict subclass: its ``get`` ran on every read's module look-ups."""
    ran: list[str] = []

    class Modules(dict):  # type: ignore[type-arg]
        def get(self, *args: object) -> object:
            ran.append("get")
            return dict.get(self, *args)  # type: ignore[arg-type]

    session = _session(x=1)
    monkeypatch.setattr(sys, "modules", Modules(sys.modules))
    result = call(session, "get_repr", {"expr": "x"})
    monkeypatch.undo()
    assert not result.ok and "sys.modules was replaced" in result.error
    assert ran == []


def test_a_duckdb_method_with_a_forged_file_name_is_not_taken_for_duckdbs(monkeypatch):
    """N2: ``compile()`` sets any ``co_filename``: a function claiming a file of DuckDB's, put in place of the
    connection's ``cursor``, passed for DuckDB's own code and ran here."""
    duckdb = pytest.importorskip("duckdb")
    from pyaichat.capabilities.database_here import _package_dir

    ran: list[str] = []
    original = duckdb.DuckDBPyConnection.cursor
    namespace = {"ran": ran, "original": original}
    source = "def cursor(self, *args):\n    ran.append('forged')\n    return original(self)\n"
    exec(compile(source, (_package_dir("duckdb") or "") + "_relation.py", "exec"), namespace)
    conn = duckdb.connect()
    monkeypatch.setattr(duckdb.DuckDBPyConnection, "cursor", namespace["cursor"])
    result = call(_session(conn=conn), "query_sql", {"connection": "conn", "sql": "SELECT 1 AS one"})
    assert not result.ok and "would run code of your session's" in result.error
    assert ran == []
