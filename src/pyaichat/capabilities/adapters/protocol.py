"""The adapter protocol: what a library's adapter may tell the assistant about that library's values.

An **adapter** describes the values of one library's types (a pandas DataFrame, a Dask array, a DuckDB
connection, a figure …) from their metadata. Each operation below is optional: the base class answers
``None`` ("not a value I know"), which falls back to the generic description every other object gets. Every
adapter — ours and a third party's — is registered (``adapters.registry``) under the name of the module its
types live in (``"pandas"``, ``"_duckdb"``), so it is found by the module of a value's type and neither the
adapter nor its library is imported until such a value is described.

``lvl`` is the privacy level, at least ``SCHEMA`` (``names`` never reaches an adapter):

- ``SCHEMA``: lengths, shapes, columns, dtypes, table names — **no value of any element, cell or string**;
- ``SAMPLE`` (the default): plus a few values (head rows, edge items) — only from data already in memory;
- ``FULL``: larger bounded samples.

What an adapter must **never** do, in any operation:

- **compute, collect, count or scan**: no ``compute()``/``persist()`` (Dask), ``collect()`` (a polars
  LazyFrame), ``count()``/``show()``/``take()`` (Spark), ``count_rows()``/``head()`` of a dataset on disk,
  executing an Ibis expression, ``len()`` of a lazy or remote collection (it may run the whole job);
- **consume** anything: no iterator advanced, no file or cursor read from its position, no result fetched
  from the user's cursor;
- **change the value** or anything reachable from it (read-only: tests fingerprint the objects), nor use
  the user's own connection, transaction or cursor (open one of your own, as the database adapters do);
- **import its library** to check a type: a value can only be of that library's type if the user imported
  it, so read ``sys.modules`` (``common.isinstance_of``, ``common.module``);
- copy data between devices or out of a file (a GPU tensor to the host, a memory-mapped array whole).

What it must keep to: about **5 ms and 300 tokens** at ``SAMPLE`` (``benchmarks/summary.py``); secret-named
columns and fields masked (``common.secret``, ``common.table`` do it); callable from any thread. Whatever it
returns is then cut to size, masked and audited with every other answer. A third party's adapter is held to
this by force too: it runs in a worker thread under a deadline, and an adapter that raises, overruns or
answers the wrong type leaves the value to the generic description with one short note.

**Objects that describe themselves.** Without any adapter, an object may define ``_repr_llm_(self) -> str``:
``get_repr`` then shows that text at ``sample`` and ``full`` (never at ``names``/``schema``, and never in the
automatic session picture). It is looked up on the type (a ``__getattr__`` is never asked for it), runs under
the user-code deadline, is masked and cut like any other answer, and must be as cheap and side-effect free
as a ``__repr__``. Use it for your own classes; use an adapter to describe a library's types from outside.

**Adding an adapter from outside** (a library describing its own types, or a plugin for someone else's):

1. subclass ``Adapter`` (or ``DatabaseAdapter``) and implement the operations you can answer from metadata;
2. declare it in your distribution's metadata, under the entry-point group ``pyaichat.adapters``, named after
   the module your types live in (the top-level package, or a sub-module to narrow it)::

       [project.entry-points."pyaichat.adapters"]
       sensors = "sensors_pyaichat:SensorAdapter"     # types from sensors, sensors.core, …

   The entry point may name an ``Adapter`` subclass (instantiated without arguments) or an instance.
   It is loaded only when a value of such a type is first described. A plugin cannot replace a built-in
   adapter; one that fails to load is listed by ``/tools``.

A minimal adapter::

    from pyaichat.capabilities.adapters import SAMPLE, Adapter

    class SensorAdapter(Adapter):
        def one_line(self, value, lvl):
            return f"Sensor: {value.count:,} readings in {value.unit}"  # metadata only

        def describe(self, value, lvl):
            text = self.one_line(value, lvl)
            return text + (f"\\nlatest reading: {value.latest}" if lvl >= SAMPLE else "")

(``tests/plugin_pkg`` is a complete, installed example.)
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from ..privacy import FULL, NAMES, SAMPLE, SCHEMA

# How ``sqllineage.relation_key`` joins a relation's schema (and catalog) to its name: a character no
# name holds, so ``"weird.csv"`` stays one name and ``auth.users`` two parts.
KEY_SEP = "\x1f"


def key_parts(key: str) -> list[str]:
    """``[catalog, schema,] name`` of a relation key, lower case."""
    return key.split(KEY_SEP)


__all__ = [
    "FULL",
    "LAZY",
    "NAMES",
    "SAMPLE",
    "SCHEMA",
    "Adapter",
    "Catalog",
    "DatabaseAdapter",
    "Result",
    "Table",
]

LAZY = "lazy: not computed"  # what an adapter says where no value is in memory


class Adapter:
    """Describes the values of one library's types. Override the operations you can answer; each returns
    ``None`` for a value it does not know (a polars ``Expr`` is not a frame), and that value gets the generic
    description."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        """One line for the **session picture** (rebuilt for every question), ``list_globals`` and the facts
        a ghost-text suggestion gets, e.g. ``DataFrame 10,000,000×3: a int64, b object``.

        Type-known metadata only, and cheap: it runs for every variable before every question. Besides the
        protocol's rules, it never calls anything of unknown cost — no ``__len__``, ``__repr__`` or property
        written in Python (the user's, or a library's that computes), no network round trip (say what is
        known locally: a server database's host and user, not its tables)."""
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        """The lines ``get_type`` adds after the class and its MRO: shape, dtypes, device, partitions,
        what is known and what would need computing. An explicit request, but still metadata only."""
        return None

    def describe(self, value: Any, lvl: int) -> str | None:
        """What ``get_repr`` shows, a few lines: at ``SCHEMA`` the structure without any value, at
        ``SAMPLE`` a few rows or edge values, **only from data already in memory** — for anything lazy say
        ``lazy: not computed`` (``common.LAZY``) instead. A database adapter lists tables here, read through a
        connection of its own."""
        return None


class DatabaseAdapter(Adapter, abc.ABC):
    """An adapter for database connections, which ``query_sql`` can read: besides describing them it
    lists their tables and runs one checked, read-only statement.

    ``query_sql`` refuses anything but one read-only statement before it reaches the adapter (``sqlcheck``);
    the adapter is the second wall: it runs the statement on a **connection of its own** that the database
    itself holds read-only (``mode=ro``, a ``READ ONLY`` transaction, ``default_transaction_read_only``),
    stops it at ``timeout`` through the database's own cancel, and always rolls back. The user's connection,
    its open transaction and its cursors are never used."""

    @abc.abstractmethod
    def is_database(self, value: Any) -> bool:
        """Whether ``value`` is a connection or engine this adapter can read (a type check, nothing more: a
        cursor of the same library is not)."""

    @abc.abstractmethod
    def catalog(self, value: Any, max_tables: int, timeout: float = 2.0) -> Catalog:
        """The tables and views with their columns and types (the first ``max_tables``, and how many in all),
        read through a connection of the adapter's own."""

    def dialect(self, value: Any) -> str:
        """The SQL dialect ``sqlcheck`` reads the statement in (``"postgres"``, ``"duckdb"``, ``"sqlite"``;
        ``""`` for standard SQL with the functions common to all)."""
        return ""

    def relations(
        self, value: Any, names: set[str], timeout: float = 2.0
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        """For masking by lineage: the columns of the named tables and views (``sqllineage.relation_key``s;
        a key that finds no relation, or more than one, is left out: its columns are unknown), and the
        defining SQL of the views among them. This default reads the catalog and knows no view's definition,
        so every column of a view counts as possibly derived from a secret."""
        cat = self.catalog(value, 10_000, timeout)
        by_key: dict[str, list[Table]] = {}
        for t in cat.tables:
            parts = t.name.lower().split(".")
            by_key.setdefault(KEY_SEP.join(parts), []).append(t)
            if len(parts) > 1:  # `auth.users` is also what a bare `users` may find, if nothing else is
                by_key.setdefault(parts[-1], []).append(t)
        found = {k: ts[0] for k, ts in by_key.items() if k in names and len(ts) == 1}
        columns = {k: [c for c, _ in t.columns] for k, t in found.items()}
        return columns, {k: "" for k, t in found.items() if t.kind == "view"}

    @abc.abstractmethod
    def query(self, value: Any, sql: str, limit: int, timeout: float) -> Result:
        """Run ``sql`` (one statement, already checked read-only) and return at most ``limit`` rows, saying
        how the database held it read-only (``Result.held_by``). Raise ``CapabilityError`` with a sentence
        for the user when the database refuses it or the deadline stops it."""


# -- what a database adapter answers ---------------------------------------------------------------------
@dataclass
class Table:
    name: str
    kind: str = "table"  # or "view"
    columns: list[tuple[str, str]] = field(default_factory=list)
    rows: str = ""  # an estimate the database keeps ("~1,200 rows"), never a count


@dataclass
class Catalog:
    tables: list[Table]
    total: int  # tables and views in all, also those not listed
    where: str = ""  # "schema public" …


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    more: bool  # the row limit cut the result
    held_by: str  # how the database held it read-only, said in the answer
    masked: set[int] = field(default_factory=set)  # columns derived from a secret-named one (by lineage)
    cut: bool = False  # the size budget stopped reading (sqldb.RESULT_BYTES)
