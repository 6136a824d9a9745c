"""The preview engine: proposed code run in the walled, forked child, its effects reported, the session and
the files on disk unchanged after every preview."""

from __future__ import annotations

import json
import socket
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pyaichat
from pyaichat.capabilities.sandbox import confine, preview_code
from pyaichat.capabilities.sandbox import preview as preview_mod
from pyaichat.capabilities.sandbox.forms import Form
from pyaichat.capabilities.sandbox.isolation import fork_available
from pyaichat.capabilities.sandbox.preview import Preview, preview
from pyaichat.configuration.config import Config

WALLED = fork_available() and confine.probe().complete
needs_walls = pytest.mark.skipif(not WALLED, reason="no Landlock + seccomp here: the preview is unavailable")

SETUP = """
import numpy as np
import pandas as pd

class Account:
    def __init__(self):
        self.owner = "ada"
        self.items = [1, 2]

df = pd.DataFrame({"a": range(5), "b": list("vwxyz"), "c": np.arange(5.0)})
lst = [1, 2, 3]
arr = np.arange(1_000_000.0)
d = {"x": [1], "y": {"z": 1}}
n = 3
acct = Account()
"""


class Fixture:
    def __init__(self, tmp: Path) -> None:
        self.session = pyaichat.Session()
        self.config = Config(audit=False, tool_timeout=3.0)
        assert self.session.run(SETUP).ok
        self.file = tmp / "mm.bin"
        self.file.write_bytes(bytes(range(256)) * 16)
        self.session.namespace["mm"] = np.memmap(self.file, dtype=np.uint8, mode="r+")
        self.tmp = tmp

    def state(self) -> dict[str, Any]:
        ns = self.session.namespace
        return {
            "names": sorted(ns),
            "df": ns["df"].copy(deep=True),
            "lst": list(ns["lst"]),
            "arr": ns["arr"].tobytes(),
            "d": json.dumps(ns["d"]),
            "acct": (ns["acct"].owner, list(ns["acct"].items)),
            "mm": bytes(ns["mm"]),
            "file": self.file.read_bytes(),
            "ids": {k: id(v) for k, v in ns.items()},
        }

    def preview(self, code: str) -> Preview:
        before = self.state()
        found = preview_code(self.config, self.session.namespace, code)
        after = self.state()
        assert after.pop("df").equals(before.pop("df")), "the session's frame changed"
        assert after == before, "the preview changed the session"
        json.dumps(found.to_dict())  # it crosses a kernel's wire as JSON
        return found


@pytest.fixture
def fx(tmp_path: Path) -> Fixture:
    return Fixture(tmp_path)


def _frame_line(frame: pd.DataFrame) -> str:
    """The preview's line for a frame: its data's size as pandas counts it (Arrow-backed strings, which
    pandas uses once pyarrow is installed, take other sizes than numpy's)."""
    size = int(frame.memory_usage(index=False).sum())
    return f"DataFrame {len(frame)} × 3 (a int64, b str, c float64) · {size:,} bytes"


def _effects(found: Preview) -> dict[str, tuple[str, str | None, str | None, str]]:
    return {e.name: (e.change, e.before, e.after, e.detail) for e in found.effects}


@needs_walls
def test_rebinding(fx: Fixture) -> None:
    found = fx.preview("df = df[df.a > 2]")
    assert found.status == "previewed" and found.ok and found.reason is None
    assert _effects(found) == {
        "df": (
            "rebound",
            _frame_line(fx.session.namespace["df"]),
            _frame_line(fx.session.namespace["df"].pipe(lambda d: d[d.a > 2])),
            "",
        )
    }
    assert found.in_place == []


@needs_walls
def test_creating_and_deleting(fx: Fixture) -> None:
    found = fx.preview("x = 1\ntotal = float(arr.sum())\nframe = df.copy()\ndel n")
    assert _effects(found) == {
        "x": ("created", None, "int", ""),
        "total": ("created", None, "float", ""),
        "frame": ("created", None, _frame_line(fx.session.namespace["df"]), ""),
        "n": ("deleted", "int", None, ""),
    }  # reading the 8 MB array is not a change


@needs_walls
def test_drop_inplace_is_a_change_in_place(fx: Fixture) -> None:
    found = fx.preview("df.drop(columns=['b'], inplace=True)")
    change, before, after, detail = _effects(found)["df"]
    assert (change, detail) == ("changed", "changed in place")
    assert "b str" in before and "b str" not in after and after.startswith("DataFrame 5 × 2")
    assert [e.name for e in found.in_place] == ["df"]


@needs_walls
def test_a_cell_set_in_an_arrow_backed_column_is_a_change_in_place(fx: Fixture) -> None:
    """pandas' default strings (with pyarrow) live in an Arrow array that setting a cell replaces, inside the
    same column object: the preview compares what the column's data is, not only the column."""
    found = fx.preview("df.loc[0, 'b'] = 'q'")
    assert _effects(found)["df"][0] == "changed", found.effects
    fx.session.namespace["names"] = fx.session.namespace["df"]["b"].copy()
    found = fx.preview("names.iloc[1] = 'r'")
    assert _effects(found)["names"][0] == "changed", found.effects


@needs_walls
def test_list_append_and_nested_changes(fx: Fixture) -> None:
    found = fx.preview("lst.append(4)\nd['x'].append(2)\nacct.items.append(3)")
    effects = _effects(found)
    assert effects["lst"] == ("changed", "list of 3 items", "list of 4 items", "changed in place")
    assert effects["d"][0] == "changed" and effects["acct"][0] == "changed"
    assert set(effects) == {"lst", "d", "acct"}


@needs_walls
@pytest.mark.parametrize("code", ["arr += 1", "arr[500_000] = -1", "arr[3] = -1", "arr[-1] = 0"])
def test_array_writes_are_found_without_hashing(fx: Fixture, code: str) -> None:
    """A write anywhere in the 8 MB array — a whole page, the first or last partial page — is found."""
    found = fx.preview(code)
    change, before, after, detail = _effects(found)["arr"]
    assert change == "changed" and detail.startswith("data written in place")
    assert before == after == "ndarray 1,000,000 float64 · 7.6 MB"


@needs_walls
def test_whole_array_rewrite_counts_its_pages(fx: Fixture) -> None:
    detail = _effects(fx.preview("arr *= 2"))["arr"][3]
    assert detail == "data written in place (about 7.6 MB)"


@needs_walls
def test_memmap_write_stays_private_and_says_it_would_write_the_file(fx: Fixture) -> None:
    found = fx.preview("mm[:10] = 7\nint(mm[0])")
    change, _, _, detail = _effects(found)["mm"]
    assert change == "changed"
    assert f"the memory is the file {fx.file}: running the code writes the file" in detail
    assert found.output == "7\n"  # the child saw its own write; ``fx.preview`` checks the file did not


@needs_walls
def test_printing_and_the_echoed_value(fx: Fixture) -> None:
    found = fx.preview("print('hello')\nlen(lst) + 1")
    assert found.output == "hello\n4\n" and not found.output_truncated
    assert found.effects == [] and found.duration_ms is not None and found.total_ms >= found.duration_ms


@needs_walls
def test_printed_output_is_bounded(fx: Fixture) -> None:
    fx.config = Config(audit=False, tool_timeout=3.0, max_output_chars=1000)
    found = fx.preview("for i in range(10_000):\n    print('line', i)")
    assert len(found.output) == 1000 and found.output_truncated and found.output.startswith("line 0\n")


@needs_walls
def test_an_exception_is_one_line(fx: Fixture) -> None:
    found = fx.preview("y = 1\nz = y / 0")
    assert found.status == "previewed" and not found.ok
    assert found.error == "ZeroDivisionError: division by zero (line 2)"
    assert _effects(found) == {"y": ("created", None, "int", "")}


@needs_walls
def test_a_syntax_error_runs_nothing(fx: Fixture) -> None:
    found = fx.preview("x = (")
    assert not found.ok and found.error.startswith("SyntaxError:") and found.error.endswith("(line 1)")
    assert found.effects == [] and found.duration_ms is None


@needs_walls
def test_timeout(fx: Fixture) -> None:
    fx.config = Config(audit=False, tool_timeout=0.6)
    found = fx.preview("lst.append(1)\nwhile True:\n    pass")
    assert found.status == "incomplete" and found.effects == []
    assert found.reason == (
        "The code was still running when the preview's 0.5 s ran out, so it was stopped there and what it "
        "would change is not known; running it for real has no such limit."
    )
    assert found.total_ms < 6000  # stopped: the loop never ends (room for the fork on two busy cores)
    text = "\n".join(line for _, line in found.lines())
    assert "not timed" not in text and "no variable created" not in text and "thread" not in text
    assert text.startswith(
        "Preview (stopped after 0.5 s on a walled copy of your session; nothing has changed"
    )


class _LibraryThread:
    """A thread a library started (its code is installed, not typed by the user), like litellm's logging
    workers: the preview must not blame it."""

    def __enter__(self) -> _LibraryThread:
        import queue
        import threading

        self.jobs: queue.SimpleQueue[None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self.jobs.get, name="Thread-7 (worker)", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.jobs.put(None)
        self.thread.join(5)


@needs_walls
def test_a_slow_proposal_blames_threads_only_when_the_user_started_some(fx: Fixture) -> None:
    import threading

    fx.config = Config(audit=False, tool_timeout=0.6)
    with _LibraryThread():  # litellm's logging threads, say: not the user's, so not the likely cause
        found = fx.preview("import time\ntime.sleep(8)\ny = 1")
    assert found.status == "incomplete" and "Thread-7" not in found.reason, found.reason

    release = threading.Event()

    def poll() -> None:  # code of the user's (this file is not an installed library)
        release.wait()

    worker = threading.Thread(target=poll, name="poller", daemon=True)
    worker.start()
    try:
        found = fx.preview("import time\ntime.sleep(8)\ny = 1")
    finally:
        release.set()
        worker.join(5)
    assert found.reason.endswith(
        "It may be waiting for your session's thread poller, which the walled copy does not have."
    ), found.reason


class _Shell:
    """A shell's own object in the namespace (IPython's ``exit``/``quit``, ipykernel's ``ZMQExitAutocall``):
    it holds the shell, which holds the namespace itself."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.shell = types.SimpleNamespace(user_ns=namespace, execution_count=3)


@needs_walls
def test_objects_that_hold_the_namespace_are_not_changed_by_the_names_it_gains(fx: Fixture) -> None:
    """A new name is reported once, as new: the namespace it lands in is not an object of the session that
    changed in place, whichever object reaches it (the shell's ``exit``, ``globals()`` kept in a name)."""
    ns = fx.session.namespace
    ns["exit"] = ns["quit"] = _Shell(ns)
    ns["g"] = ns
    ns["holder"] = {"namespaces": [ns]}
    found = fx.preview("total = df.c.sum()\nimport json")
    assert _effects(found) == {
        "json": ("created", None, "module json", ""),
        "total": ("created", None, "float64", ""),
    }, found.effects
    found = fx.preview("g['y'] = 2\nholder['namespaces'].append(1)")
    assert _effects(found) == {
        "holder": ("changed", "dict of 1 key", "dict of 1 key", "changed in place"),
        "y": ("created", None, "int", ""),
    }, found.effects


@needs_walls
def test_network_attempt(fx: Fixture) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.3)
    port = server.getsockname()[1]
    try:
        for code in (
            f"import socket\nsocket.create_connection(('127.0.0.1', {port})).sendall(b'x')",
            f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/')",
        ):
            found = fx.preview(code)
            assert found.status == "incomplete"
            assert found.reason == (
                f"The code needs the network (127.0.0.1:{port}), which a preview never uses; the preview "
                "stopped there."
            )
            assert found.error.endswith("(line 2)")
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


@needs_walls
@pytest.mark.parametrize("how", ["open", "pandas", "mkdir"])
def test_file_write_attempt(fx: Fixture, how: str) -> None:
    target = fx.tmp / "out.csv"
    code = {
        "open": f"open({str(target)!r}, 'w').write('x')",
        "pandas": f"df.to_csv({str(target)!r})",
        "mkdir": f"import os\nos.mkdir({str(target)!r})",
    }[how]
    found = fx.preview(code)
    assert found.status == "incomplete"
    assert found.reason == f"The code writes {target}, which a preview never does; the preview stopped there."
    assert not target.exists()


@needs_walls
def test_file_read_is_allowed(fx: Fixture) -> None:
    data = fx.tmp / "orders.csv"
    data.write_text("id,total\n1,9.5\n2,3.0\n3,1.25\n")
    found = fx.preview(f"orders = pd.read_csv({str(data)!r})\norders.total.sum()")
    assert found.status == "previewed" and found.ok, found
    assert found.output == "np.float64(13.75)\n"
    assert _effects(found) == {
        "orders": ("created", None, "DataFrame 3 × 2 (id int64, total float64) · 48 bytes", "")
    }


@needs_walls
def test_devices_and_proc_stay_closed(fx: Fixture) -> None:
    found = fx.preview("open('/dev/tty').read()")
    assert (
        found.reason == "The code opens /dev/tty, which a preview does not read; the preview stopped there."
    )
    assert "Permission denied" in fx.preview("open('/proc/1/environ').read()").error


def test_walls_down_means_unavailable_and_nothing_runs(fx: Fixture, monkeypatch) -> None:
    import pyaichat.capabilities.sandbox as sandbox

    down = confine.Walls(0, False, (), ("this kernel has no Landlock",))
    monkeypatch.setattr(sandbox, "probe_walls", lambda: down)  # what the sandbox's policy is chosen from
    monkeypatch.setattr(preview_mod, "run_forked", _must_not_run)
    found = fx.preview("lst.append(4)")
    assert found.status == "unavailable" and found.effects == [] and found.duration_ms is None
    assert found.reason == (
        "No preview: the kernel walls it needs are not up here (this kernel has no Landlock); "
        "nothing unapproved runs."
    )


def test_inprocess_mode_is_unavailable(fx: Fixture, monkeypatch) -> None:
    monkeypatch.setattr(preview_mod, "run_forked", _must_not_run)
    fx.config = Config(audit=False, sandbox_isolation="inprocess")
    found = fx.preview("lst.append(4)")
    assert found.status == "unavailable" and "sandbox_isolation = 'inprocess'" in found.reason


def test_gpu_state_is_unforkable(fx: Fixture, monkeypatch) -> None:
    if not WALLED:
        pytest.skip("the walls are checked first")
    cuda = types.SimpleNamespace(is_initialized=lambda: True)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(preview_mod, "run_forked", _must_not_run)
    found = fx.preview("lst.append(4)")
    assert found.status == "unavailable" and "GPU (CUDA)" in found.reason


def _must_not_run(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the preview ran code where it must not")


@needs_walls
def test_transform_of_front_end_syntax(fx: Fixture) -> None:
    found = preview(
        fx.session.namespace, "%time y = 2", timeout=2.0, transform=lambda s: s.replace("%time ", "")
    )
    assert _effects(found) == {"y": ("created", None, "int", "")}


@needs_walls
def test_json_round_trip(fx: Fixture) -> None:
    found = fx.preview("lst.append(1)\nprint('x')")
    again = Preview.from_dict(json.loads(json.dumps(found.to_dict())))
    assert again == found and again.in_place[0].name == "lst"


def test_form_lines() -> None:
    assert Form("list", (1,), "items").line() == "list of 1 item"
    assert Form("ndarray", (2, 3), dtypes="int64", nbytes=48).line() == "ndarray 2 × 3 int64 · 48 bytes"
    assert Form("DataFrame", (10, 2), dtypes="a int64, b str", nbytes=3 << 20).line() == (
        "DataFrame 10 × 2 (a int64, b str) · 3.0 MB"
    )


def test_pandas_internals_are_what_the_effects_read() -> None:
    """The snapshot reads pandas' block arrays; if a pandas release renamed them, writes would go unseen."""
    from pyaichat.capabilities.layout import pandas_parts

    frame = pd.DataFrame({"a": [1, 2], "b": [1.0, 2.0]})
    parts = pandas_parts(frame)
    assert any(isinstance(p, np.ndarray) and np.shares_memory(p, frame["a"].to_numpy()) for p in parts)


@needs_walls
def test_looking_runs_none_of_the_sessions_code(fx: Fixture) -> None:
    """The snapshot is taken in the session's own process: a container subclass's ``__len__``/``__iter__``
    or an object's ``__getattr__`` must not run there."""
    code = (
        "calls = []\n"
        "class Logged(list):\n"
        "    def __len__(self):\n"
        "        calls.append('len')\n"
        "        return 0\n"
        "    def __iter__(self):\n"
        "        calls.append('iter')\n"
        "        return iter(())\n"
        "class Lazy:\n"
        "    def __getattr__(self, name):\n"
        "        calls.append(name)\n"
        "        return 1\n"
        "logged = Logged([1, 2])\n"
        "lazy = Lazy()\n"
    )
    assert fx.session.run(code).ok
    found = fx.preview("logged.append(3)")
    assert fx.session.namespace["calls"] == []
    assert _effects(found)["logged"] == (
        "changed",
        "Logged of 2 items",
        "Logged of 3 items",
        "changed in place",
    )
