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
- exactly SQLAlchemy's ``Engine`` or ``Connection`` whose URL plainly names a SQLite file or a PostgreSQL
  database (``sqlalchemy_url``): the engine itself is never used — connecting through it runs its creator,
  its listeners, its plugins — the adapter opens its own connection from the URL's fields.

The adapters open those connections only through the drivers' own entry points, checked where they are
taken (``sqlite_connect``: SQLite's C function; ``psycopg_connect``: psycopg's class with its own code), since
``sqlite3.connect`` and ``psycopg.connect`` are module attributes the session may have replaced.
"""

from __future__ import annotations

import contextlib
import os
import types
from typing import Any

from ..errors import CapabilityError
from . import structural
from .sqlalchemy_url import plain_target

__all__ = ["known_connection", "queried_here"]

_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_CONTEXTLIB = contextlib.__file__
_FLAGS = type.__dict__["__flags__"].__get__
_SELF = types.BuiltinFunctionType.__dict__["__self__"].__get__
_C_DESCRIPTORS = frozenset(
    {types.WrapperDescriptorType, types.MethodDescriptorType, types.GetSetDescriptorType,
     types.MemberDescriptorType, types.ClassMethodDescriptorType}
)  # fmt: skip


def known_connection(value: Any) -> bool:
    """``value`` is a connection of a driver listed above, read by its adapter in this process."""
    t = type(value)
    sqlite = _class("sqlite3", "Connection")
    if sqlite is not None and t is sqlite:
        return bool(structural.compiled(t) or _FLAGS(t) & _IMMUTABLE)
    psycopg = _class("psycopg", "Connection")
    if psycopg is not None and t is psycopg:
        return _psycopg_own(value)
    return plain_target(value) is not None


def queried_here(value: Any) -> bool:
    """``query_sql`` may run on ``value`` in this process: a connection above, or DuckDB's own connection
    (exactly its class, every method DuckDB's compiled code or its own files). Anything else — a subclass
    the session wrote, an engine that runs the session's code when it connects — is refused: the query runs
    here, where none of the session's code may."""
    if known_connection(value):
        return True
    duckdb = _class("_duckdb", "DuckDBPyConnection")
    return duckdb is not None and type(value) is duckdb and _duckdb_own(duckdb)


# what the DuckDB adapter calls on a connection and its cursors: each must be the extension's own method
_DUCKDB_CALLED = ("cursor", "execute", "fetchall", "fetchone", "fetchmany", "interrupt", "close")
_DUCKDB_HOOKS = ("__getattribute__", "__getattr__", "__enter__", "__exit__")


def _duckdb_own(cls: type) -> bool:
    """The methods the adapter calls on DuckDB's connection class are the extension's own: nanobind's method
    objects, whose type no class statement can make (it is immutable) — a function, whatever file its code
    claims (``compile`` sets any), or a bound method put there by the session is not; no ``__getattr__`` of
    the session's stands in front of them. The rest of the class is never called here."""
    own = structural.own_dict(cls)
    plain_lookup = (type(None), types.WrapperDescriptorType)
    if any(type(own.get(name)) not in plain_lookup for name in _DUCKDB_HOOKS[:2]):
        return False
    entries = [own.get(name) for name in (*_DUCKDB_CALLED, *_DUCKDB_HOOKS[2:])]
    described = own.get("description")
    entries.append(described.fget if type(described) is property else None)
    return all(_extension_method(entry) for entry in entries)


def _extension_method(entry: Any) -> bool:
    kind = type(entry)
    return (
        structural.module_of(kind) == "nanobind"
        and structural.qualname_of(kind) == "nb_method"
        and bool(_FLAGS(kind) & _IMMUTABLE)
    )


def _class(module: str, name: str) -> type | None:
    found = structural.module_namespace(structural.loaded_module(module)).get(name)
    return found if structural.is_subclass(type(found), type) else None


def psycopg_connect() -> Any:
    """psycopg's ``Connection.connect``, when its class along the MRO is psycopg's own code (a ``connect``
    the session patched is refused in one sentence): the one road by which a connection of ours is opened."""
    connection, root = _class("psycopg", "Connection"), _package_dir("psycopg")
    if connection is None or root is None or not _library_class(connection, root):
        raise CapabilityError(
            "psycopg's Connection class has code that is not psycopg's own here, so the assistant opens no "
            "connection through it."
        )
    return structural.lookup(connection, "connect").__get__(None, connection)


def sqlite_connect() -> Any:
    """``_sqlite3.connect``, SQLite's C entry point — checked to be that function (``sqlite3.connect`` is a
    module attribute the session may have replaced)."""
    module = structural.loaded_module("_sqlite3")
    if module is None:
        import _sqlite3 as module  # its C module: loaded with sqlite3, which a SQLite connection means
    found = structural.module_namespace(module).get("connect")
    if type(found) is not types.BuiltinFunctionType or _SELF(found) is not module:
        raise CapabilityError(
            "sqlite3's connect has been replaced here, so the assistant opens no connection."
        )
    return found


def _psycopg_own(conn: Any) -> bool:
    root = _package_dir("psycopg")
    info = _class("psycopg", "ConnectionInfo")
    state = structural.instance_dict(conn) or {}
    pgconn = state.get("pgconn")
    if root is None or info is None or pgconn is None:
        return False
    return all(_library_class(c, root) for c in (type(conn), info, type(pgconn)))


def _package_dir(name: str) -> str | None:
    file = structural.module_namespace(structural.loaded_module(name)).get("__file__")
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
            if not _code_in(entry, root, klass):
                return False
    return True


def _code_in(entry: Any, root: str, owner: type | None = None) -> bool:
    """``entry`` of ``owner``'s namespace runs only code under ``root`` or C code that checks what it is
    given: a bound method (``types.MethodType``) or a C function bound to some other object is neither — it
    may carry any function, or call back into the object it is bound to."""
    kind = type(entry)
    if kind is property:
        return all(f is None or _code_in(f, root, owner) for f in (entry.fget, entry.fset, entry.fdel))
    if kind in (classmethod, staticmethod):
        return _code_in(entry.__func__, root, owner)
    if kind is types.FunctionType:
        file = entry.__code__.co_filename
        if type(file) is str and file.startswith(root):
            return True
        cells = [c.cell_contents for c in entry.__closure__ or ()]  # a @contextmanager's helper calls these
        return file == _CONTEXTLIB and all(type(f) is types.FunctionType and _code_in(f, root) for f in cells)
    if kind is types.BuiltinFunctionType:  # ``__new__`` of a compiled class: bound to that class
        return owner is not None and _SELF(entry) is owner
    if kind in _C_DESCRIPTORS or kind is tuple:
        return True  # C code of a type, which refuses an instance of any other type; typing's metadata
    if structural.is_subclass(kind, type):  # the library's own classes it names (psycopg's error classes)
        package = os.path.basename(os.path.dirname(root.rstrip(os.sep) + os.sep))
        return structural.module_of(entry).partition(".")[0] == package and structural.defined_at(entry)
    if _extension_method(entry):
        return True  # made by the extension (no class statement makes its type)
    return structural.is_plain(entry)
