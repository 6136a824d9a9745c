"""Which SQL functions ``query_sql`` lets a statement call, per database: an allow-list, and for the calls
known to have effects outside the result a reason the refusal can name.

A function the parser knows by its meaning (``sqlglot``'s typed expressions: ``SUBSTRING``, ``COUNT``,
``DATE_TRUNC`` …) is written back by the parser under its standard name, so the database runs that standard
function, never whatever name was typed; only the few typed ones that read files or reach outside are refused
(``EFFECT_CLASSES``). A function the parser does not know (``Anonymous``) is sent under the name it was
given, and is allowed only if that name, as the database resolves it (unquoted, any case), is on the list
for its database. Everything else — a user-defined function, an extension's, a system function with effects
— is refused before the statement is sent, whatever the role of the connection.
"""

from __future__ import annotations

# -- refused, with the reason the sentence gives -------------------------------------------------------------
FILES = "reads or writes files on the database machine"
PROCESSES = "runs programs or loads code into the database"
SESSIONS = "signals or ends database sessions"
SETTINGS = "changes or reloads the database's settings"
LOCKS = "takes locks that outlive the query"
SEQUENCES = "advances or sets a sequence (a write that no rollback undoes)"
OUTSIDE = "opens connections outside this database"
WAITS = "waits on purpose"
LARGE_OBJECTS = "reads or writes large objects (files inside the database, exported to disk)"
TRANSACTIONS = "assigns a transaction id (a write)"
EXTENSIONS = "installs or loads extensions"
SECRETS = "reads the database's stored secrets"
VALUES = "holds values of the tables' columns (statistics, samples, large objects, raw pages)"
STATEMENTS = "holds the text of statements (this session's or other sessions')"
CONNECTIONS = "holds connection strings and settings, which can carry credentials"

_PG_EFFECTS = {
    FILES: (
        "pg_read_file pg_read_binary_file pg_ls_dir pg_ls_logdir pg_ls_waldir pg_ls_tmpdir "
        "pg_ls_archive_statusdir pg_ls_logicalsnapdir pg_ls_logicalmapdir pg_ls_replslotdir pg_stat_file "
        "pg_file_write pg_file_rename "
        "pg_file_unlink pg_file_sync pg_logdir_ls pg_current_logfile pg_import_system_collations"
    ),
    LARGE_OBJECTS: (
        "lo_import lo_export lo_create lo_creat lo_unlink lo_open lo_close lo_put lo_get lo_from_bytea "
        "lo_truncate lo_truncate64 lo_lseek lo_lseek64 lo_tell lo_tell64 lo_read lo_write loread lowrite "
        "lo_compat_privileges"
    ),
    SESSIONS: "pg_terminate_backend pg_cancel_backend pg_signal_backend pg_log_backend_memory_contexts",
    SETTINGS: "set_config pg_reload_conf pg_rotate_logfile pg_switch_wal pg_promote pg_create_restore_point "
    "pg_wal_replay_pause pg_wal_replay_resume pg_backup_start pg_backup_stop pg_start_backup pg_stop_backup "
    "setseed pg_stat_reset pg_stat_reset_shared pg_stat_reset_single_table_counters pg_stat_reset_slru "
    "pg_logical_emit_message pg_replication_origin_create pg_create_physical_replication_slot "
    "pg_create_logical_replication_slot pg_drop_replication_slot pg_notify",
    LOCKS: "pg_advisory_lock pg_advisory_lock_shared pg_advisory_xact_lock pg_advisory_xact_lock_shared "
    "pg_try_advisory_lock pg_try_advisory_lock_shared pg_try_advisory_xact_lock "
    "pg_try_advisory_xact_lock_shared pg_advisory_unlock pg_advisory_unlock_shared pg_advisory_unlock_all",
    SEQUENCES: "nextval setval currval lastval",
    TRANSACTIONS: "txid_current pg_current_xact_id",
    OUTSIDE: "dblink dblink_exec dblink_connect dblink_connect_u dblink_send_query dblink_open dblink_fetch "
    "dblink_get_result postgres_fdw_get_connections",
    WAITS: "pg_sleep pg_sleep_for pg_sleep_until",
    PROCESSES: "query_to_xml query_to_xml_and_xmlschema cursor_to_xml table_to_xml database_to_xml "
    "schema_to_xml",
}
_DUCKDB_EFFECTS = {
    FILES: "read_csv read_csv_auto read_parquet parquet_scan read_json read_json_auto read_json_objects "
    "read_ndjson read_ndjson_auto read_ndjson_objects read_text read_blob glob sniff_csv parquet_metadata "
    "parquet_schema parquet_file_metadata parquet_kv_metadata iceberg_scan delta_scan read_xlsx "
    "sqlite_scan sqlite_attach postgres_scan postgres_attach mysql_scan",
    PROCESSES: "query query_table",
    OUTSIDE: "httpfs_request http_get http_post",
    SECRETS: "duckdb_secrets which_secret getenv",
    SETTINGS: "current_setting",
    EXTENSIONS: "duckdb_extensions load_extension",
    SEQUENCES: "nextval currval",
}
_MYSQL_EFFECTS = {
    FILES: "load_file",
    WAITS: "sleep benchmark",
    LOCKS: "get_lock release_lock release_all_locks is_free_lock is_used_lock",
    PROCESSES: "sys_exec sys_eval",
    SEQUENCES: "last_insert_id",
}
_SQLITE_EFFECTS = {
    PROCESSES: "load_extension fts3_tokenizer",
    FILES: "readfile writefile edit",
}


def _reasons(table: dict[str, str]) -> dict[str, str]:
    return {name: reason for reason, names in table.items() for name in names.split()}


EFFECTS: dict[str, dict[str, str]] = {
    "postgres": _reasons(_PG_EFFECTS),
    "duckdb": _reasons(_DUCKDB_EFFECTS),
    "sqlite": _reasons(_SQLITE_EFFECTS),
    "mysql": _reasons(_MYSQL_EFFECTS),
}
ALL_EFFECTS = {name: reason for table in EFFECTS.values() for name, reason in table.items()}

# Typed expressions of the parser that read files or reach outside in some database: never sent.
EFFECT_CLASSES = {
    "ReadCSV": FILES,
    "ReadParquet": FILES,
    "ToFile": FILES,
    "NextValueFor": SEQUENCES,
    "AIAgg": OUTSIDE,
    "AIClassify": OUTSIDE,
    "AIEmbed": OUTSIDE,
    "AIForecast": OUTSIDE,
    "AIGenerate": OUTSIDE,
    "AISimilarity": OUTSIDE,
    "AISummarizeAgg": OUTSIDE,
    "GenerateEmbedding": OUTSIDE,
    "GenerateText": OUTSIDE,
    "MLForecast": OUTSIDE,
    "MLTranslate": OUTSIDE,
    "Predict": OUTSIDE,
    "VectorSearch": OUTSIDE,
    "Secret": SECRETS,
}

# -- allowed: functions the parser leaves untyped, known to compute from their arguments only ---------------
_COMMON = """
abs acos asin atan atan2 avg bit_and bit_length bit_or bool_and bool_or cardinality cbrt ceil
ceiling char_length character_length chr coalesce concat concat_ws corr cos cot count covar_pop
covar_samp cume_dist current_date current_time current_timestamp date_part dense_rank degrees div
every exp first_value floor format greatest hash initcap lag last_value lead least left length ln
localtime localtimestamp log log10 log2 lower lpad ltrim max md5 min mod nth_value ntile nullif
octet_length percent_rank pi position power radians random rank regexp_matches regexp_replace repeat
replace reverse right round row_number rpad rtrim sha1 sha256 sign sin sqrt starts_with stddev
stddev_pop stddev_samp strpos substr substring sum tan to_char to_date to_hex to_number to_timestamp
translate trim trunc typeof unicode upper var_pop var_samp variance width_bucket mode
percentile_cont percentile_disc regr_slope regr_intercept regr_r2 regr_count ascii
"""
_POSTGRES = """
age array_agg array_append array_cat array_dims array_length array_lower array_ndims array_position
array_positions array_prepend array_remove array_replace array_to_string array_upper btrim
clock_timestamp date_bin date_trunc decode encode extract format_type gen_random_uuid
generate_series generate_subscripts isfinite json_agg json_array_elements json_array_elements_text
json_array_length json_build_array json_build_object json_each json_each_text json_extract_path
json_extract_path_text json_object json_object_agg json_object_keys json_populate_record
json_strip_nulls json_typeof jsonb_agg jsonb_array_elements jsonb_array_elements_text
jsonb_array_length jsonb_build_array jsonb_build_object jsonb_each jsonb_each_text
jsonb_extract_path jsonb_extract_path_text jsonb_object_agg jsonb_object_keys jsonb_path_query
jsonb_path_query_first jsonb_path_exists jsonb_pretty jsonb_set jsonb_strip_nulls jsonb_typeof
justify_days justify_hours justify_interval make_date make_interval make_time make_timestamp
make_timestamptz now num_nonnulls num_nulls overlay pg_typeof quote_ident quote_literal
quote_nullable regexp_count regexp_instr regexp_like regexp_split_to_array regexp_split_to_table
regexp_substr row_to_json sha224 sha384 sha512 split_part statement_timestamp string_agg
string_to_array string_to_table timeofday to_json to_jsonb transaction_timestamp unnest
array_to_json host hostmask netmask network masklen broadcast abbrev family inet_same_family
pg_size_pretty pg_total_relation_size pg_relation_size pg_table_size pg_indexes_size
pg_database_size pg_get_viewdef pg_get_indexdef pg_get_constraintdef pg_get_expr obj_description
col_description current_schema current_schemas current_database current_user session_user
current_role version has_table_privilege has_column_privilege has_schema_privilege to_regclass
array_fill range_merge lower_inf upper_inf isempty
"""
_DUCKDB = """
range generate_series unnest list_value list_aggregate list_sort list_reverse_sort list_distinct
list_unique list_contains list_has list_position list_extract list_element list_slice list_concat
list_cat list_append list_prepend list_filter list_transform list_reduce list_sum list_min list_max
list_avg list_count array_length array_extract array_slice array_contains array_to_string array_agg
list struct_pack struct_extract struct_insert map map_keys map_values map_extract map_entries epoch
epoch_ms epoch_us strftime strptime date_trunc date_diff datediff date_sub date_add datepart
date_part make_date make_time make_timestamp age dayname monthname last_day year month day hour
minute second week quarter dayofweek dayofyear isodow yearweek string_split str_split
string_split_regex regexp_extract regexp_extract_all regexp_full_match regexp_split_to_array
contains prefix suffix ends_with printf string_agg group_concat histogram arg_min arg_max argmin
argmax min_by max_by quantile quantile_cont quantile_disc median approx_count_distinct
approx_quantile bit_count product fsum kahan_sum favg entropy kurtosis skewness first last any_value
list_has_any list_has_all array_has array_distinct flatten len strlen levenshtein jaccard
jaro_similarity jaro_winkler_similarity damerau_levenshtein hamming editdist3 nfc_normalize
strip_accents lcase ucase instr bar format_bytes formatreadablesize formatreadabledecimalsize
json_extract json_extract_string json_extract_path json_extract_path_text json_keys json_type
json_valid json_array_length json_object json_array to_json json_structure json_group_array
json_group_object json_transform json_value json_exists row struct uuid gen_random_uuid
current_database current_schema version today now get_current_timestamp duckdb_tables duckdb_columns
duckdb_views duckdb_schemas duckdb_types duckdb_functions duckdb_indexes duckdb_constraints
duckdb_databases duckdb_keywords pragma_table_info
"""
_SQLITE = """
char glob hex ifnull iif instr julianday like likelihood likely unlikely printf quote randomblob
sign soundex total typeof unhex unicode unixepoch zeroblob date time datetime strftime timediff
group_concat string_agg json json_array json_array_length json_extract json_insert json_object
json_patch json_remove json_replace json_set json_type json_valid json_quote json_group_array
json_group_object json_each json_tree pragma_table_info pragma_table_xinfo pragma_index_list
pragma_index_info pragma_foreign_key_list changes total_changes last_insert_rowid sqlite_version
"""


def _names(*blocks: str) -> frozenset[str]:
    return frozenset(name for block in blocks for name in block.split())


ALLOWED: dict[str, frozenset[str]] = {
    "postgres": _names(_COMMON, _POSTGRES),
    "duckdb": _names(_COMMON, _DUCKDB),
    "sqlite": _names(_COMMON, _SQLITE),
    "": _names(_COMMON),
}

# Schemas a function may be named under: the database's own built-ins (any other holds user code).
BUILTIN_SCHEMAS = {"postgres": {"pg_catalog"}, "duckdb": {"main", "system"}, "sqlite": set(), "": set()}

# Catalog relations that expose what no column of the person's tables shows: the values of any column
# (statistics keep most common values and histograms, samples keep rows), the text of statements (the
# person's own uncommitted `UPDATE … SET password = '…'` in another session), credentials and the files
# they come from. Matched by the exact name the database resolves, in any schema (a view of the person's
# that reads one is refused too: the check runs on the statement with its views expanded). The list comes
# from each catalog's documentation, relation by relation; tests/data/test_sql_catalogs.py reads every
# relation of a live PostgreSQL catalog and fails on one whose columns hold values or statements but is
# neither here nor in its reviewed list.
_PG_RELATIONS = {
    SECRETS: "pg_authid pg_shadow pg_user_mapping pg_user_mappings user_mapping_options _pg_user_mappings",
    FILES: "pg_hba_file_rules pg_ident_file_mappings pg_file_settings",
    VALUES: "pg_statistic pg_stats pg_statistic_ext_data pg_stats_ext pg_stats_ext_exprs pg_largeobject",
    STATEMENTS: "pg_stat_activity pg_stat_statements pg_stat_monitor pg_prepared_statements pg_cursors "
    "pg_backend_memory_contexts",
    CONNECTIONS: "pg_subscription pg_stat_wal_receiver pg_settings pg_db_role_setting",
}
_DUCKDB_RELATIONS = {
    SECRETS: "duckdb_secrets",
    VALUES: "pragma_storage_info duckdb_table_sample duckdb_variables",
    STATEMENTS: "duckdb_logs duckdb_prepared_statements pg_prepared_statements",
    CONNECTIONS: "duckdb_settings pg_settings",
}
_SQLITE_RELATIONS = {VALUES: "sqlite_stat3 sqlite_stat4 sqlite_dbpage"}
# Columns of catalog relations that hold what a secret-named column would: masked when selected, refused
# anywhere else (``sqllineage``), like `password` in a table of the person's. Per-role and per-database
# settings are where `ALTER DATABASE … SET "app.jwt_secret" TO '…'` keeps a key (PostgREST's recipe), and
# a function's own settings (`ALTER FUNCTION f SET app.jwt_secret = '…'`) are the same kind of place;
# `attmissingval` is the value every older row holds of a column added with a default.
# A column's default and a function's body hold what the person wrote in them
# (`api_key text DEFAULT 'sk-live-…'`), and so does the `CREATE TABLE` text SQLite and DuckDB keep.
_DEFAULTS = {
    ("columns", "column_default"),
    ("pragma_table_info", "dflt_value"),
    ("pragma_table_xinfo", "dflt_value"),
}
_SCHEMA_TEXT = {
    (t, "sql") for t in ("sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema")
}
SECRET_COLUMNS: dict[str, frozenset[tuple[str, str]]] = {
    "postgres": frozenset(
        {
            ("pg_roles", "rolconfig"),
            ("pg_user", "useconfig"),
            ("pg_proc", "proconfig"),
            ("pg_proc", "prosrc"),
            ("pg_proc", "probin"),
            ("pg_proc", "prosqlbody"),
            ("pg_attribute", "attmissingval"),
            ("pg_attrdef", "adbin"),
            ("routines", "routine_definition"),
            ("attributes", "attribute_default"),
            ("domains", "domain_default"),
            *_DEFAULTS,
        }
    ),
    "duckdb": frozenset({*_DEFAULTS, *_SCHEMA_TEXT}),
    "sqlite": frozenset({*_DEFAULTS, *_SCHEMA_TEXT}),
    "": frozenset(_DEFAULTS),
}
# The columns of the catalog's table functions that show a default, so each is traced as its own column.
_TABLE_INFO = ("cid", "name", "type", "notnull", "dflt_value", "pk")
FUNCTION_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "sqlite": {
        "pragma_table_info": _TABLE_INFO,
        "pragma_table_xinfo": (*_TABLE_INFO, "hidden"),
    },
    "duckdb": {"pragma_table_info": _TABLE_INFO},
}
REFUSED_RELATIONS: dict[str, dict[str, str]] = {
    "postgres": _reasons(_PG_RELATIONS),
    "duckdb": _reasons(_DUCKDB_RELATIONS),
    "sqlite": _reasons(_SQLITE_RELATIONS),
    "": {},
}
