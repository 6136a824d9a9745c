"""The resolver behind query_sql (``sqllineage.trace``), on its own: every column of a statement traced to
the relation columns it reads; a secret column selected as it is comes back masked, used anywhere else it is
refused with a sentence naming it, and what cannot be told counts as every column the statement reads.

No database here (the catalog is given); ``test_sql_closed.py`` runs the same rule on SQLite, DuckDB and
PostgreSQL through psycopg and SQLAlchemy."""

from __future__ import annotations

import pytest

from pyaichat.capabilities.redact import is_secret_name
from pyaichat.capabilities.sqlcheck import check
from pyaichat.errors import CapabilityError

pytest.importorskip("sqlglot")

from pyaichat.capabilities.sqllineage import trace

TABLES = {
    "users": ["id", "name", "password", "created"],
    "orders": ["id", "user_id", "amount", "placed"],
    "people": ["name", "pw"],
    "lengths": ["id", "n"],
}
VIEWS = {
    "people": "CREATE VIEW people AS SELECT name, password AS pw FROM users",
    "lengths": "CREATE VIEW lengths AS SELECT id, length(password) AS n FROM users WHERE password > ''",
}


def traced(sql: str, dialect: str = "postgres", tables=TABLES, views=VIEWS):
    checked = check(sql, dialect)
    return trace(checked.tree, dialect, tables, views, is_secret_name)


def masked(sql: str, dialect: str = "postgres") -> set[int]:
    found = traced(sql, dialect)
    assert found.shape.outputs is not None, sql
    return found.masked([o.name or f"c{i}" for i, o in enumerate(found.shape.outputs)])


# -- used anywhere but as a selected value: refused, the column named ----------------------------------------
REFUSED = [
    ("postgres", "SELECT count(*) FROM users WHERE substr(password, 1, 1) = 'c'", "the WHERE clause"),
    ("postgres", "SELECT count(*) FROM users u JOIN orders o ON o.id = length(u.password)", "JOIN … ON"),
    ("postgres", "SELECT count(*) FROM users a JOIN users b USING (password)", "USING/NATURAL (password)"),
    ("postgres", "SELECT count(*) FROM users a NATURAL JOIN users b", "USING/NATURAL"),
    ("postgres", "SELECT count(*) FROM users GROUP BY password", "GROUP BY"),
    ("postgres", "SELECT name, password FROM users GROUP BY 1, 2", "GROUP BY"),
    ("duckdb", "SELECT password, count(*) FROM users GROUP BY ALL", "GROUP BY ALL"),
    ("postgres", "SELECT count(*) FROM users HAVING max(password) > 'm'", "HAVING"),
    ("postgres", "SELECT name FROM users ORDER BY password", "ORDER BY"),
    ("postgres", "SELECT name, password FROM users ORDER BY 2", "ORDER BY"),
    ("postgres", "SELECT name, password AS p FROM users ORDER BY p", "ORDER BY"),
    ("duckdb", "SELECT name, password FROM users ORDER BY ALL", "ORDER BY ALL"),
    ("duckdb", "SELECT name FROM users QUALIFY password LIKE 'h%'", "QUALIFY"),
    ("postgres", "SELECT name, row_number() OVER (ORDER BY password) FROM users", "a window"),
    ("postgres", "SELECT name, rank() OVER (PARTITION BY password) FROM users", "a window"),
    ("postgres", "SELECT rank() OVER w FROM users WINDOW w AS (ORDER BY password)", "WINDOW"),
    ("postgres", "SELECT name FROM users LIMIT (SELECT password FROM users LIMIT 1)", "LIMIT"),
    ("postgres", "SELECT DISTINCT password FROM users", "DISTINCT"),
    ("postgres", "SELECT DISTINCT ON (password) name FROM users", "DISTINCT ON"),
    ("postgres", "SELECT 'h' AS x UNION SELECT substr(password, 1, 1) FROM users", "users.password"),
    ("postgres", "SELECT 'x' AS p UNION SELECT password FROM users", "UNION (which compares rows)"),
    ("postgres", "SELECT password FROM users INTERSECT SELECT 'guess'", "INTERSECT"),
    ("postgres", "SELECT password FROM users EXCEPT ALL SELECT 'guess'", "EXCEPT"),
    ("sqlite", "SELECT value FROM users, json_each(json_array(password))", "the arguments of"),
    ("postgres", "SELECT g FROM users, generate_series(1, length(password)) AS g", "the arguments of"),
    (
        "postgres",
        "SELECT x FROM users, json_array_elements_text(json_build_array(password)) AS x",
        "arguments",
    ),
    ("duckdb", "SELECT x FROM users, unnest([password]) AS t(x)", "the arguments of"),
    ("postgres", "SELECT generate_series(1, length(password)) FROM users", "users.password"),
    ("duckdb", "SELECT unnest(string_split(password, '')) FROM users", "users.password"),
    (
        "postgres",
        "SELECT s.x FROM users, LATERAL (SELECT 1 AS x WHERE users.password LIKE 'h%') AS s",
        "WHERE",
    ),
    (
        "postgres",
        "SELECT count(*) FROM orders WHERE EXISTS (SELECT 1 FROM users WHERE password > 'm')",
        "WHERE",
    ),
    ("postgres", "SELECT count(*) FROM users WHERE name IN (SELECT password FROM users)", "the WHERE clause"),
    (
        "postgres",
        "SELECT count(*) FROM users WHERE name = ANY(SELECT password FROM users)",
        "the WHERE clause",
    ),
    ("postgres", "SELECT count(*) FROM (SELECT password AS p FROM users) AS s WHERE p LIKE 'h%'", "WHERE"),
    ("postgres", "WITH c AS (SELECT password AS p FROM users) SELECT count(*) FROM c WHERE p > 'm'", "WHERE"),
    ("postgres", "SELECT count(*) FROM people WHERE pw LIKE 'h%'", "the WHERE clause"),
    ("postgres", "SELECT count(*) FROM lengths WHERE n > 8", "the WHERE clause"),
    ("postgres", "SELECT count(*) FROM users AS u(a, b, x) WHERE x LIKE 'h%'", "the WHERE clause"),
    ("postgres", "SELECT count(*) FROM users u WHERE (SELECT u.password) LIKE 'h%'", "the WHERE clause"),
    (
        "postgres",
        "WITH RECURSIVE r(i, p) AS (SELECT 1, password FROM users UNION ALL SELECT i + 1, p FROM r "
        "WHERE p > 'm' AND i < 3) SELECT i FROM r",
        "the WHERE clause",
    ),
    # a computation on a secret: its errors, its time and its rows tell the value as a condition would
    ("postgres", "SELECT upper(password) FROM users", "a computation"),
    ("postgres", "SELECT password::int FROM users", "a computation"),
    ("duckdb", "SELECT CAST(password AS INTEGER) FROM users", "a computation"),
    ("postgres", "SELECT CASE WHEN password LIKE 'h%' THEN 1 / 0 END FROM users", "a computation"),
    ("postgres", "SELECT count(password) FROM users", "a computation"),
    ("postgres", "SELECT count(DISTINCT password) FROM users", "a computation"),
    ("postgres", "SELECT count(*) FILTER (WHERE password IS NULL) FROM users", "users.password"),
    ("postgres", "SELECT string_agg(name, ',' ORDER BY password) FROM users", "a computation"),
    ("postgres", "SELECT name || ':' || password FROM users", "a computation"),
    ("postgres", "SELECT upper(s.p) FROM (SELECT password AS p FROM users) AS s", "a computation"),
    ("postgres", "SELECT upper((SELECT password FROM users LIMIT 1))", "a computation"),
    ("postgres", "SELECT row_to_json(u) FROM users u", "a computation"),
    ("postgres", "SELECT (u).password FROM users u", "a computation"),
    ("postgres", "SELECT pw || 'x' FROM people", "a computation"),
]


@pytest.mark.parametrize(("dialect", "sql", "where"), REFUSED)
def test_a_secret_column_used_anywhere_but_selected_is_refused_by_name(dialect, sql, where):
    with pytest.raises(CapabilityError) as info:
        traced(sql, dialect)
    text = str(info.value)
    assert "users.password" in text and where in text and text.endswith("."), text
    assert text.count(". ") == 0, text  # one sentence


CANNOT_TELL = [
    ("duckdb", "SELECT count(*) FROM users WHERE #3 LIKE 'h%'"),  # `#3` in a WHERE: its FROM's third column
    ("duckdb", "SELECT count(*) FROM users WHERE COLUMNS('pass.*') LIKE 'h%'"),
    ("postgres", "SELECT count(*) FROM users u WHERE u::text LIKE '%h%'"),
    ("postgres", "SELECT count(*) FROM users WHERE nme = 'x'"),  # no relation has it: anything may be
    ("postgres", "SELECT count(*) FROM mystery WHERE a = 1"),  # columns that cannot be read
]


@pytest.mark.parametrize(("dialect", "sql"), CANNOT_TELL)
def test_what_cannot_be_told_in_a_clause_counts_as_every_column(dialect, sql):
    with pytest.raises(CapabilityError) as info:
        traced(sql, dialect)
    text = str(info.value)
    assert "users.password" in text or "secret column password" in text or "cannot be read" in text, text
    assert text.endswith(".")


# -- selected as it is: masked wherever it lands, whatever it is called --------------------------------------
MASKED = [
    ("postgres", "SELECT password FROM users", {0}),
    ("postgres", "SELECT id, password AS x, name FROM users", {1}),
    ("postgres", "SELECT * FROM users", {2}),
    ("postgres", "SELECT u.* FROM users u JOIN orders o ON o.user_id = u.id", {2}),
    ("postgres", "SELECT * FROM users JOIN orders USING (id)", {2}),
    ("sqlite", "SELECT * FROM orders JOIN users USING (id)", {5}),
    ("postgres", "SELECT x FROM users AS u(a, b, x)", {0}),
    ("postgres", "SELECT u.c FROM users AS u(a, b, c)", {0}),
    ("postgres", "SELECT (SELECT password) AS x FROM users", {0}),
    ("postgres", "SELECT (SELECT password FROM users LIMIT 1) AS x", {0}),
    ("postgres", "SELECT name FROM users UNION ALL SELECT password FROM users", {0}),
    ("postgres", "SELECT n FROM (SELECT password AS n FROM users) AS s", {0}),
    ("postgres", "WITH c AS (SELECT password AS q FROM users) SELECT q FROM c", {0}),
    ("postgres", "SELECT s.p FROM users, LATERAL (SELECT password AS p) AS s", {0}),
    ("postgres", "SELECT x FROM users JOIN (SELECT id, password AS x FROM users) AS s USING (id)", {0}),
    ("postgres", "SELECT u AS whole_row FROM users AS u", {0}),
    ("postgres", "SELECT * FROM people", {1}),
    ("postgres", "SELECT pw AS harmless FROM people", {0}),
    ("postgres", "SELECT id, n FROM lengths", {1}),  # the view's own computation: masked, not refused
    ("duckdb", "SELECT #3 AS x FROM users", {0}),
    ("duckdb", "SELECT #2 AS x FROM users", set()),
    ("duckdb", "SELECT * EXCLUDE (id) FROM users", {1}),
    ("duckdb", "SELECT * REPLACE (password AS name) FROM users", {1, 2}),
    ("duckdb", "SELECT * RENAME (password AS p) FROM users", {2}),
    (
        "postgres",
        "WITH RECURSIVE r(i, p) AS (SELECT 1, password FROM users UNION ALL SELECT i + 1, p FROM r "
        "WHERE i < 3) SELECT i, p FROM r",
        {1},
    ),
]


@pytest.mark.parametrize(("dialect", "sql", "expected"), MASKED)
def test_a_selected_secret_is_masked_through_every_road(dialect, sql, expected):
    assert masked(sql, dialect) == expected


def test_a_result_of_unknown_width_is_masked_whole():
    found = traced("SELECT COLUMNS('pass.*') AS x, name FROM users", "duckdb")
    assert found.shape.outputs is None and found.masked(["password", "name"]) == {0, 1}
    found = traced("SELECT * LIKE 'pass%' FROM users", "duckdb")
    assert found.masked(["password"]) == {0}


def test_a_result_that_is_not_the_one_predicted_is_masked_whole():
    found = traced("SELECT * FROM users")
    assert found.masked(["id", "name", "password", "created"]) == {2}
    assert found.masked(["id", "name", "created", "password"]) == {0, 1, 2, 3}  # names moved
    assert found.masked(["id", "name", "password"]) == {0, 1, 2}  # a column fewer
    duplicated = traced("SELECT * FROM (SELECT name AS a, password AS a FROM users) AS s", "duckdb")
    assert duplicated.masked(["a", "a_1"]) == {1}  # DuckDB's own name for a second `a`


# -- legitimate queries: answered, nothing masked that is not a secret ---------------------------------------
ALLOWED = [
    "SELECT user_id, count(*) AS n, sum(amount) FROM orders GROUP BY user_id HAVING sum(amount) > 10 "
    "ORDER BY n DESC LIMIT 5",
    "SELECT u.name, o.amount FROM users u JOIN orders o ON o.user_id = u.id WHERE o.amount > 5 ORDER BY 1",
    "WITH t AS (SELECT user_id, sum(amount) AS s FROM orders GROUP BY user_id) "
    "SELECT u.name, t.s FROM t JOIN users u ON u.id = t.user_id ORDER BY t.s DESC",
    "SELECT name, row_number() OVER (PARTITION BY name ORDER BY id) AS r FROM users",
    "SELECT user_id, sum(amount) OVER (PARTITION BY user_id ORDER BY placed) FROM orders",
    "SELECT count(*) FROM users WHERE name LIKE 'a%'",
    "SELECT name FROM users u WHERE EXISTS (SELECT * FROM orders o WHERE o.user_id = u.id)",
    "SELECT name FROM users WHERE id IN (SELECT user_id FROM orders WHERE amount > 3)",
    "SELECT name, (SELECT count(*) FROM orders o WHERE o.user_id = u.id) AS n FROM users u",
    "SELECT DISTINCT name FROM users",
    "SELECT id FROM users INTERSECT SELECT user_id FROM orders",
    "SELECT date_trunc('month', placed) AS m, sum(amount) FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT extract(year FROM placed) AS y, count(*) FROM orders GROUP BY y",
    "SELECT name FROM people WHERE name <> 'x'",
    "SELECT g FROM generate_series(1, 10) AS g WHERE g > 2",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) FROM orders",
    "SELECT name, ctid FROM users",
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) SELECT * FROM r",
    "VALUES (1, 'a'), (2, 'b')",
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_legitimate_queries_pass_with_nothing_masked(sql):
    assert masked(sql) == set()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name, count(*) FROM users GROUP BY ALL ORDER BY ALL",
        "SELECT name FROM users QUALIFY row_number() OVER (PARTITION BY name ORDER BY id) = 1",
        "SELECT list_transform([1, 2], x -> x + id) FROM users",
        "SELECT name, id AS i, i + 1 FROM users",
        "SELECT i FROM range(5) AS t(i) WHERE i > 1",
        "SELECT * EXCLUDE (password) FROM users",
        "SELECT rowid, name FROM users",
    ],
)
def test_legitimate_duckdb_queries_pass(sql):
    assert masked(sql, "duckdb") == set()


def test_no_secret_column_read_means_nothing_to_refuse():
    found = traced("SELECT amount FROM orders WHERE user_id = 1 ORDER BY placed")
    assert not found.reach and not found.touches_secret
    assert traced("SELECT count(*) FROM users").touches_secret is False
    assert traced("SELECT password FROM users").touches_secret is True


def test_a_construct_the_resolver_does_not_model_is_refused_only_near_a_secret():
    tables = {"t": ["a", "b"], "users": TABLES["users"]}
    free = traced("SELECT a FROM t TABLESAMPLE BERNOULLI (50)", tables=tables)
    assert free.masked(["a"]) == set()
    assert traced("SELECT a FROM t USING SAMPLE 10%", "duckdb", tables=tables).masked(["a"]) == set()
    with pytest.raises(CapabilityError, match=r"cannot trace .* reads the secret column users\.password"):
        traced("SELECT a FROM t, users USING SAMPLE 10%", "duckdb", tables=tables)


def test_a_long_chain_is_traced_without_recursion():
    chain = " OR ".join("id = 1" for _ in range(900))
    assert masked(f"SELECT id FROM users WHERE {chain}") == set()
    with pytest.raises(CapabilityError, match=r"users\.password in the WHERE clause"):
        traced(f"SELECT id FROM users WHERE {chain} OR password = 'x'")


def test_columns_that_double_at_each_step_are_refused_before_they_cost_seconds():
    """`SELECT *` over a self-join, twenty CTEs deep, is 3 million columns: 15 s of the resolver's CPU in the
    person's process, where no deadline stops it. It is refused at a bound; a short chain still passes."""
    steps = [f"t{i} AS (SELECT * FROM t{i - 1}, t{i - 1} x{i})" for i in range(1, 20)]
    sql = "WITH t0 AS (SELECT id, name FROM users), " + ", ".join(steps) + " SELECT 1 AS one FROM t19"
    with pytest.raises(CapabilityError, match=r"more than 100,000 columns"):
        traced(sql)
    assert (
        masked(
            "WITH t0 AS (SELECT id, name FROM users), " + ", ".join(steps[:5]) + " SELECT 1 AS one FROM t5"
        )
        == set()
    )


def test_views_that_read_views_many_times_are_refused_at_a_bound():
    """Each use of a view is read again: eight levels of views that each read the one below four times are
    65,536 copies of the first; refused once their definitions pass the bound, not traced for seconds."""
    views = {"v0": "SELECT id, name FROM users"}
    for level in range(1, 8):
        views[f"v{level}"] = (
            f"SELECT a.id FROM v{level - 1} a, v{level - 1} b, v{level - 1} c, v{level - 1} d"
        )
    tables = {**TABLES, **{name: ["id"] for name in views}}
    with pytest.raises(CapabilityError, match=r"views expand to more than 20,000 parts"):
        traced("SELECT id FROM v7", tables=tables, views=views)
    assert traced("SELECT id FROM v2", tables=tables, views=views).masked(["id"]) == set()


def test_a_recursive_cte_is_read_until_its_columns_stop_changing():
    """The secret reaches the last column only after eleven readings of the recursive part: its WHERE is
    refused then, not passed because the first readings saw nothing."""
    columns = ", ".join(f"c{i}" for i in range(12))
    rotated = ", ".join(f"c{(i - 1) % 12}" for i in range(12))  # c0 moves one column a reading
    ones = ", ".join(["1"] * 11)
    sql = (
        f"WITH RECURSIVE r({columns}) AS (SELECT password, {ones} FROM users UNION ALL "
        f"SELECT {rotated} FROM r WHERE c11 > 'a' AND c1 < 9) SELECT 1 AS x FROM r"
    )
    with pytest.raises(CapabilityError, match=r"users\.password"):
        traced(sql)
