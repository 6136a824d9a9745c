"""Where a SQLAlchemy engine or connection points, read from its URL by structure alone — so that the
database can be reached without running a line of SQLAlchemy, of its dialect, or of the session's.

An engine runs code to connect: its ``creator`` (the session's, when it gave one), the dialect's
``do_connect`` listeners, class-level event listeners on ``Engine``/``Pool``, URL plugins, ``connect_args``
objects, a DBAPI ``module=``, and any SQLAlchemy method the session patched. No allow-list of those can be
complete (an independent red team found sixteen roads through one). So the engine is never used: its URL's
fields are read as Python stores them (the ``URL`` named tuple's items, each an exact ``str``/``int``, its
query an exact-str mapping read through ``dict``'s own C methods), and a connection of pyaichat's own is
opened from them with the driver's own entry point (``database_here``): SQLite from the file named,
PostgreSQL through psycopg with libpq's keywords — those of the URL, and the plain ones (exact strings and
integers: ``host``, ``dbname``, ``user``, ``password``…) of ``connect_args``, read as data from the function
``create_engine`` made, which is never called. Nothing else the engine would add on top (an SSL context
object, a creator, listeners) is applied: the connection is pyaichat's, read-only, to the database named.

Only those two kinds are read here; a URL with a query key pyaichat does not know to be harmless, another
dialect, or anything not plain is not read (``None``), and the engine is described from its type.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

from . import structural

__all__ = ["PlainTarget", "exactly_sqlalchemy", "plain_target", "shown_url"]

_FIELDS = ("drivername", "username", "password", "host", "port", "database", "query")
_SQLITE = frozenset({"sqlite", "sqlite+pysqlite"})
_POSTGRES = frozenset({"postgresql", "postgresql+psycopg", "postgresql+psycopg2"})
# libpq keywords a URL's query may carry that only say where and how securely to connect (never ``options``:
# it could turn the read-only transaction off; never ``service``/``passfile``: another file's parameters)
_PG_QUERY = frozenset(
    {"host", "hostaddr", "port", "password", "sslmode", "sslrootcert", "sslcert", "sslkey", "sslcrl",
     "sslcompression", "application_name", "target_session_attrs", "gssencmode", "channel_binding",
     "krbsrvname"}
)  # fmt: skip
_PG_KEYS = _PG_QUERY | {"dbname", "user"}  # what connect_args may set as well


@dataclass(frozen=True)
class PlainTarget:
    """A database a URL names: ``kind`` ``"sqlite"`` (``path``) or ``"postgresql"`` (libpq ``params``, the
    password apart), and the URL as it may be shown (no password, no query value)."""

    kind: str
    shown: str
    path: str = ""
    params: tuple[tuple[str, str], ...] = ()
    password: str | None = None
    connection: bool = False  # a ``Connection`` (else an ``Engine``)


def plain_target(value: Any) -> PlainTarget | None:
    """Where ``value`` — exactly SQLAlchemy's ``Engine`` or ``Connection`` — points, when its URL is plain and
    names a SQLite file or a PostgreSQL database; ``None`` otherwise. Runs no code of the value's."""
    engine, connection = _engine(value)
    if engine is None:
        return None
    url = (structural.instance_dict(engine) or {}).get("url")
    fields = _url_fields(url)
    if fields is None:
        return None
    driver, user, password, host, port, database, query = fields
    shown = _shown(driver, user, password, host, port, database, query)
    if driver in _SQLITE:
        if query or not database or database == ":memory:" or database.startswith("file:"):
            return None
        return PlainTarget("sqlite", shown, path=database, connection=connection)
    if driver in _POSTGRES:
        if any(key not in _PG_QUERY or type(v) is not str for key, v in query):
            return None
        params = [
            ("dbname", database),
            ("user", user),
            ("host", host),
            ("port", None if port is None else str(port)),
        ]
        given = {**dict(query), **_connect_args(engine)}
        password = given.pop("password", password)  # libpq's keyword, as a URL's query may give it
        given = {k: v for k, v in given.items() if k in _PG_KEYS}
        plain = tuple({**{k: v for k, v in params if v is not None}, **given}.items())
        return PlainTarget("postgresql", shown, params=plain, password=password, connection=connection)
    return None


def exactly_sqlalchemy(value: Any) -> bool:
    """``value`` is exactly SQLAlchemy's ``Engine``, or its ``Connection`` to one (no subclass): its adapter
    reads it through ``plain_target`` alone, and says so when the URL names nothing it opens."""
    return _engine(value)[0] is not None


def shown_url(value: Any) -> str | None:
    """``value``'s URL as it may be shown (no password, no query value) when its fields are plain, whatever
    the database; ``None`` otherwise."""
    engine, _ = _engine(value)
    fields = _url_fields((structural.instance_dict(engine) or {}).get("url")) if engine is not None else None
    return None if fields is None else _shown(*fields)


def _connect_args(engine: Any) -> dict[str, str]:
    """The plain libpq keywords among the parameters ``create_engine`` made from the URL and ``connect_args``
    (``host``, ``dbname``, ``user``, ``password``… given there rather than in the URL): read as data from
    the closure of the ``connect`` function it made — never called — each an exact ``str`` or ``int``; any
    other entry (psycopg's adapters map, an SSL context object) is left out, not read."""
    pool = (structural.instance_dict(engine) or {}).get("pool")
    creator = (structural.instance_dict(pool) or {}).get("_creator_arg") if pool is not None else None
    if type(creator) is not types.FunctionType:
        return {}
    names, cells = creator.__code__.co_freevars, creator.__closure__ or ()
    if type(names) is not tuple or len(names) != len(cells) or "cparams" not in names:
        return {}
    try:
        cparams = _CELL(cells[names.index("cparams")])
    except ValueError:  # an empty cell
        return {}
    if not structural.is_subclass(type(cparams), dict) or dict.__len__(cparams) > 64:
        return {}
    found: dict[str, str] = {}
    for key, value in list(dict.items(cparams)):
        if type(key) is str and key in _PG_KEYS and type(value) in (str, int):
            found[key] = str(value)
    return found


_CELL = types.CellType.__dict__["cell_contents"].__get__


def _engine(value: Any) -> tuple[Any, bool]:
    """``(the engine, whether value is a Connection)`` for exactly SQLAlchemy's classes (else no engine)."""
    namespace = structural.module_namespace(structural.loaded_module("sqlalchemy.engine.base"))
    engine_cls, connection_cls = namespace.get("Engine"), namespace.get("Connection")
    kind = type(value)
    if engine_cls is not None and kind is engine_cls:
        return value, False
    if connection_cls is not None and kind is connection_cls:
        held = (structural.instance_dict(value) or {}).get("engine")
        return (held, True) if engine_cls is not None and type(held) is engine_cls else (None, True)
    return None, False


def _url_class() -> Any:
    return structural.module_namespace(structural.loaded_module("sqlalchemy.engine.url")).get("URL")


def _url_fields(url: Any) -> tuple[Any, ...] | None:
    """The URL's seven fields, each plain (exact ``str``, ``int`` port, ``None``), the query as sorted
    ``(key, value)`` pairs of exact strings; ``None`` when anything is not plain."""
    url_cls = _url_class()
    if url_cls is None or type(url) is not url_cls or tuple.__len__(url) != len(_FIELDS):
        return None
    names = structural.lookup(url_cls, "_fields")
    if type(names) is not tuple or not all(type(n) is str for n in tuple.__iter__(names)) or names != _FIELDS:
        return None
    values = list(tuple.__iter__(url))
    *head, query = values
    for i, item in enumerate(head):
        allowed = (int, type(None)) if _FIELDS[i] == "port" else (str, type(None))
        if type(item) not in allowed:
            return None
    if type(head[0]) is not str:
        return None
    pairs = _query_pairs(query)
    return None if pairs is None else (*head, pairs)


def _query_pairs(query: Any) -> tuple[tuple[str, Any], ...] | None:
    """A URL's query read through ``dict``'s own methods: exact-str keys, values exact ``str`` or a tuple of
    them (a repeated key); at most 32 entries."""
    if not structural.is_subclass(type(query), dict) or dict.__len__(query) > 32:
        return None
    pairs = []
    for key, value in list(dict.items(query)):
        if type(key) is not str:
            return None
        if type(value) is tuple:
            if not all(type(v) is str for v in tuple.__iter__(value)):
                return None
        elif type(value) is not str:
            return None
        pairs.append((key, value))
    return tuple(sorted(pairs))


def _shown(
    driver: str, user: Any, password: Any, host: Any, port: Any, database: Any, query: tuple[Any, ...]
) -> str:
    """The URL without its password and its query's values (a ``?password=`` or a token may be there)."""
    who = "" if user is None else user + (":<redacted password>" if password is not None else "") + "@"
    where = ("" if host is None else host) + ("" if port is None else f":{port}")
    path = "" if database is None else "/" + database
    keys = "&".join(f"{k}=…" for k, _ in query)
    return f"{driver}://{who}{where}{path}" + (f"?{keys}" if keys else "")
