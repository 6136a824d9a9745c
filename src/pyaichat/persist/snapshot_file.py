"""The snapshot file's layout: writing it signed, and reading it back verified before anything is unpickled.

Layout::

    PYAICHAT-SNAPSHOT\\n
    format=1 key=<key id>\\n
    <one pickle per saved variable>
    <header: JSON, utf-8>  <header length: 8 bytes, big-endian>  <HMAC-SHA256 of everything before it>

The checks run in an order that gives the most useful sentence: not a snapshot at all, a newer format, no
key here, another user's key, then the signature (a changed or cut file), then the header.
"""

from __future__ import annotations

import io
import json
import os
import stat
from typing import Any, BinaryIO

from . import PersistError
from .signing import MAC_BYTES, key_id, key_path, load_key, new_mac, same

MAGIC = b"PYAICHAT-SNAPSHOT\n"
FORMAT = 1
LEN_BYTES = 8


class Signed:
    """A write-through file wrapper that signs every byte on its way to disk."""

    def __init__(self, fh: BinaryIO, key: bytes) -> None:
        self.fh = fh
        self.mac = new_mac(key)
        self.size = 0

    def write(self, data: Any) -> int:
        self.mac.update(data)
        n = self.fh.write(data)
        self.size += len(data) if isinstance(data, bytes) else memoryview(data).nbytes
        return n


def open_snapshot(target: str) -> BinaryIO:
    try:
        fh = open(target, "rb")  # noqa: SIM115 - closed by the caller's with-block
    except FileNotFoundError as exc:
        raise PersistError(f"There is no snapshot at {target}.") from exc
    except IsADirectoryError as exc:
        raise PersistError(f"{target} is a folder, not a snapshot.") from exc
    except OSError as exc:
        raise PersistError(f"Cannot read {target}: {exc.strerror or exc}.") from exc
    if fh.read(len(MAGIC)) != MAGIC:
        fh.close()
        raise PersistError(f"{target} is not a pyaichat snapshot; nothing was loaded.")
    return fh


SAVED = {".ipynb": "a notebook", ".py": "a script", ".md": "a transcript"}  # what /save writes


def not_a_snapshot(path: str, *, here: bool) -> str | None:
    """Why ``/resume path`` cannot load ``path``, known before anything is brought back (one sentence, with
    what to do instead), or ``None`` when it may be a snapshot. ``here``: the session reads its files from
    this machine's directory, so a missing file is known to be missing too."""
    target = os.path.abspath(os.path.expanduser(path))
    kind = SAVED.get(os.path.splitext(target)[1].lower())
    if kind is not None:
        run = " (jupyter execute runs it; Jupyter opens it)" if kind == "a notebook" else ""
        return (
            f"Nothing was resumed: {path} is {kind} /save writes{run}, and /resume FILE loads a /snapshot "
            "file. /resume alone brings back the last session's conversation and inputs."
        )
    try:
        with open(target, "rb") as fh:
            head = fh.read(len(MAGIC))
    except FileNotFoundError:
        return f"Nothing was resumed: there is no snapshot at {target}." if here else None
    except OSError:  # a folder, or unreadable: the load says which, in its own sentence
        return None
    if head != MAGIC:
        return (
            f"Nothing was resumed: {path} is not a pyaichat snapshot (/snapshot writes those). /resume alone "
            "brings back the last session's conversation and inputs."
        )
    return None


class Source:
    """A snapshot's bytes, for verifying and then unpickling exactly what was verified.

    A regular file that only this user can write is checked in a streaming pass and unpickled from the same
    open file: the descriptor pins the file, and nobody else may change it in between; it is never held
    twice in memory. Any other file is read into memory once, and both steps use that copy.
    """

    CHUNK = 1 << 20

    def __init__(self, target: str, fh: BinaryIO) -> None:
        self.fh = fh
        info = os.fstat(fh.fileno())
        self.size = info.st_size
        self.data: bytes | None = None
        owner_only = (
            os.name != "nt"
            and stat.S_ISREG(info.st_mode)
            and info.st_uid == os.geteuid()
            and not info.st_mode & 0o022
        )
        if not owner_only:
            try:
                fh.seek(0)
                self.data = fh.read()
            except OSError as exc:
                raise PersistError(f"Cannot read {target}: {exc.strerror or exc}.") from exc
            self.size = len(self.data)

    def read(self, offset: int, count: int) -> bytes:
        if self.data is not None:
            return self.data[offset : offset + count]
        self.fh.seek(offset)
        return self.fh.read(count)

    def mac(self, key: bytes, end: int) -> bytes:
        """HMAC-SHA256 of bytes ``[0, end)``."""
        mac = new_mac(key)
        if self.data is not None:
            mac.update(memoryview(self.data)[:end])
            return mac.digest()
        buffer = bytearray(self.CHUNK)
        view = memoryview(buffer)
        self.fh.seek(0)
        left = end
        while left > 0:
            got = self.fh.readinto(view[: min(self.CHUNK, left)])  # type: ignore[attr-defined]  # an open file has it; BinaryIO does not say so
            if not got:
                break
            mac.update(view[:got])
            left -= got
        return mac.digest()

    def stream(self, offset: int) -> BinaryIO:
        stream: BinaryIO = io.BytesIO(self.data) if self.data is not None else self.fh
        stream.seek(offset)
        return stream


def verify(target: str, source: Source) -> tuple[int, dict[str, Any], int]:
    """Check format, key and signature (in that order); return (payload start, header, payload end)."""
    head = source.read(0, len(MAGIC) + 200)
    end_of_line = head.find(b"\n", len(MAGIC))
    fields = dict(
        part.split("=", 1)
        for part in head[len(MAGIC) : max(end_of_line, 0)].decode("ascii", "replace").split()
        if "=" in part
    )
    try:
        version = int(fields.get("format", ""))
    except ValueError:
        raise PersistError(
            f"{target} is damaged (its format line is unreadable); nothing was loaded."
        ) from None
    if version > FORMAT:
        raise PersistError(
            f"{target} was written by a newer pyaichat (snapshot format {version}; this version reads "
            f"format {FORMAT}); update pyaichat to load it."
        )
    if version < 1:
        raise PersistError(f"{target} is damaged (unknown snapshot format {version}); nothing was loaded.")
    key = load_key(create=False)
    if key is None:
        raise PersistError(
            f"{target} cannot be verified: this user has no snapshot key ({key_path()}), so pyaichat did not "
            "write it for you; it was not loaded."
        )
    if fields.get("key") != key_id(key):
        raise PersistError(
            f"{target} was signed by another user or on another machine; pyaichat loads only snapshots it "
            "wrote for you, so it was not loaded."
        )
    payload_start = end_of_line + 1
    size = source.size
    if size < payload_start + LEN_BYTES + MAC_BYTES:
        raise PersistError(f"{target} is damaged (it is cut short); nothing was loaded.")
    if not same(source.mac(key, size - MAC_BYTES), source.read(size - MAC_BYTES, MAC_BYTES)):
        raise PersistError(
            f"{target} is damaged or was changed after pyaichat wrote it (its signature does not match); "
            "nothing was loaded."
        )
    length_at = size - MAC_BYTES - LEN_BYTES
    length = int.from_bytes(source.read(length_at, LEN_BYTES), "big")
    header_at = length_at - length
    try:
        assert header_at >= payload_start
        header = json.loads(source.read(header_at, length).decode("utf-8"))
        names = header["names"]
        assert isinstance(names, list)
        assert all(isinstance(n, str) and n.isidentifier() for n in names)
    except Exception:  # signed by us but not readable: a bug or a crash of the writer; say it plainly
        raise PersistError(f"{target} is damaged (its header is unreadable); nothing was loaded.") from None
    return payload_start, header, header_at
