"""The database connections whose adapters describe them in the person's process (issue 44, point 8).

A connection must never be used from a forked child: its socket or file handle is shared after ``fork``, so a
child talking on it would change the person's connection (a write to their state). The adapters
(``adapters.sqlite``, ``adapters.psycopg``) never use it either: they read its local metadata through the
driver (SQLite's file name, libpq's parameters and transaction status) and open a read-only connection of
their own. That runs no code of the session's only when the connection is the driver's own, so a connection
counts here when its exact type is the driver's class, and that class (with what the adapter reads through
it) is the driver's code as installed:

- ``sqlite3.Connection``: an immutable compiled type, nothing can be set on it;
- ``psycopg.Connection``: Python classes, so every function and property along its MRO, on
  ``ConnectionInfo`` and on the connection's ``pgconn`` must come from psycopg's own files (a patch the
  session made is code of the session's: the connection then goes to the child, which refuses it);
- a SQLAlchemy ``Engine`` or ``Connection``: the adapter never uses it or its pool, it opens a connection of
  its own with the engine's creator — which runs the session's code when the session gave one (a custom
  ``creator``, a ``do_connect`` listener, a DBAPI ``module=`` of its own). So it counts only when the engine,
  its pool and its dialect are SQLAlchemy's own classes with their own code (``_sqlalchemy_own``), the creator
  is the one ``create_engine`` made from the URL, no listener was ever added to the dialect, and the DBAPI
  module is an installed library's. Anything else is described in the walled child from its URL (which
  cannot connect: the child holds no password and reaches no network), and ``query_sql`` refuses it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import types
from typing import Any

from . import structural

__all__ = ["known_connection", "queried_here"]

_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_CONTEXTLIB = contextlib.__file__
_FLAGS = type.__dict__["__flags__"].__get__
_QUALNAME = types.FunctionType.__dict__["__qualname__"].__get__
_PATTERN = type(re.compile(""))  # a compiled regular expression: data
_LRU_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def known_connection(value: Any) -> bool:
    """``value`` is a connection of a driver listed above, read by its adapter in this process."""
    t = type(value)
    sqlite = _class("sqlite3", "Connection")
    if sqlite is not None and t is sqlite:
        return bool(structural.compiled(t) or _FLAGS(t) & _IMMUTABLE)
    psycopg = _class("psycopg", "Connection")
    if psycopg is not None and t is psycopg:
        return _psycopg_own(value)
    engine = _class("sqlalchemy.engine.base", "Engine")
    if engine is not None and t is engine:
        return _sqlalchemy_own(value)
    connection = _class("sqlalchemy.engine.base", "Connection")
    if connection is not None and t is connection:
        held = (structural.instance_dict(value) or {}).get("engine")
        return type(held) is engine and _sqlalchemy_own(held) and _sqlalchemy_class(t)
    return False


def queried_here(value: Any) -> bool:
    """``query_sql`` may run on ``value`` in this process: a connection above, or DuckDB's own connection
    (exactly its class, every method DuckDB's compiled code or its own files). Anything else — a subclass
    the session wrote, an engine that runs the session's code when it connects — is refused: the query runs
    here, where none of the session's code may."""
    if known_connection(value):
        return True
    duckdb = _class("_duckdb", "DuckDBPyConnection")
    root = _package_dir("duckdb")
    return duckdb is not None and type(value) is duckdb and root is not None and _library_class(duckdb, root)


def _class(module: str, name: str) -> type | None:
    found = structural.module_namespace(sys.modules.get(module)).get(name)
    return found if structural.is_subclass(type(found), type) else None


def _psycopg_own(conn: Any) -> bool:
    root = _package_dir("psycopg")
    info = _class("psycopg", "ConnectionInfo")
    state = structural.instance_dict(conn) or {}
    pgconn = state.get("pgconn")
    if root is None or info is None or pgconn is None:
        return False
    return all(_library_class(c, root) for c in (type(conn), info, type(pgconn)))


def _sqlalchemy_own(engine: Any) -> bool:
    """The engine's connections are made by SQLAlchemy and the driver alone (module docstring)."""
    state = structural.instance_dict(engine) or {}
    pool, dialect = state.get("pool"), state.get("dialect")
    if (
        pool is None
        or dialect is None
        or not all(map(_sqlalchemy_class, (type(engine), type(pool), type(dialect))))
    ):
        return False
    pool_state = structural.instance_dict(pool) or {}
    creator = pool_state.get(
        "_creator_arg"
    )  # ``create_engine``'s own takes the connection record: not wrapped
    if creator is None or pool_state.get("_invoke_creator") is not creator or not _default_creator(creator):
        return False
    dialect_state = structural.instance_dict(dialect) or {}
    if dialect_state.get("_has_events", False) is not False or (
        "dispatch" in dialect_state and _listens(dialect)
    ):
        return False
    return _installed_module(dialect_state.get("loaded_dbapi", dialect_state.get("dbapi")))


def _default_creator(creator: Any) -> bool:
    """The ``connect`` function ``create_engine`` made from the URL (SQLAlchemy's file, its name)."""
    root = _package_dir("sqlalchemy")
    if type(creator) is not types.FunctionType or root is None:
        return False
    code = creator.__code__
    name = _QUALNAME(creator)
    made_by = root + os.path.join("engine", "create.py")
    return code.co_filename == made_by and name == "create_engine.<locals>.connect"


def _listens(dialect: Any) -> bool:
    """A listener was added to the dialect (``do_connect`` runs it when a connection is made)."""
    dispatch = (structural.instance_dict(dialect) or {}).get("dispatch")
    listeners = (structural.instance_dict(dispatch) or {}).get("do_connect") if dispatch is not None else None
    if listeners is None:
        return False
    found = (structural.instance_dict(listeners) or {}).get("listeners")
    return not (type(found) is list and not found) and type(found) is not type(None)


def _sqlalchemy_class(cls: type) -> bool:
    """``cls`` and its bases are SQLAlchemy's (or Python's): their functions, properties and descriptors
    come from SQLAlchemy's files or the wrappers it generates for them."""
    root = _package_dir("sqlalchemy")
    if (
        root is None
        or not structural.module_of(cls).startswith("sqlalchemy.")
        or not structural.defined_at(cls)
    ):
        return False
    for klass in structural.mro(cls):
        if structural.compiled(klass) or _FLAGS(klass) & _IMMUTABLE or klass is object:
            continue
        module = structural.module_of(klass)
        if module in ("typing", "abc", "typing_extensions") or not module.startswith("sqlalchemy."):
            if module in ("typing", "abc", "typing_extensions"):
                continue
            return False
        for entry in dict.values(dict(structural.own_dict(klass))):
            if not _sqlalchemy_code(entry, root):
                return False
    return True


def _sqlalchemy_code(entry: Any, root: str) -> bool:
    kind = type(entry)
    if kind is property:
        return all(f is None or _sqlalchemy_code(f, root) for f in (entry.fget, entry.fset, entry.fdel))
    if kind in (classmethod, staticmethod):
        return _sqlalchemy_code(entry.__func__, root)
    if kind is types.FunctionType:
        file = entry.__code__.co_filename
        if type(file) is str and (file.startswith(root) or file.startswith("<sqlalchemy generated")):
            return True
        cells = [c.cell_contents for c in entry.__closure__ or ()]  # a @contextmanager's helper calls these
        return file == _CONTEXTLIB and all(
            type(f) is types.FunctionType and _sqlalchemy_code(f, root) for f in cells
        )
    if _code_in(entry, root) or kind is _PATTERN:
        return True
    if kind is _LRU_WRAPPER:  # functools.lru_cache over a method: the method it wraps
        wrapped = (structural.instance_dict(entry) or {}).get("__wrapped__")
        return type(wrapped) is types.FunctionType and _sqlalchemy_code(wrapped, root)
    if structural.module_of(kind).startswith("sqlalchemy.") and structural.defined_at(kind):
        inner = structural.instance_dict(entry) or {}  # a descriptor of SQLAlchemy's: the functions it holds
        slots = [structural.lookup(kind, name) for name in ("fget", "fset", "fdel", "__func__", "func")]
        held = [f for f in dict.values(dict(inner)) if type(f) is types.FunctionType]
        held += [
            getattr(entry, name)
            for name, slot in zip(("fget", "fset", "fdel", "__func__", "func"), slots, strict=True)
            if type(slot) is types.MemberDescriptorType
            and type(getattr(entry, name, None)) is types.FunctionType
        ]
        return all(_sqlalchemy_code(f, root) for f in held)
    return False


def _installed_module(module: Any) -> bool:
    """``module`` is the one ``sys.modules`` holds under its name, loaded from Python's library or an
    installed package (not from the working directory or a file the session made)."""
    import sysconfig  # with the first SQLAlchemy engine

    if type(module) is not types.ModuleType:
        return False
    namespace = structural.module_namespace(module)
    name, file = namespace.get("__name__"), namespace.get("__file__")
    if type(name) is not str or type(file) is not str or dict.get(sys.modules, name) is not module:
        return False
    paths = sysconfig.get_paths()
    places = {os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(os.path.realpath(file).startswith(place) for place in places)


def _package_dir(name: str) -> str | None:
    file = structural.module_namespace(sys.modules.get(name)).get("__file__")
    return os.path.dirname(file) + os.sep if type(file) is str else None


def _library_class(cls: type, root: str) -> bool:
    """Every class along ``cls``'s MRO is compiled and immutable, Python's own, or holds only functions and
    properties whose code is in the files under ``root``."""
    for klass in structural.mro(cls):
        if structural.compiled(klass) or _FLAGS(klass) & _IMMUTABLE:
            continue
        if structural.module_of(klass) in ("typing", "abc"):
            continue  # Generic and ABC hold no method the adapter calls
        for entry in dict.values(dict(structural.own_dict(klass))):
            if not _code_in(entry, root):
                return False
    return True


def _code_in(entry: Any, root: str) -> bool:
    if type(entry) is property:
        return all(f is None or _code_in(f, root) for f in (entry.fget, entry.fset, entry.fdel))
    if type(entry) in (classmethod, staticmethod):
        return _code_in(entry.__func__, root)
    if type(entry) is types.FunctionType:
        file = entry.__code__.co_filename
        if type(file) is str and file.startswith(root):
            return True
        cells = [c.cell_contents for c in entry.__closure__ or ()]  # a @contextmanager's helper calls these
        return file == _CONTEXTLIB and all(type(f) is types.FunctionType and _code_in(f, root) for f in cells)
    kind = type(entry)
    if structural.module_of(kind) == "nanobind" and structural.qualname_of(kind) == "nb_method":
        return True  # a compiled extension's method (DuckDB's): its code is the extension's
    return structural.is_plain(entry) or (
        structural.compiled(kind) and structural.module_of(kind) == "builtins"
    )
