"""The edges fail closed (issue 45, points 5 and 6): a file inside the project approves nothing, and a pins
file that cannot be read trusts nothing — held, kept, merged under a lock. The end-to-end cases run our fault
server for real over stdio through the controller; the file's own rules are checked on ``Pins`` and
``Reviews`` directly."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp_helpers import calls_made
from test_mcp_approval_panel import Person
from test_mcp_trust import CHANGED, notices, offered

from pyaichat.mcptools.allowances import ProjectAllowances
from pyaichat.mcptools.pins import Pins, definition, entry_key
from pyaichat.mcptools.review import Reviews
from pyaichat.proposal import Outcome


def pins_file() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "pyaichat" / "mcp-pins.json"


def user_allowances() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "pyaichat" / "mcp-allowed.json"


pytestmark = pytest.mark.e2e


# -- 45.5: approvals live only where the person made them ---------------------------------------------------
def test_an_allowances_file_shipped_in_the_repository_approves_nothing(sessions, notes, tmp_path: Path):
    (tmp_path / ".git").mkdir()  # a cloned repository
    shipped = tmp_path / ".pyaichat" / "mcp-allowed.json"
    shipped.parent.mkdir()
    planted = {"projects": {".": ["fault__write_note"], str(tmp_path): ["fault__write_note"]}}
    shipped.write_text(json.dumps(planted))
    person = Person("no")
    ctrl, fake = sessions(person, trust="ask")
    fake.tool("fault__write_note", {"text": "from the repository"}).text("Could not.")
    ctrl.ask("note it")
    assert len(person.asked) == 1, "a file the repository ships approved the call: no panel"
    assert [c for c in calls_made(notes) if c["tool"] == "write_note"] == []
    told = [line for line in notices(person).splitlines() if "Ignored" in line]
    assert len(told) == 1 and str(shipped) in told[0] and "fault__write_note" in told[0]
    assert str(user_allowances()) in told[0]

    again = Person("project")  # told once: the next session says nothing of it; the person allows it
    ctrl, fake = sessions(again, trust="ask")
    fake.tool("fault__write_note", {"text": "allowed by the person"}).text("Done.")
    ctrl.ask("note it")
    assert len(again.asked) == 1 and "Ignored" not in notices(again)
    assert json.loads(shipped.read_text()) == planted  # the project's file is not written to
    saved = json.loads(user_allowances().read_text())
    assert saved["projects"] == {os.path.realpath(tmp_path): ["fault__write_note"]}

    third = Person()  # the person's own allowance holds
    ctrl, fake = sessions(third, trust="ask")
    fake.tool("fault__write_note", {"text": "again"}).text("Done.")
    ctrl.ask("note it")
    assert third.asked == []


def test_allowances_in_a_subdirectory_of_the_project_approve_nothing_either(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "sub" / "dir"
    (inner / ".pyaichat").mkdir(parents=True)
    (inner / ".pyaichat" / "mcp-allowed.json").write_text('{"projects": {".": ["git__git_push"]}}')
    os.chdir(inner)  # (monkeypatch takes the test back to where it started)
    project = ProjectAllowances.for_project()
    assert project.names() == set()
    (sentence,) = project.shipped()
    assert "git__git_push" in sentence and str(inner) in sentence


def test_an_unreadable_allowances_file_allows_nothing_and_is_not_written_over(tmp_path: Path):
    path = user_allowances()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"projects": {"/elsewhere": ["a__b"]}\x00')
    project = ProjectAllowances.for_project(str(tmp_path))
    assert project.names() == set()
    assert project.add("fault__write_note") is False
    assert path.read_bytes() == b'{"projects": {"/elsewhere": ["a__b"]}\x00'  # kept as it was
    assert "cannot be written" in (project.problem or "")
    assert project.names() == {"fault__write_note"}  # for this session only


# -- 45.6: a pins file that cannot be read trusts nothing ---------------------------------------------------
def test_a_damaged_pins_file_holds_every_tool_of_every_server_until_the_person_accepts(sessions, notes):
    first = Person()
    ctrl, fake = sessions(first, servers=("fault", "other"))
    fake.text("Hello.")
    ctrl.ask("hi")
    good = pins_file().read_bytes()
    assert len(json.loads(good)) == 2
    damaged = b"\x00" + good  # one stray byte
    pins_file().write_bytes(damaged)
    sessions.tools_file.write_text(json.dumps(CHANGED))  # and a tool changed meanwhile

    person = Person("no", "run")
    ctrl, fake = sessions(person, servers=("fault", "other"))
    fake.tool("fault__write_note", {"text": "rug pull"}).text("Could not.")
    ctrl.ask("note it")
    (panel,) = person.asked
    assert panel.choices == "accept" and "cannot be read" in panel.explanation
    assert "fault:" in panel.explanation and "other:" in panel.explanation
    assert not {t for t in offered(fake) if t.startswith(("fault__", "other__"))}
    assert [c for c in calls_made(notes) if c["tool"] == "write_note"] == []
    refused = next(m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool")
    assert "the MCP pins file cannot be read" in refused  # the model is told why, not "changed"
    assert pins_file().read_bytes() == damaged  # kept, not written over
    assert "stay unoffered this session" in notices(person)

    ctrl.handle("/tools review fault")  # the person accepts: a new file; the damaged one is kept beside it
    assert len(person.asked) == 2
    assert "Accepted: the tools are pinned as they are now" in notices(person)
    assert len(json.loads(pins_file().read_text())) == 2
    (kept,) = pins_file().parent.glob("mcp-pins.json.damaged-*")
    assert kept.read_bytes() == damaged
    fake.text("There they are.")
    ctrl.ask("again")
    assert {"fault__write_note", "other__write_note"} <= offered(fake, -1)


def test_pins_are_written_when_the_tools_are_first_listed(sessions):
    """As the README says: at the first listing, not at the first question."""
    ctrl, _ = sessions(Person())
    servers = ctrl.assistant.servers
    servers.warm_up()
    servers.manager.wait()
    assert servers.manager.servers["fault"].state == "ready"
    pinned = json.loads(pins_file().read_text())
    (key,) = pinned
    assert key.startswith("fault#") and "write_note" in pinned[key]


# -- the file's own rules, without a server ------------------------------------------------------------------
def _tool(name: str, description: str = "", read_only: bool = False) -> mcp_types.Tool:
    notes = mcp_types.ToolAnnotations(readOnlyHint=True) if read_only else None
    return mcp_types.Tool(
        name=name, description=description, inputSchema={"type": "object"}, annotations=notes
    )


class _Launch:
    def __init__(self, name: str) -> None:
        self.name = name

    def what_runs(self) -> str:
        return f'["stdio", "python", ["server.py", "{self.name}"]]'


class _Conn:
    def __init__(self, name: str, *tools: mcp_types.Tool) -> None:
        self.launch, self.tools = _Launch(name), list(tools)


def _key(name: str) -> str:
    return entry_key(name, f'["stdio", "python", ["server.py", "{name}"]]')


def _review(path: Path) -> tuple[Reviews, list[str], list[Any]]:
    return Reviews(Pins(str(path))), [], []


def _approve(asked: list[Any], ran: bool):
    def approve(proposal: Any) -> Outcome:
        asked.append(proposal)
        return Outcome(proposal, "ran" if ran else "declined")

    return approve


def test_a_wrong_typed_pin_is_one_broken_pin_not_an_internal_error(tmp_path: Path):
    path = tmp_path / "pins.json"
    good = definition(_tool("time_now", "What time it is.", read_only=True))
    path.write_text(
        json.dumps(
            {
                _key("fault"): {
                    "echo": "not a definition",
                    "write_note": {**definition(_tool("write_note")), "annotations": ["readOnlyHint"]},
                    "time_now": good,
                },
                _key("other"): ["a", "list"],
            }
        )
    )
    reviews, told, asked = _review(path)
    fault_conn = _Conn(
        "fault", _tool("echo"), _tool("write_note"), _tool("time_now", "What time it is.", True)
    )
    other_conn = _Conn("other", _tool("echo"))
    servers = {"fault": fault_conn, "other": other_conn}
    held = {name: reviews.check(name, conn, None, told.append, str) for name, conn in servers.items()}
    assert held == {"fault": {"echo", "write_note"}, "other": {"echo"}}  # time_now's pin still counts
    assert "its pin in the pins file cannot be read" in "\n".join(told)

    accepted = Reviews(Pins(str(path)))
    approve = _approve(asked, ran=True)
    for name, conn in servers.items():
        assert accepted.check(name, conn, approve, told.append, str) == set()
    stored = json.loads(path.read_text())
    assert set(stored[_key("fault")]) == {"echo", "write_note", "time_now"} and set(
        stored[_key("other")]
    ) == {"echo"}


@pytest.mark.parametrize("content", [b"\x00{}", b"[1, 2]", b'{"a": 1', b"\xff\xfe"])
def test_a_damaged_pins_file_is_never_first_use_nor_written_over(tmp_path: Path, content: bytes):
    path = tmp_path / "pins.json"
    path.write_bytes(content)
    reviews, told, asked = _review(path)
    conn = _Conn("fault", _tool("echo"), _tool("time_now", read_only=True))
    assert reviews.check("fault", conn, None, told.append, str) == {"echo", "time_now"}
    if hasattr(reviews, "listed"):  # (older code pinned at the question only)
        reviews.listed(conn)  # the first listing pins nothing over it either
    assert path.read_bytes() == content
    assert any("cannot be read" in line and "no tool of any MCP server is offered" in line for line in told)

    refused = Reviews(Pins(str(path)))
    assert refused.check("fault", conn, _approve(asked, ran=False), told.append, str) == {"echo", "time_now"}
    assert path.read_bytes() == content and len(asked) == 1


def _pin_many(path: str, prefix: str, count: int) -> None:
    pins = Pins(path)
    for n in range(count):
        pins.pin(f"{prefix}{n}", {"echo": definition(_tool("echo", f"{prefix}{n}"))})


def test_two_sessions_pinning_at_once_keep_each_others_pins(tmp_path: Path):
    path = str(tmp_path / "pins.json")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_pin_many, args=(path, prefix, 60)) for prefix in ("a", "b", "c")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert all(worker.exitcode == 0 for worker in workers)
    assert len(json.loads(Path(path).read_text())) == 180
