"""Snapshots: what is saved and listed, signatures checked before anything is unpickled, all-or-nothing
loads, atomic writes (a save killed half-way leaves the previous snapshot whole)."""

from __future__ import annotations

import os
import pickle
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pyaichat import Session
from pyaichat.persist import PersistError, signing
from pyaichat.persist.snapshot import FORMAT, MAGIC, default_path, load_snapshot, save_snapshot

pytest.importorskip("cloudpickle")
np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def session_with_data(tmp_path: Path) -> Session:
    s = Session()
    s.namespace["handle"] = open(tmp_path / "data.txt", "w+")  # noqa: SIM115 - an open file in the session
    s.run(
        textwrap.dedent(
            f"""
            import numpy as np, pandas as pd
            df = pd.DataFrame({{"a": np.arange(5), "s": list("vwxyz")}})
            arr = np.linspace(0, 1, 7)
            k = 10
            def add_k(x):
                return x + k
            class Point:
                def __init__(self, x, y):
                    self.x, self.y = x, y
            p = Point(1, 2)
            pair = [p, p]
            square = lambda v: v * v
            gen = (i for i in range(3))
            api_key = "{SECRET}"
            """
        )
    )
    return s


def test_round_trip_keeps_values_identity_and_code(tmp_path, capsys):
    s = session_with_data(tmp_path)
    report = save_snapshot(s.namespace, tmp_path / "s.snapshot")
    assert report.saved == ["np", "pd", "df", "arr", "k", "add_k", "Point", "p", "pair", "square"]
    assert report.not_saved == {
        "handle": "open file",
        "gen": "generator",
        "api_key": "secret name; /snapshot --include-secrets saves it",
    }
    assert report.size == os.path.getsize(tmp_path / "s.snapshot") and report.seconds > 0
    text = report.text()
    assert text.startswith("Saved 10 variables to ")
    assert "Not saved: handle (open file), gen (generator)" in text

    ns: dict = {"__name__": "__main__"}
    loaded = load_snapshot(tmp_path / "s.snapshot", ns)
    assert loaded.bound and set(loaded.values) == set(report.saved)
    pd.testing.assert_frame_equal(ns["df"], s.namespace["df"])
    assert np.array_equal(ns["arr"], s.namespace["arr"])
    assert ns["add_k"](1) == 11 and ns["square"](4) == 16
    assert ns["pair"][0] is ns["pair"][1] is not None  # shared objects stay shared
    assert ns["pair"][0] is ns["p"] and type(ns["p"]) is ns["Point"]  # across variables too
    assert ns["np"] is np  # modules come back by name
    assert "Not saved then: handle (open file)" in loaded.text()


def test_saving_reads_the_namespace_and_changes_nothing(tmp_path, capsys):
    s = session_with_data(tmp_path)
    s.namespace["handle"].write("hello\n")
    s.namespace["handle"].seek(3)
    names_before = dict(s.namespace)
    frame_before = s.namespace["df"].copy()
    save_snapshot(s.namespace, tmp_path / "s.snapshot")
    assert s.namespace == names_before or all(s.namespace[k] is v for k, v in names_before.items())
    assert set(s.namespace) == set(names_before)
    pd.testing.assert_frame_equal(s.namespace["df"], frame_before)
    assert s.namespace["handle"].tell() == 3  # a file is never read to pickle it
    assert next(s.namespace["gen"]) == 0  # the generator was not consumed


def test_an_open_file_inside_a_value_is_listed_not_read(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * 100)
    with open(path) as fh:
        fh.seek(7)
        ns = {"holder": {"f": fh}, "ok": 1}
        report = save_snapshot(ns, tmp_path / "s.snapshot")
        assert fh.tell() == 7
    assert report.saved == ["ok"]
    assert report.not_saved == {"holder": "holds an open file"}


def test_unpicklable_values_found_while_pickling_are_listed(tmp_path):
    import threading

    ns = {"before": [1, 2], "lock_in_list": [threading.Lock()], "after": {"a": 1}}
    report = save_snapshot(ns, tmp_path / "s.snapshot")
    assert report.saved == ["before", "after"]
    assert report.not_saved["lock_in_list"].startswith("cannot be pickled: ")
    assert load_snapshot(tmp_path / "s.snapshot").values == {"before": [1, 2], "after": {"a": 1}}


def test_secrets_only_when_asked(tmp_path):
    ns = {"api_key": SECRET, "password": "hunter2hunter2", "n": 1}
    assert save_snapshot(ns, tmp_path / "a").saved == ["n"]
    assert SECRET.encode() not in (tmp_path / "a").read_bytes()
    report = save_snapshot(ns, tmp_path / "b", include_secrets=True)
    assert report.saved == ["api_key", "password", "n"] and report.not_saved == {}
    assert load_snapshot(tmp_path / "b").values["api_key"] == SECRET


def test_a_secret_inside_a_container_is_left_out_and_listed(tmp_path):
    ns = {"svc": {"url": "https://x", "api_key": SECRET}, "deep": [{"db": ({"password": "hunter2hunter2"},)}]}
    ns["fine"] = {"sort_key": "name", "password": ""}
    report = save_snapshot(ns, tmp_path / "a")
    assert report.saved == ["fine"]
    assert report.not_saved == {
        "svc": "holds a secret under svc['api_key']; include secrets to save it",
        "deep": "holds a secret under deep[0]['db'][0]['password']; include secrets to save it",
    }
    data = (tmp_path / "a").read_bytes()
    assert SECRET.encode() not in data and b"hunter2hunter2" not in data
    assert save_snapshot(ns, tmp_path / "b", include_secrets=True).saved == ["svc", "deep", "fine"]


def test_default_location_is_the_private_state_directory(tmp_path):
    report = save_snapshot({"n": 1})
    assert report.path == default_path()
    assert Path(default_path()).parent == Path(os.environ["XDG_STATE_HOME"]) / "pyaichat"
    assert stat.S_IMODE(os.stat(report.path).st_mode) == 0o600
    key = signing.key_path()
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600 and os.path.getsize(key) == 32
    assert load_snapshot().values == {"n": 1}


# -- refusals: nothing is unpickled, nothing is bound ------------------------------------------------------
class Bomb:
    """Unpickling it would create a file: the proof that a refused snapshot ran nothing."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def assert_refused(path: Path, ns: dict, match: str) -> None:
    before = dict(ns)
    with pytest.raises(PersistError, match=match) as info:
        load_snapshot(path, ns)
    assert ns == before
    assert "\n" not in str(info.value)


def test_a_foreign_pickle_is_refused_unread(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "foreign.pkl"
    path.write_bytes(pickle.dumps({"x": Bomb(str(marker))}))
    assert_refused(path, {}, "is not a pyaichat snapshot")
    assert not marker.exists()


def test_a_tampered_snapshot_is_refused_before_unpickling(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": 1, "y": "hello"}, path)
    data = bytearray(path.read_bytes())
    # swap the first variable's pickle for one that would run code, keep the rest as it was
    start = data.index(b"\n", len(MAGIC)) + 1
    evil = pickle.dumps(Bomb(str(marker)), protocol=5)
    path.write_bytes(bytes(data[:start]) + evil + bytes(data[start + 10 :]))
    assert_refused(path, {"keep": 1}, "damaged or was changed after pyaichat wrote it")
    assert not marker.exists()
    # one flipped bit in the signed body is enough
    data[-40] ^= 1
    path.write_bytes(bytes(data))
    assert_refused(path, {}, "signature does not match")


def test_an_unsigned_file_in_the_snapshot_layout_is_refused(tmp_path):
    marker = tmp_path / "ran"
    real = tmp_path / "real.snapshot"
    save_snapshot({"x": 1}, real)
    format_line = real.read_bytes().split(b"\n")[1] + b"\n"  # this user's key id, copied
    header = b'{"names": ["x"], "not_saved": {}}'
    forged = MAGIC + format_line + pickle.dumps(Bomb(str(marker)), protocol=5) + header
    forged += len(header).to_bytes(8, "big") + bytes(32)
    path = tmp_path / "forged.snapshot"
    path.write_bytes(forged)
    assert_refused(path, {}, "signature does not match")
    assert not marker.exists()


def test_a_truncated_snapshot_is_refused(tmp_path):
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": list(range(1000))}, path)
    full = path.read_bytes()
    for cut in (len(full) - 1, len(full) // 2, len(MAGIC) + 30):
        path.write_bytes(full[:cut])
        assert_refused(path, {}, "damaged")


def test_another_users_snapshot_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": 1}, path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-user-state"))
    assert_refused(path, {}, "this user has no snapshot key")
    save_snapshot({"y": 2}, tmp_path / "theirs.snapshot")  # the other user now has a key of their own
    assert_refused(path, {}, "signed by another user or on another machine")


def test_a_newer_format_is_refused_with_a_clear_sentence(tmp_path):
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": 1}, path)
    data = path.read_bytes().replace(f"format={FORMAT} ".encode(), f"format={FORMAT + 1} ".encode(), 1)
    path.write_bytes(data)
    assert_refused(path, {}, rf"written by a newer pyaichat \(snapshot format {FORMAT + 1}")


def test_missing_file_and_folder(tmp_path):
    assert_refused(tmp_path / "nope", {}, "There is no snapshot at")
    assert_refused(tmp_path, {}, "is a folder")


class FailsOnLoad:
    def __reduce__(self):
        return (_explode, ())


def _explode():
    raise RuntimeError("cannot rebuild")


def test_a_failure_half_way_through_loading_binds_nothing(tmp_path):
    path = tmp_path / "s.snapshot"
    save_snapshot({"first": [1, 2, 3], "second": FailsOnLoad(), "third": 3}, path)
    ns = {"first": "old"}
    with pytest.raises(PersistError, match=r"Could not load .*RuntimeError: cannot rebuild; nothing was"):
        load_snapshot(path, ns)
    assert ns == {"first": "old"}


def test_a_module_that_is_gone_is_named(tmp_path):
    mod_dir = tmp_path / "mods"
    mod_dir.mkdir()
    (mod_dir / "vanishing_mod.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(mod_dir))
    try:
        import vanishing_mod  # type: ignore[import-not-found]

        save_snapshot({"vm": vanishing_mod, "n": 1}, tmp_path / "s.snapshot")
    finally:
        sys.path.remove(str(mod_dir))
        sys.modules.pop("vanishing_mod", None)
    ns: dict = {}
    with pytest.raises(PersistError, match="needs the module 'vanishing_mod'"):
        load_snapshot(tmp_path / "s.snapshot", ns)
    assert ns == {}


def test_a_key_others_can_read_is_refused(tmp_path):
    save_snapshot({"x": 1}, tmp_path / "s.snapshot")
    os.chmod(signing.key_path(), 0o644)
    with pytest.raises(PersistError, match="can be read by other users"):
        load_snapshot(tmp_path / "s.snapshot")
    with pytest.raises(PersistError, match="can be read by other users"):
        save_snapshot({"x": 1}, tmp_path / "t.snapshot")


# -- atomic writes -------------------------------------------------------------------------------------------
def test_a_failed_save_leaves_the_previous_snapshot_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": "old"}, path)
    old = path.read_bytes()

    class Interrupting:
        def __reduce__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_snapshot({"x": "new", "y": Interrupting()}, path)
    assert path.read_bytes() == old
    assert sorted(os.listdir(tmp_path)) == ["s.snapshot"]


CHILD = """
import os, sys, time
sys.path[:0] = {paths!r}
from pyaichat.persist.snapshot import save_snapshot

class Stall:
    def __reduce__(self):
        open({signal!r}, "w").close()   # half-way: the variables before this one are written
        time.sleep(60)

save_snapshot({{"big": bytes(5_000_000), "stall": Stall(), "after": 1}}, {target!r})
"""


def test_a_save_killed_half_way_leaves_the_previous_snapshot_whole(tmp_path):
    path = tmp_path / "s.snapshot"
    save_snapshot({"x": "previous"}, path)
    old = path.read_bytes()
    signal_file = tmp_path / "half-way"
    script = CHILD.format(paths=sys.path, signal=str(signal_file), target=str(path))
    child = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while not signal_file.exists():
            assert child.poll() is None, "the saving process ended early"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        temps = [n for n in os.listdir(tmp_path) if n.startswith(".s.snapshot.") and n.endswith(".tmp")]
        assert len(temps) == 1 and os.path.getsize(tmp_path / temps[0]) > 0
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(10)
    assert path.read_bytes() == old
    assert load_snapshot(path).values == {"x": "previous"}
    save_snapshot({"x": "next"}, path)  # the next save removes what the killed one left
    assert sorted(os.listdir(tmp_path)) == ["half-way", "s.snapshot"]
    assert load_snapshot(path).values == {"x": "next"}


def test_a_file_others_could_write_is_verified_from_one_copy_in_memory(tmp_path):
    from pyaichat.persist.snapshot_file import Source, open_snapshot

    path = tmp_path / "s.snapshot"
    save_snapshot({"x": [1, 2, 3]}, path)
    with open_snapshot(str(path)) as fh:
        assert Source(str(path), fh).data is None  # only we can write it: streamed, never held twice
    os.chmod(path, 0o666)
    with open_snapshot(str(path)) as fh:
        assert Source(str(path), fh).data == path.read_bytes()  # verified and unpickled from this copy
    assert load_snapshot(path).values == {"x": [1, 2, 3]}
    marker = tmp_path / "ran"
    data = bytearray(path.read_bytes())
    start = data.index(b"\n", len(MAGIC)) + 1
    path.write_bytes(
        bytes(data[:start]) + pickle.dumps(Bomb(str(marker)), protocol=5) + bytes(data[start + 10 :])
    )
    assert_refused(path, {}, "signature does not match")
    assert not marker.exists()
