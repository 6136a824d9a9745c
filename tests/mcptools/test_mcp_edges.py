"""The red team's MCP edges (redteam-edges.md 1, 2, 4, 6): what runs under a server's pins is the person's
entry, not the directory the session started in; files read for pins and allowances are regular files, read
bounded, with a bounded wait for their lock; rules match names however they are spelt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest

from pyaichat.configuration.mcp_server_spec import ServerSpec
from pyaichat.configuration.mcp_tool_rules import matching
from pyaichat.configuration.secret import Secret
from pyaichat.mcptools.allowances import Allowances
from pyaichat.mcptools.launch import launch
from pyaichat.mcptools.pins import Pins, definition
from pyaichat.mcptools.review import Reviews, server_key
from pyaichat.persist import PersistError, shared_json
from pyaichat.proposal import Outcome


def _tool(name: str) -> mcp_types.Tool:
    notes = mcp_types.ToolAnnotations(readOnlyHint=True)
    return mcp_types.Tool(name=name, description="Looks.", inputSchema={"type": "object"}, annotations=notes)


class _Conn:
    def __init__(self, launch: ServerSpec, *tools: mcp_types.Tool) -> None:
        self.launch, self.tools = launch, list(tools)


def _ready(spec: ServerSpec, cwd: str, home: str) -> ServerSpec:
    return launch(
        spec, start_timeout=1, call_timeout=1, environ={"HOME": home, "PATH": "/usr/bin:/bin"}, cwd=cwd
    )


# -- 1: a cloned repository does not run under the configured server's pins --------------------------------
def test_a_stdio_server_without_cwd_starts_in_home_not_in_the_sessions_directory(tmp_path: Path) -> None:
    spec = ServerSpec("notes", command="python", args=("-m", "notes_mcp"), trust="read-only")
    ready = _ready(spec, cwd=str(tmp_path / "clone"), home=str(tmp_path / "home"))
    assert ready.cwd == str(tmp_path / "home")
    own = _ready(ServerSpec("notes", command="python", cwd="sub"), cwd=str(tmp_path), home="/h")
    assert own.cwd == str(tmp_path / "sub")  # the person's own relative cwd: absolute, so it is in the key


def test_what_runs_is_in_the_pins_key_and_arguments_cannot_run_together(tmp_path: Path) -> None:
    def key(**fields: Any) -> str:
        spec = ServerSpec("s", **{"command": "python", **fields})
        return server_key(_Conn(_ready(spec, cwd=str(tmp_path), home="/h")))

    base = key(args=("a", "b"))
    assert base != key(args=("a b",))  # one argument with a space is not two
    assert base != key(args=("a", "b"), cwd="elsewhere")
    assert base != key(args=("a", "b"), env=(("PYTHONPATH", Secret("/tmp/x")),))
    assert key(url="http://h/mcp", headers=(("X-A", Secret("1")),)) != key(url="http://h/mcp")
    assert base == key(args=("a", "b"))


def test_a_server_whose_entry_changed_waits_for_review_and_an_old_key_is_never_trusted(tmp_path: Path):
    path = tmp_path / "pins.json"
    tool = _tool("look")
    old_key = "notes#0123456789ab"  # written by an older pyaichat: name + hash of "command args"
    path.write_text(json.dumps({old_key: {"look": definition(tool)}}))
    spec = ServerSpec("notes", command="python", args=("-m", "notes_mcp"), cwd="clone", trust="read-only")
    conn = _Conn(_ready(spec, cwd=str(tmp_path), home="/h"), tool)
    reviews, told, asked = Reviews(Pins(str(path))), [], []

    def refuse(proposal: Any) -> Outcome:
        asked.append(proposal)
        return Outcome(proposal, "declined")

    reviews.listed(conn)  # not pinned as a first use
    assert server_key(conn) not in json.loads(path.read_text())
    held = reviews.check("notes", conn, refuse, told.append, str)
    assert held == {"look"} and len(asked) == 1
    assert "what runs under this name changed" in asked[0].explanation

    def accept(proposal: Any) -> Outcome:
        return Outcome(proposal, "ran")

    assert reviews.check("notes", conn, accept, told.append, str, again=True) == set()
    assert Pins(str(path)).known(server_key(conn)) == {"look": definition(tool)}
    fresh = _Conn(_ready(ServerSpec("other", command="python"), cwd=str(tmp_path), home="/h"), tool)
    assert Reviews(Pins(str(path))).check("other", fresh, refuse, told.append, str) == set()  # first use


# -- 2, 6: files that are not regular files, too deep, too big; a lock held forever --------------------------
def _within(seconds: float, fn: Any) -> Any:
    """``fn()``, or a failure when it does not come back within ``seconds`` (a read that blocks forever)."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append((True, fn()))
        except BaseException as exc:
            out.append((False, exc))

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert out, "the call did not come back"
    ok, value = out[0]
    if not ok:
        raise value
    return value


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "deep", "big"])
def test_a_pins_file_that_is_not_a_small_regular_json_file_is_damaged_at_once(tmp_path: Path, kind: str):
    path = tmp_path / "mcp-pins.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "deep":
        path.write_text('{"k":' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        path.write_text('{"k": "' + "x" * (shared_json.MAX_BYTES + 1) + '"}')
    pins = Pins(str(path))
    damaged = _within(5, lambda: pins.damaged)
    assert damaged is not None and "cannot be read" in damaged


def test_a_lock_held_by_another_process_is_waited_for_a_bounded_time(tmp_path: Path, monkeypatch):
    path = tmp_path / "mcp-pins.json"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(path) + ".lock",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(shared_json, "LOCK_WAIT", 0.5)
        with pytest.raises(PersistError, match="held by another process"):
            _within(5, lambda: shared_json.locked(str(path), 0.5).__enter__())
        pins = Pins(str(path))
        start = time.monotonic()
        assert _within(10, lambda: pins.pin("k", {"t": {"name": "t"}})) is False
        assert time.monotonic() - start < 9 and "held by another process" in (pins.problem or "")
        (tmp_path / "dir").mkdir()
        (tmp_path / "dir" / "p.json.lock").mkdir()
        with pytest.raises(PersistError, match="cannot be opened"):
            shared_json.update(str(tmp_path / "dir" / "p.json"), lambda d: None)
    finally:
        holder.kill()
        holder.wait()


def test_an_allowances_file_in_the_repository_linked_to_a_device_is_not_opened(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".pyaichat").mkdir()
    os.mkfifo(tmp_path / "fifo")  # no writer: an open that blocks would never return
    (tmp_path / ".pyaichat" / "mcp-allowed.json").symlink_to(tmp_path / "fifo")
    monkeypatch.chdir(tmp_path)
    allowed = Allowances()
    assert _within(5, lambda: allowed.where("evil", "look")) is None
    news = allowed.news()
    assert len(news) == 1 and "Ignored" in news[0]


# -- 4: rules match however the name is spelt ------------------------------------------------------------
@pytest.mark.parametrize(
    "tool",
    [
        "delete_all",
        "Delete_all",
        "DELETE",
        "d\u0435lete",
        "\uff24\uff25\uff2c\uff25\uff34\uff25",
        "de\u200blete",
    ],
)
def test_a_deny_rule_denies_the_tool_however_its_name_is_spelt(tool: str) -> None:
    rules = (("*__delete*", "deny"), ("fs__*", "allow"))
    assert matching(rules, "fs", tool) == ("*__delete*", "deny")
    assert matching((("FS", "ask"),), "\uff46s", "look") == ("FS", "ask")
    assert matching(rules, "fs", "list") == ("fs__*", "allow")
