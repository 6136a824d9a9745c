"""query_sql's list of catalog relations it refuses, held against a live PostgreSQL catalog: every relation of
``pg_catalog`` and ``information_schema`` whose columns can hold values of the person's tables, statements
or credentials is refused, or has a column treated as secret, or is reviewed here with the reason it is not
(a new PostgreSQL version's new view fails this test until someone reads what it exposes)."""

from __future__ import annotations

import pytest

from pyaichat.capabilities import sqlfunctions as funcs

pytest.importorskip("sqlglot")

# A column holds values, statements or credentials by its type or its name.
VALUE_TYPES = {"anyarray", "pg_mcv_list", "pg_statistic[]", "bytea"}
TELLING_NAMES = {
    "query", "statement", "ident", "conninfo", "subconninfo", "setconfig", "rolconfig", "useconfig",
    "setting", "passwd", "rolpassword", "umoptions", "srvoptions", "ftoptions", "fdwoptions", "option_value",
    "definition", "prosrc",
}  # fmt: skip
TELLING_ENDINGS = ("config", "password", "secret")  # settings kept per role, database or function

# Read, and judged not to expose values of the person's tables, statements or credentials.
REVIEWED = {
    ("pg_trigger", "tgargs"): "the arguments written in CREATE TRIGGER: the schema, not its rows",
    ("pg_roles", "rolpassword"): "always '********'",
    ("pg_user", "passwd"): "always '********'",
    ("pg_config", "setting"): "how the server was built: paths and compiler flags",
    ("pg_foreign_server", "srvoptions"): "where a foreign server is; passwords go in user mappings (refused)",
    ("pg_foreign_table", "ftoptions"): "which remote table a foreign table reads",
    ("pg_foreign_data_wrapper", "fdwoptions"): "a wrapper's options",
    ("_pg_foreign_servers", "srvoptions"): "the same as pg_foreign_server.srvoptions",
    ("_pg_foreign_tables", "ftoptions"): "the same as pg_foreign_table.ftoptions",
    ("_pg_foreign_data_wrappers", "fdwoptions"): "the same as pg_foreign_data_wrapper.fdwoptions",
    ("foreign_server_options", "option_value"): "the same as pg_foreign_server.srvoptions",
    ("foreign_table_options", "option_value"): "the same as pg_foreign_table.ftoptions",
    ("foreign_data_wrapper_options", "option_value"): "the same as pg_foreign_data_wrapper.fdwoptions",
    ("column_options", "option_value"): "a foreign table's column options",
    ("pg_views", "definition"): "a view's SQL: the schema (query_sql reads it to trace views)",
    ("pg_matviews", "definition"): "a materialized view's SQL: the schema",
    ("pg_rules", "definition"): "a rule's SQL: the schema",
    ("pg_proc", "prosrc"): "a function's source: the schema",
    ("pg_extension", "extconfig"): "the oids of an extension's configuration tables, not their rows",
}

CATALOG_SQL = """
SELECT c.relname, a.attname, format_type(a.atttypid, NULL)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm')
ORDER BY 1, a.attnum
"""


def test_every_catalog_relation_that_tells_values_or_statements_is_refused(pg_server):
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(pg_server.get_uri()) as conn:
        rows = conn.execute(CATALOG_SQL).fetchall()
    assert len({r for r, _, _ in rows}) > 100  # the whole catalog was read
    refused = funcs.REFUSED_RELATIONS["postgres"]
    secret = funcs.SECRET_COLUMNS["postgres"]
    unjudged = sorted(
        f"{relation}.{column} ({kind})"
        for relation, column, kind in rows
        if (kind in VALUE_TYPES or column in TELLING_NAMES or column.endswith(TELLING_ENDINGS))
        and relation not in refused
        and (relation, column) not in secret
        and (relation, column) not in REVIEWED
    )
    assert not unjudged, "catalog columns nobody judged: " + ", ".join(unjudged)
    assert {"pg_stats", "pg_statistic", "pg_stat_activity", "pg_largeobject"} <= set(refused)


def test_the_refused_relations_are_real_relations_of_the_catalog(pg_server):
    """No name on the list is a typo: each is a relation of this server (or of an extension, named so)."""
    psycopg = pytest.importorskip("psycopg")
    extensions = {"pg_stat_statements", "pg_stat_monitor"}  # their views exist once they are installed
    with psycopg.connect(pg_server.get_uri()) as conn:
        names = {r for (r,) in conn.execute("SELECT relname FROM pg_class").fetchall()}
    assert set(funcs.REFUSED_RELATIONS["postgres"]) - names - extensions == set()
