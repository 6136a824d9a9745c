"""Atomic writes and the package's place in the layers."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyaichat.persist import PersistError
from pyaichat.persist.atomic import atomic_write, remove_stale, temp_name

SRC = Path(__file__).resolve().parents[2] / "src" / "pyaichat" / "persist"


def test_write_replace_and_permissions(tmp_path):
    target = tmp_path / "out.bin"
    assert atomic_write(target, lambda fh: fh.write(b"one")) == 3
    assert target.read_bytes() == b"one"
    assert (target.stat().st_mode & 0o777) == 0o600
    atomic_write(target, lambda fh: fh.write(b"two"), private=False)
    assert target.read_bytes() == b"two"
    assert (target.stat().st_mode & 0o777) == 0o666 & ~_umask()
    assert os.listdir(tmp_path) == ["out.bin"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_an_error_while_writing_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")

    def half(fh):
        fh.write(b"new and partial")
        raise ValueError("broke")

    with pytest.raises(ValueError, match="broke"):
        atomic_write(target, half)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]


def test_a_disk_error_is_one_sentence(tmp_path):
    target = tmp_path / "out.bin"

    def full(fh):
        raise OSError(28, "No space left on device")

    with pytest.raises(PersistError, match=r"Could not write .*: No space left on device; the old file"):
        atomic_write(target, full)


def test_only_temporary_files_of_dead_writers_are_removed(tmp_path):
    target = str(tmp_path / "snap")
    code = "import os; print(os.getpid())"
    dead = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dead_tmp = temp_name(target, int(dead.stdout))
    live_tmp = temp_name(target, os.getppid())  # a live process (our parent) may still be writing it
    other = tmp_path / ".snapshot-other.123.ab.tmp"  # not this target's
    for path in (dead_tmp, live_tmp, other):
        Path(path).write_bytes(b"x")
    assert remove_stale(target) == [os.path.basename(dead_tmp)]
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(live_tmp), other.name])


def test_persist_imports_nothing_above_it():
    """persist sits beside the capabilities: it may use the session, records, paths and the masker, never the
    agent, a front end, the commands or the kernel runtime."""
    above = ("agent", "repl", "ipython", "commands", "controller", "cli", "piped", "runtime")
    for path in SRC.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                assert (node.module or "").split(".")[0] not in above, (path.name, node.module)
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert not node.module.startswith(tuple(f"pyaichat.{a}" for a in above)), path.name
