"""Snapshots of the session's variables: what can be pickled, signed for this user, loaded all or nothing.

The file's layout and its checks are in ``snapshot_file``. Why these choices (``benchmarks/snapshot.py``):

- cloudpickle, protocol 5, one Pickler for all variables (shared objects stay shared, across variables
  too): it pickles what the user defined in the session (functions, lambdas, classes) by value and imported
  modules by name. dill failed outright on such a namespace (``RecursionError``).
- DataFrames are pickled too. For a 1-million-row frame with pandas' default strings, pickle protocol 5
  dumped and loaded faster than Feather (and 4x faster than Parquet) at the size of uncompressed Feather.
  Feather wins only for columns of Python-object strings, and there it does not give the same frame back
  (``object`` comes back as the ``str`` dtype, ``None`` as ``NaN``; mixed columns fail), so it is not used.
- The signature is checked before a single byte is unpickled: unpickling runs code.
- Values that cannot be pickled are listed with a reason instead of failing the snapshot: open files,
  connections, generators, locks… (screened by type first, so a file is never read to pickle it). A value
  that fails while pickling is dropped and the save starts over without it.
"""

from __future__ import annotations

import json
import os
import pickle
import platform
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from ..extras import install_command
from ..paths import state_dir
from ..version import __version__
from . import PersistError
from .atomic import atomic_write
from .saveable import candidates, is_file
from .signing import key_id, load_key
from .snapshot_file import FORMAT, LEN_BYTES, MAGIC, Signed, Source, open_snapshot, verify

DEFAULT_NAME = "last.snapshot"


def default_path() -> str:
    """Where ``/snapshot`` without a file name writes: the state directory."""
    return os.path.join(str(state_dir()), DEFAULT_NAME)


# -- reports ------------------------------------------------------------------------------------------------
@dataclass
class SnapshotReport:
    """What a save did: the names written, those left out (name → reason), the file's size and the time."""

    path: str
    saved: list[str]
    not_saved: dict[str, str]
    size: int
    seconds: float

    def text(self) -> str:
        head = (
            f"Saved {_count(self.saved, 'variable')} to {self.path} "
            f"({human_size(self.size)}, {self.seconds:.2f} s)."
        )
        return head + not_saved_line(self.not_saved)


@dataclass
class LoadedSnapshot:
    """A verified, fully unpickled snapshot; ``values`` are bound into a namespace only if one was given."""

    path: str
    values: dict[str, Any]
    not_saved: dict[str, str]
    created: str
    python: str
    size: int
    seconds: float
    bound: bool = False
    header: dict[str, Any] = field(default_factory=dict, repr=False)

    def text(self) -> str:
        head = (
            f"Loaded {_count(list(self.values), 'variable')} from {self.path} (saved {self.created}; "
            f"{human_size(self.size)}, {self.seconds:.2f} s)."
        )
        return head + not_saved_line(self.not_saved, when="then")


def not_saved_line(not_saved: dict[str, str], when: str = "") -> str:
    """`` Not saved: f (open file), g (generator).`` — one line, or nothing when everything was saved."""
    if not not_saved:
        return ""
    items = [f"{name} ({reason})" for name, reason in not_saved.items()]
    shown = items[:12] + ([f"and {len(items) - 12} more"] if len(items) > 12 else [])
    return f" Not saved{' ' + when if when else ''}: " + ", ".join(shown) + "."


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"  # pragma: no cover


def _count(names: list[str], word: str) -> str:
    return f"{len(names)} {word}{'' if len(names) == 1 else 's'}"


# -- writing ------------------------------------------------------------------------------------------------
class _Unpicklable(Exception):
    """A variable failed to pickle; the save starts over without it."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name)
        self.name, self.reason = name, reason


_PICKLER: type | None = None


def _pickler_class() -> type:
    """cloudpickle's Pickler, refusing open files anywhere inside a value (cloudpickle would read them)."""
    global _PICKLER
    if _PICKLER is None:
        try:
            import cloudpickle  # optional dependency: pyaichat[persist]
        except ImportError as exc:
            raise PersistError(
                f"Snapshots need the cloudpickle package: {install_command('persist')}."
            ) from exc

        class SnapshotPickler(cloudpickle.Pickler):
            def reducer_override(self, obj: Any) -> Any:
                if is_file(obj):
                    raise pickle.PicklingError("holds an open file")
                return super().reducer_override(obj)

        _PICKLER = SnapshotPickler
    return _PICKLER


def _reason_from(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if text.startswith("holds an open file"):
        return "holds an open file"
    return "cannot be pickled: " + (text if len(text) <= 70 else text[:69] + "…")


def save_snapshot(
    namespace: dict[str, Any],
    path: str | os.PathLike[str] | None = None,
    *,
    config: Any = None,
    include_secrets: bool = False,
) -> SnapshotReport:
    """Save what can be pickled of ``namespace`` to ``path`` (default: the state directory), atomically.

    Reads the namespace, changes nothing in it. Raises ``PersistError`` (one sentence) when the file cannot be
    written; the previous snapshot at ``path`` is then intact.
    """
    started = time.perf_counter()
    target = os.path.abspath(os.path.expanduser(os.fspath(path))) if path is not None else default_path()
    key = load_key(create=True)
    assert key is not None
    chosen, left = candidates(namespace, config=config, include_secrets=include_secrets)
    pickler_class = _pickler_class()
    saved: list[str] = []

    def write(fh: BinaryIO) -> None:
        while True:
            fh.seek(0)
            fh.truncate()
            signed = Signed(fh, key)
            signed.write(MAGIC)
            signed.write(f"format={FORMAT} key={key_id(key)}\n".encode())
            start = signed.size
            pickler = pickler_class(signed, protocol=5)
            saved.clear()
            try:
                for name, value in chosen.items():
                    try:
                        pickler.dump(value)
                    except (RecursionError, MemoryError) as exc:
                        raise _Unpicklable(name, f"cannot be pickled: {type(exc).__name__}") from exc
                    except Exception as exc:
                        raise _Unpicklable(name, _reason_from(exc)) from exc
                    saved.append(name)
            except _Unpicklable as bad:
                left[bad.name] = bad.reason
                del chosen[bad.name]
                continue  # start over without it: a half-written pickle cannot be cut out of the stream
            header = json.dumps(
                {
                    "names": saved,
                    "not_saved": left,
                    "created": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                    "pyaichat": __version__,
                    "python": platform.python_version(),
                    "payload_bytes": signed.size - start,
                },
                ensure_ascii=False,
            ).encode("utf-8")
            signed.write(header)
            signed.write(len(header).to_bytes(LEN_BYTES, "big"))
            fh.write(signed.mac.digest())
            return

    size = atomic_write(target, write, private=True)
    return SnapshotReport(target, list(saved), dict(left), size, time.perf_counter() - started)


# -- reading ------------------------------------------------------------------------------------------------
def load_snapshot(
    path: str | os.PathLike[str] | None = None, namespace: dict[str, Any] | None = None
) -> LoadedSnapshot:
    """Verify and unpickle the snapshot at ``path``; bind its variables into ``namespace`` if one is given.

    All or nothing: any refusal or failure raises ``PersistError`` with one sentence, and nothing has been
    bound. Nothing is unpickled before the signature matched this user's key.
    """
    started = time.perf_counter()
    target = os.path.abspath(os.path.expanduser(os.fspath(path))) if path is not None else default_path()
    with open_snapshot(target) as fh:
        source = Source(target, fh)
        payload_start, header, payload_end = verify(target, source)
        values: dict[str, Any] = {}
        stream = source.stream(payload_start)
        unpickler = pickle.Unpickler(stream)
        try:
            for name in header["names"]:
                values[name] = unpickler.load()
        except Exception as exc:
            raise PersistError(_load_failure(target, exc, header)) from exc
        if stream.tell() != payload_end:
            raise PersistError(
                f"{target} is damaged (its variables do not end where its header says); nothing was loaded."
            )
    loaded = LoadedSnapshot(
        path=target,
        values=values,
        not_saved=dict(header.get("not_saved") or {}),
        created=str(header.get("created", "?")),
        python=str(header.get("python", "?")),
        size=source.size,
        seconds=0.0,
        header=header,
    )
    if namespace is not None:
        namespace.update(values)
        loaded.bound = True
    loaded.seconds = time.perf_counter() - started
    return loaded


def _load_failure(target: str, exc: BaseException, header: dict[str, Any]) -> str:
    reason = f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        reason = f"it needs the module {exc.name!r}, which cannot be imported here"
    then = str(header.get("python", ""))
    now = platform.python_version()
    versions = ""
    if then and then.rsplit(".", 1)[0] != now.rsplit(".", 1)[0]:
        versions = f" (it was saved with Python {then}; this is Python {now})"
    return f"Could not load {target}: {reason}{versions}; nothing was loaded."
