"""Is this SQL one read-only statement? Checked before it is sent, for every database alike.

This is the first of two walls (the database holds the second: a read-only connection or transaction, see
``query_sql``). A small lexer reads the text the way SQL databases do — ``--`` and ``/* */`` comments, quoted
strings (``''`` doubling, ``E'\\''`` escapes), dollar quoting (``$tag$ … $tag$``), quoted identifiers
(``"…"``, `````…`````, ``[…]``) — so a keyword inside a string or an identifier never counts, and one hidden
in a comment never slips through. Then:

* exactly one statement (a trailing ``;`` is fine);
* it starts with ``SELECT``, ``WITH``, ``VALUES``, ``TABLE``, ``(`` or ``EXPLAIN`` (``EXPLAIN ANALYZE`` runs
  its statement, which must itself pass);
* no word that writes, changes settings or reaches outside the database anywhere in it (``INSERT``,
  ``UPDATE`` … ``INTO``, ``COPY``, ``ATTACH``, ``PRAGMA``, ``INSTALL``/``LOAD``, ``SET``, ``CALL``, row locks
  ``FOR UPDATE/SHARE`` …), no function known to sleep, signal other sessions, read or write server files,
  change settings or open other connections (``pg_sleep``, ``pg_terminate_backend``, ``pg_read_file``,
  ``lo_export``, ``dblink``, ``set_config``, ``nextval``, ``load_extension``, DuckDB's ``read_csv`` and
  friends, ``query()``, ``getenv`` …), and no file named where a table goes (DuckDB reads ``FROM 'x.csv'``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import CapabilityError

_STARTS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "(", "EXPLAIN"})
_WRITES = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "CREATE", "DROP", "ALTER", "TRUNCATE", "RENAME",
        "GRANT", "REVOKE", "COPY", "ATTACH", "DETACH", "PRAGMA", "INSTALL", "LOAD", "FORCE", "CALL", "EXEC",
        "EXECUTE", "VACUUM", "REINDEX", "CLUSTER", "LOCK", "UNLOCK", "SET", "RESET", "DO", "COMMENT",
        "SECURITY", "LISTEN", "NOTIFY", "UNLISTEN", "PREPARE", "DEALLOCATE", "DECLARE", "FETCH", "MOVE",
        "CLOSE", "CHECKPOINT", "DISCARD", "IMPORT", "EXPORT", "BEGIN", "COMMIT", "ROLLBACK", "ABORT",
        "SAVEPOINT", "RELEASE", "START", "HANDLER", "USE", "INTO", "OUTFILE", "DUMPFILE", "REFRESH",
        "REASSIGN", "SHUTDOWN", "KILL", "FLUSH", "PURGE", "OPTIMIZE", "REPAIR",
    }
)  # fmt: skip
_DENIED_FUNCTIONS = re.compile(
    r"""^(
        pg_sleep\w* | pg_terminate_backend | pg_cancel_backend | pg_reload_conf | pg_rotate_logfile
      | pg_switch_wal | pg_promote | pg_read_file | pg_read_binary_file | pg_ls_\w+ | pg_stat_file
      | pg_file_\w+ | pg_logdir_ls | pg_notify | pg_advisory\w* | pg_try_advisory\w* | pg_create_\w+
      | pg_drop_\w+ | pg_replication_\w+ | pg_logical_\w+ | pg_log_\w+ | pg_import_system_collations
      | pg_current_xact_id | txid_current | lo_\w+ | dblink\w* | set_config | nextval | setval
      | query_to_xml\w* | table_to_xml\w* | cursor_to_xml\w* | database_to_xml\w* | schema_to_xml\w*
      | load_extension | readfile | writefile | edit | fts3_tokenizer
      | read_\w+ | glob | sniff_csv | parquet_\w+ | iceberg_\w+ | delta_\w+ | \w+_scan | \w+_attach
      | query | query_table | getenv | http_\w+ | httpfs_\w+ | duckdb_secrets | which_secret
      | sleep | benchmark | load_file | get_lock | release_lock | release_all_locks | sys_exec | sys_eval
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "string", "ident", "number", "punct"
    text: str


def tokens(sql: str, backslashes: bool = False) -> list[Token]:
    """The statement's tokens. Raise ``CapabilityError`` for an unterminated string, quoted identifier or
    comment (the database would read the rest differently from us). ``backslashes``: read ``\\'`` inside
    a string as an escaped quote and ``[`` as plain punctuation, as MySQL and PostgreSQL do."""
    out: list[Token] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif sql.startswith("--", i) or (backslashes and ch == "#"):
            end = sql.find("\n", i)
            out.append(Token("comment", sql[i + 1 : n if end < 0 else end]))
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = _block_comment_end(sql, i)
            out.append(Token("comment", sql[i + 2 : end - 2]))
            i = end
        elif ch in "'\"`" or (ch == "[" and not backslashes) or (ch in "eE" and sql.startswith("'", i + 1)):
            i = _quoted(sql, i, out, backslashes)
        elif ch == "$" and (m := re.match(r"\$([A-Za-z_]\w*)?\$", sql[i:])):
            tag = m.group(0)
            end = sql.find(tag, i + len(tag))
            if end < 0:
                raise CapabilityError("The SQL has an unterminated dollar-quoted string.")
            out.append(Token("string", sql[i + len(tag) : end]))
            i = end + len(tag)
        elif ch.isalpha() or ch == "_":
            m = re.match(r"[A-Za-z_][\w$]*", sql[i:])
            assert m is not None
            out.append(Token("word", m.group(0).upper()))
            i += len(m.group(0))
        elif ch.isdigit():
            m = re.match(r"\d[\w.]*", sql[i:])
            assert m is not None
            out.append(Token("number", m.group(0)))
            i += len(m.group(0))
        else:
            out.append(Token("punct", ch))
            i += 1
    return out


def _block_comment_end(sql: str, i: int) -> int:
    depth, j = 0, i
    while j < len(sql):  # PostgreSQL nests block comments: /* /* */ still open */
        if sql.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif sql.startswith("*/", j):
            depth, j = depth - 1, j + 2
            if depth == 0:
                return j
        else:
            j += 1
    raise CapabilityError("The SQL has an unterminated /* comment.")


def _quoted(sql: str, i: int, out: list[Token], backslashes: bool) -> int:
    escapes = sql[i] in "eE"
    if escapes:
        i += 1
    escapes = escapes or (backslashes and sql[i] in "'\"")
    opener = sql[i]
    closer = "]" if opener == "[" else opener
    j, buf = i + 1, []
    while j < len(sql):
        ch = sql[j]
        if escapes and ch == "\\":
            buf.append(sql[j : j + 2])
            j += 2
            continue
        if ch == closer:
            if closer != "]" and sql.startswith(closer * 2, j):  # '' inside '…'
                buf.append(ch)
                j += 2
                continue
            out.append(Token("string" if opener == "'" else "ident", "".join(buf)))
            return j + 1
        buf.append(ch)
        j += 1
    what = "string" if opener == "'" else "quoted name"
    raise CapabilityError(f"The SQL has an unterminated {what}.")


def check_read_only(sql: str) -> str:
    """``sql`` (without a trailing ``;``) if it is one read-only statement; else ``CapabilityError`` with one
    sentence saying why it was refused."""
    text = (sql or "").strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    # Databases disagree on backslashes in strings and on comments: the statement must pass either way.
    for backslashes in (False, True):
        toks = tokens(text, backslashes)
        for tok in toks:
            if tok.kind == "comment" and (set(tok.text) & set(";'\"") or _words(tok.text) & _WRITES):
                raise CapabilityError("The SQL has a comment with a quote, ';' or a writing keyword in it.")
        toks = [t for t in toks if t.kind != "comment"]
        if not toks:
            raise CapabilityError("The SQL is empty.")
        if any(t == Token("punct", ";") for t in toks):
            raise CapabilityError("Only one SQL statement can run at a time (there is a ';' in the middle).")
        _check_tokens(toks)
    return text


def _words(text: str) -> set[str]:
    return {w.upper() for w in re.findall(r"[A-Za-z_]\w*", text)}


def _check_tokens(toks: list[Token]) -> None:
    first = toks[0].text if toks[0].kind in ("word", "punct") else ""
    if first not in _STARTS:
        raise CapabilityError(
            "Only a read-only SELECT, WITH … SELECT, VALUES or EXPLAIN can run; "
            f"this starts with {first or '?'}."
        )
    if first == "EXPLAIN":
        rest = _explain_body(toks[1:])
        if not rest:
            raise CapabilityError("EXPLAIN needs the statement it explains.")
        return _check_tokens(rest)
    for k, tok in enumerate(toks):
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        prev = toks[k - 1] if k else None
        if tok.kind == "word":
            if tok.text in _WRITES:
                raise CapabilityError(f"The SQL contains {tok.text}: only reading is allowed.")
            if tok.text == "REPLACE" and nxt is not None and nxt.text == "INTO":
                raise CapabilityError("The SQL contains REPLACE INTO: only reading is allowed.")
            if tok.text == "SHARE" and prev is not None and prev.text == "FOR":
                raise CapabilityError("The SQL locks rows (FOR SHARE): only plain reading is allowed.")
            if nxt == Token("punct", "(") and _DENIED_FUNCTIONS.match(tok.text):
                raise CapabilityError(
                    f"The SQL calls {tok.text.lower()}(), which can reach outside the database, wait, or "
                    "change state: it is not allowed here."
                )
        if tok.kind == "string" and prev is not None and prev.text in ("FROM", "JOIN"):
            raise CapabilityError("The SQL reads a file or URL where a table goes: only tables can be read.")


def _explain_body(toks: list[Token]) -> list[Token]:
    """The statement after ``EXPLAIN`` and its options (``ANALYZE``, ``VERBOSE``, ``QUERY PLAN``, ``(…)``)."""
    k = 0
    while k < len(toks):
        tok = toks[k]
        if tok.kind == "word" and tok.text in ("ANALYZE", "ANALYSE", "VERBOSE", "QUERY", "PLAN", "FORMAT"):
            k += 1
        elif (
            tok == Token("punct", "(")
            and k + 1 < len(toks)
            and toks[k + 1].kind == "word"
            and (toks[k + 1].text not in ("SELECT", "WITH", "VALUES"))
        ):
            depth = 0
            while k < len(toks):
                depth += {"(": 1, ")": -1}.get(toks[k].text if toks[k].kind == "punct" else "", 0)
                k += 1
                if depth == 0:
                    break
        elif tok.kind == "word" and tok.text in ("JSON", "TEXT", "XML", "YAML", "TREE", "GRAPHVIZ"):
            k += 1
        else:
            break
    return toks[k:]


def is_explain(sql: str) -> bool:
    toks = [t for t in tokens(sql) if t.kind != "comment"]
    return bool(toks) and toks[0] == Token("word", "EXPLAIN")


def explain_runs_statement(sql: str) -> bool:
    """``EXPLAIN ANALYZE`` runs what it explains (and so returns what a query returns at best)."""
    toks = [t for t in tokens(sql) if t.kind != "comment"]
    head = {t.text for t in toks[:8] if t.kind == "word"}
    return bool(toks) and toks[0].text == "EXPLAIN" and bool(head & {"ANALYZE", "ANALYSE"})
