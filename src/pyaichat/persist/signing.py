"""The user's snapshot key and HMAC-SHA256 signatures: pyaichat loads only pickles it wrote for this user.

The key is 32 random bytes in ``state_dir()/snapshot.key``, readable by its owner only. It is created
atomically (written to a private temporary file, then hard-linked into place), so two processes starting at
once agree on one key. A key file that other users can read, or that belongs to someone else, is refused: a
key others can read lets them forge snapshots this user would load.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat

from ..paths import ensure_state_dir, state_dir
from . import PersistError

KEY_FILE = "snapshot.key"
KEY_BYTES = 32
MAC_BYTES = 32  # HMAC-SHA256


def key_path() -> str:
    return os.path.join(str(state_dir()), KEY_FILE)


def load_key(*, create: bool) -> bytes | None:
    """This user's key, made on first use when ``create``; ``None`` if there is none and not ``create``."""
    path = key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
    directory = ensure_state_dir()
    if directory is None:
        raise PersistError(f"Cannot create the state folder {state_dir()} to keep the snapshot key.")
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # atomic, and never replaces a key another process made first
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: exclusive create (a tiny window, not a wrong key)
            with contextlib.suppress(FileExistsError), open(path, "xb") as out, open(tmp, "rb") as src:
                os.chmod(path, 0o600)
                out.write(src.read())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return _read_key(path)


def _read_key(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if os.name != "nt":
            if info.st_uid != os.geteuid():
                raise PersistError(
                    f"The snapshot key {path} belongs to another user; pyaichat will not use it."
                )
            if stat.S_IMODE(info.st_mode) & 0o077:
                raise PersistError(
                    f"The snapshot key {path} can be read by other users; make it private "
                    f"(chmod 600 {path}) before saving or loading snapshots."
                )
        key = fh.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise PersistError(
            f"The snapshot key {path} is damaged; remove it (snapshots signed with it are lost)."
        )
    return key


def key_id(key: bytes) -> str:
    """A short public name for a key (not the key): tells "another user's snapshot" from "a changed file"."""
    return hashlib.sha256(b"pyaichat snapshot key id\0" + key).hexdigest()[:16]


def new_mac(key: bytes) -> hmac.HMAC:
    return hmac.new(key, digestmod=hashlib.sha256)


def same(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)
