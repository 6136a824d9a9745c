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
  session made is code of the session's: the connection then goes to the child, which refuses it).
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Any

from . import structural

__all__ = ["known_connection"]

_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_CONTEXTLIB = contextlib.__file__
_FLAGS = type.__dict__["__flags__"].__get__


def known_connection(value: Any) -> bool:
    """``value`` is a connection of a driver listed above, read by its adapter in this process."""
    t = type(value)
    sqlite = _class("sqlite3", "Connection")
    if sqlite is not None and t is sqlite:
        return bool(structural.compiled(t) or _FLAGS(t) & _IMMUTABLE)
    psycopg = _class("psycopg", "Connection")
    if psycopg is not None and t is psycopg:
        return _psycopg_own(value)
    return False


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
    return structural.is_plain(entry) or (
        structural.compiled(kind) and structural.module_of(kind) == "builtins"
    )
