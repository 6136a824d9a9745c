"""Database connections are read by their adapters in the person's process only when they are the driver's
own (issue 44, point 8): a forked child must never use a connection, and a subclass or a patch of the
session's is code of the session's."""

from __future__ import annotations

import sqlite3

import pytest

from pyaichat.capabilities.database_here import _library_class, _package_dir, known_connection


def test_sqlite3s_own_connection_is_read_here_and_a_subclass_is_not(tmp_path) -> None:
    class Mine(sqlite3.Connection):
        def __repr__(self) -> str:
            raise AssertionError("ran")

    own = sqlite3.connect(tmp_path / "a.db")
    mine = sqlite3.connect(tmp_path / "b.db", factory=Mine)
    try:
        assert known_connection(own) and not known_connection(mine)
    finally:
        own.close()
        mine.close()


def test_a_patched_psycopg_class_is_not_the_drivers_own(monkeypatch) -> None:
    psycopg = pytest.importorskip("psycopg")
    root = _package_dir("psycopg")
    assert root and _library_class(psycopg.Connection, root)
    monkeypatch.setattr(psycopg.ConnectionInfo, "host", property(lambda self: "patched"))
    assert not _library_class(psycopg.ConnectionInfo, root)
