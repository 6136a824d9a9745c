"""One adapter per data library, found by the module of the value's type — never by importing the library.

``adapter_for(value)`` walks the type's MRO and takes the first class whose top-level module (``pandas``
for ``pandas.core.frame``, ``duckdb`` for ``_duckdb``) has an adapter here, then imports that adapter module
(which itself imports no data library: a value can only be a polars frame if the user already imported
polars, so adapters read ``sys.modules``). The answer is cached per type.

An adapter module offers any of these functions; each returns ``None`` for a value it does not know (a polars
``Expr`` is not a frame), which falls back to the generic summary. ``lvl`` is at least ``SCHEMA``: the
``names`` level never reaches an adapter.

- ``one_line(value, lvl) -> str | None`` — the session picture and ``list_globals``: type-known metadata only,
  never computed, collected, counted or sent over a network;
- ``details(value, lvl) -> list[str] | None`` — extra lines of ``get_type`` (shape, dtypes, device …);
- ``describe(value, lvl) -> str | None`` — ``get_repr``: at ``schema`` no value of any cell, at ``sample`` a
  few rows or edge values only from data already in memory, else ``lazy: not computed``.

Each stays within about 5 ms and 300 tokens at ``sample`` (``benchmarks/summary.py``).
"""

from __future__ import annotations

import importlib
import weakref
from types import ModuleType
from typing import Any

# top-level module of a type → adapter module here
ADAPTERS = {
    "pandas": "pandas",
    "numpy": "numpy",
    "polars": "polars",
    "pyarrow": "pyarrow",
    "xarray": "xarray",
    "dask": "dask",
    "pyspark": "pyspark",
    "torch": "torch",
    "jax": "jax",
    "jaxlib": "jax",
    "scipy": "scipy",
    "ibis": "ibis",
    "sqlite3": "sqlite",
    "_sqlite3": "sqlite",
    "duckdb": "duckdb",
    "_duckdb": "duckdb",
    "sqlalchemy": "sqlalchemy",
    "psycopg": "psycopg",
    "matplotlib": "matplotlib",
}

_MODULE_OF = type.__dict__["__module__"].__get__
_by_type: weakref.WeakKeyDictionary[type, ModuleType | None] = weakref.WeakKeyDictionary()
_modules: dict[str, ModuleType] = {}


def adapter_for(value: Any) -> ModuleType | None:
    """The adapter module for ``value``'s type, or ``None`` (a dict lookup once the type was seen)."""
    cls = type(value)
    try:
        return _by_type[cls]
    except KeyError:
        pass
    except TypeError:  # a type that refuses weak references
        return _find(cls)
    found = _find(cls)
    try:
        _by_type[cls] = found
    except TypeError:
        pass
    return found


def _find(cls: type) -> ModuleType | None:
    try:
        mro = cls.__mro__
    except Exception:
        return None
    for klass in mro:
        try:  # type's own descriptor: a metaclass cannot run code here
            module = _MODULE_OF(klass, type)
        except Exception:
            continue
        name = ADAPTERS.get(module.split(".")[0]) if isinstance(module, str) else None
        if name is not None:
            return load(name)
    return None


def load(name: str) -> ModuleType:
    module = _modules.get(name)
    if module is None:
        module = _modules[name] = importlib.import_module(f"{__name__}.{name}")
    return module


def one_line(value: Any, lvl: int) -> str | None:
    return _ask(value, "one_line", lvl)


def details(value: Any, lvl: int) -> list[str] | None:
    return _ask(value, "details", lvl)


def describe(value: Any, lvl: int) -> str | None:
    return _ask(value, "describe", lvl)


def _ask(value: Any, what: str, lvl: int) -> Any:
    adapter = adapter_for(value)
    func = getattr(adapter, what, None) if adapter is not None else None
    return func(value, lvl) if func is not None else None
