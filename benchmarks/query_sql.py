"""query_sql's cost: the statement check (sqlglot, parsed and checked twice), masking by lineage, and a whole
call on a SQLite file, as medians over repeated runs. Prints figures; asserts nothing.

    python benchmarks/query_sql.py
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], runs: int = 100) -> float:
    for _ in range(5):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    from pyaichat.capabilities import call, sqlcheck
    from pyaichat.config import Config
    from pyaichat.session import Session

    folder = tempfile.mkdtemp()
    conn = sqlite3.connect(os.path.join(folder, "shop.db"))
    conn.execute("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, amount REAL, api_token TEXT)")
    rows = [("north" if i % 2 else "south", float(i), f"tok-{i}") for i in range(1000)]
    conn.executemany("INSERT INTO sales (region, amount, api_token) VALUES (?, ?, ?)", rows)
    conn.commit()
    session = Session({"db": conn})
    config = Config(audit=False, tool_timeout=3)
    plain = "SELECT region, count(*), sum(amount) FROM sales WHERE amount > 10 GROUP BY region ORDER BY 1"
    derived = "SELECT region, substr(api_token, 1, 3) AS t FROM (SELECT * FROM sales) AS s LIMIT 5"
    checked = median_ms(lambda: sqlcheck.check(plain, "sqlite"))
    print(f"sqlcheck.check, a GROUP BY statement:      {checked:.2f} ms")
    for label, sql in (("no secret column named", plain), ("a column derived from one", derived)):
        result = call(session, "query_sql", {"connection": "db", "sql": sql}, config=config)
        assert result.ok, result.error
        ms = median_ms(
            lambda sql=sql: call(session, "query_sql", {"connection": "db", "sql": sql}, config=config)
        )
        print(f"query_sql on SQLite, {label + ':':27} {ms:.2f} ms")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
