"""Which of the session's variables a snapshot can hold, judged by type before anything is pickled.

Open files, connections, generators, locks, processes and memory maps cannot be pickled in any useful way (or,
for files, cloudpickle would read their whole content to pickle it); they are listed with a short reason
instead. Imported modules are saved by name and imported again on load; a module made inside the session
cannot be. Secret-named variables are left out unless asked for.
"""

from __future__ import annotations

import io
import sys
import types
from typing import Any

from ..capabilities.redact import masker_for

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


# -- what can be saved --------------------------------------------------------------------------------------
def unsaveable(value: Any) -> str | None:
    """Why ``value`` cannot go into a snapshot, judged by its type alone (nothing is read or called)."""
    if isinstance(value, types.ModuleType):
        return None if _importable(value) else "module made in this session"
    if isinstance(value, types.GeneratorType):
        return "generator"
    if isinstance(value, (types.CoroutineType, types.AsyncGeneratorType)):
        return "coroutine"
    if isinstance(value, (types.FrameType, types.TracebackType)):
        return "frame"
    if is_file(value):
        return "open file" if not getattr(value, "closed", False) else "closed file"
    cls = type(value)
    module, name = getattr(cls, "__module__", "") or "", cls.__name__
    if module in ("socket", "ssl"):
        return "network connection"
    if module == "sqlite3" or (module.split(".")[0] in _DB_MODULES and name.endswith(_DB_SUFFIXES)):
        return "database connection"
    if module == "_thread" or (module == "threading" and name in ("Thread", "Timer", "Condition", "Event")):
        return "thread or lock"
    if module == "mmap" or (module == "multiprocessing.shared_memory"):
        return "memory map"
    if module == "subprocess" and name == "Popen":
        return "process"
    return None


_DB_MODULES = frozenset({"psycopg", "psycopg2", "pymysql", "MySQLdb", "duckdb", "sqlalchemy", "pyodbc"})
_DB_SUFFIXES = ("Connection", "Cursor", "Engine", "DuckDBPyConnection")


def is_file(value: Any) -> bool:
    return isinstance(value, io.IOBase) and not isinstance(value, (io.BytesIO, io.StringIO))


def _importable(module: types.ModuleType) -> bool:
    name = getattr(module, "__name__", None)
    return (
        isinstance(name, str)
        and name != "__main__"
        and sys.modules.get(name) is module
        and getattr(module, "__spec__", None) is not None
    )


_MAX_DEPTH = 32
_MAX_ITEMS = 10_000


def secret_inside(value: Any, is_secret_name: Any) -> str | None:
    """The path (``['db']['api_key']``) of the first secret-named key holding a value inside plain
    containers (dicts, lists, tuples, sets; bounded walk, no user code run), else ``None``: pickled whole,
    the container would carry the secret to disk."""
    budget = [_MAX_ITEMS]
    seen: set[int] = set()

    def walk(node: Any, path: str, depth: int) -> str | None:
        if depth > _MAX_DEPTH or budget[0] <= 0 or id(node) in seen:
            return None
        if type(node) in (dict, list, tuple, set, frozenset):
            seen.add(id(node))
        if type(node) is dict:
            for key, item in list(node.items()):
                budget[0] -= 1
                here = f"{path}[{key!r}]"
                if isinstance(key, str) and is_secret_name(key) and item not in (None, ""):
                    return here
                found = walk(item, here, depth + 1)
                if found:
                    return found
        elif type(node) in (list, tuple, set, frozenset):
            for i, item in enumerate(list(node)):
                budget[0] -= 1
                found = walk(item, f"{path}[{i}]", depth + 1)
                if found:
                    return found
        return None

    return walk(value, "", 0)


def candidates(
    namespace: dict[str, Any], *, config: Any = None, include_secrets: bool = False
) -> tuple[dict[str, Any], dict[str, str]]:
    """The variables a snapshot would hold, and those it leaves out with the reason, in namespace order."""
    from ..capabilities.introspect import user_names  # pydantic: with the first /snapshot

    masker = masker_for(config)
    users = set(user_names(namespace))
    chosen: dict[str, Any] = {}
    left: dict[str, str] = {}
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if name not in users and not isinstance(value, types.ModuleType):
            continue  # pyaichat's own objects
        if not include_secrets and masker.is_secret_name(name):
            left[name] = "secret name; /snapshot --include-secrets saves it"
            continue
        inner = None if include_secrets else secret_inside(value, masker.is_secret_name)
        if inner is not None:
            left[name] = f"holds a secret under {name}{inner}; include secrets to save it"
            continue
        reason = unsaveable(value)
        if reason is None:
            chosen[name] = value
        else:
            left[name] = reason
    return chosen, left
