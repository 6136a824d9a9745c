"""The input history file: private to the user (``0600``), with secrets masked on disk.

The file outlives the session (and is backed up, synced, shared with a screen), so a line such as
``api_key = "sk-live-…"`` is written as the masker writes it for the resume file beside it. Up-arrow in the
same session still recalls the real text: prompt_toolkit keeps what was typed in memory; only ``store_string``
(the file) sees the masked line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from ..paths import state_file

__all__ = ["PrivateFileHistory", "make_history"]


class PrivateFileHistory(FileHistory):
    """A ``FileHistory`` whose file only its owner can read and whose stored lines are masked. It degrades to
    memory-only when the file cannot be read or written."""

    def __init__(self, filename: str, mask: Callable[[str], str]) -> None:
        super().__init__(filename)
        self._mask = mask

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except OSError:
            return []

    def store_string(self, string: str) -> None:
        try:
            line = self._mask(string)
        except Exception:  # a line that cannot be masked is not written: the file must never hold a secret
            return
        try:
            super().store_string(line)
        except OSError:
            pass


def make_private(path: str) -> bool:
    """Create ``path`` as ``0600``, or take group and other permissions off an existing one (a history an
    older pyaichat created ``0644``). ``False`` when the file cannot be made private (not ours)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        mode = os.fstat(fd).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            os.fchmod(fd, stat.S_IMODE(mode) & ~(stat.S_IRWXG | stat.S_IRWXO))
        return not os.fstat(fd).st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    except OSError:
        return False
    finally:
        os.close(fd)


def make_history(mask: Callable[[str], str]) -> History:
    """History persisted in ``state_dir()/history`` (private, masked); in memory when the state directory
    cannot be created or the file cannot be made private."""
    path = state_file("history")
    if path is None or not make_private(path):
        return InMemoryHistory()
    return PrivateFileHistory(path, mask)
