"""Adapters: one per data library, describing its values to the assistant from metadata, found by the module
of the value's type — never by importing the library.

- ``protocol``: the declared protocol (``Adapter``, ``DatabaseAdapter``), what each operation must never do,
  the object's own ``_repr_llm_()``, and how a library adds an adapter from outside;
- ``registry``: ``ADAPTERS`` and ``PLUGIN_ADAPTERS`` (the project's one ``Registry`` mechanism), ``declare``,
  ``adapter_for``;
- ``builtin``: which module each built-in adapter describes; ``plugins``: the entry-point group
  ``pyaichat.adapters``;
- ``ask``: how the summaries ask a value's adapter (a third party's bounded, ``Degraded`` when it fails);
- one module per library (``pandas``, ``polars``, ``dask``, ``sqlite`` …), with ``common`` and ``sqldb``
  (helpers every adapter may use: bounded columns, tables, masking of secret-named columns).

No data library is imported here or by any adapter: a value can only be a polars frame if the user already
imported polars, so adapters read ``sys.modules``.
"""

from __future__ import annotations

from .ask import Degraded, database_for, describe, details, one_line
from .lookup import ADAPTERS, adapter_for, declare, load_imported
from .protocol import FULL, LAZY, SAMPLE, SCHEMA, Adapter, DatabaseAdapter

__all__ = [
    "ADAPTERS",
    "FULL",
    "LAZY",
    "SAMPLE",
    "SCHEMA",
    "Adapter",
    "DatabaseAdapter",
    "Degraded",
    "adapter_for",
    "database_for",
    "declare",
    "describe",
    "details",
    "load_imported",
    "one_line",
]
