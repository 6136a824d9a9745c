"""The resume file: conversation memory and input history round-trip, masked, private and atomic; a broken
or newer file is refused with one sentence and nothing is loaded."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pyaichat import Session
from pyaichat.persist import PersistError
from pyaichat.persist.resume import FORMAT, MAX_INPUTS, default_path, load_resume, save_resume
from pyaichat.records import HistoryEntry

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"

TURN = {
    "question": "why is merged empty?",
    "messages": [
        {"role": "user", "content": "why is merged empty?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_repr", "arguments": '{"expr": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "DataFrame 0 rows"},
        {"role": "assistant", "content": "The join keys differ in type."},
    ],
    "answer": "The join keys differ in type.",
    "native": True,
}


def make_history(capsys) -> list[HistoryEntry]:
    s = Session()
    s.run("x = 41")
    s.run("print('hi'); x + 1")
    s.run("undefined_name")
    capsys.readouterr()
    return s.history


def test_round_trip(capsys):
    history = make_history(capsys)
    report = save_resume([TURN], history, snapshot="/tmp/s.snapshot")
    assert report.path == default_path() and report.turns == 1 and report.inputs == 3
    assert stat.S_IMODE(os.stat(report.path).st_mode) == 0o600
    state = load_resume()
    assert state.turns == [TURN]
    assert state.history_entries() == history
    assert state.snapshot == "/tmp/s.snapshot"
    assert state.text().endswith(": 1 question and 3 inputs.")


def test_turn_objects_with_the_agent_shape_are_accepted(capsys):
    from dataclasses import dataclass, field

    @dataclass
    class Turn:  # the agent's Turn, without importing the agent
        question: str
        messages: list = field(default_factory=list)
        answer: str = ""
        native: bool = True

    save_resume([Turn(TURN["question"], TURN["messages"], TURN["answer"], False)], [])
    assert load_resume().turns == [{**TURN, "native": False}]


def test_secrets_are_masked_on_the_way_out(capsys):
    s = Session()
    s.run(f"api_key = {SECRET!r}")
    s.run(f"print({SECRET!r})")
    capsys.readouterr()
    turn = {
        **TURN,
        "question": f"is {SECRET} valid?",
        "messages": [
            {"role": "user", "content": f"is {SECRET} valid?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "1", "function": {"name": "eval_expr", "arguments": json.dumps({"expr": SECRET})}}
                ],
            },
        ],
    }
    report = save_resume([turn], s.history)
    raw = Path(report.path).read_text()
    assert SECRET not in raw
    assert "<redacted" in raw


def test_only_the_newest_inputs_are_kept(capsys):
    entries = [HistoryEntry(n, f"x = {n}", True, "", 0.1) for n in range(1, MAX_INPUTS + 11)]
    report = save_resume([], entries)
    assert report.inputs == MAX_INPUTS
    assert load_resume().history[0]["number"] == 11


def refused(path: Path | None, match: str) -> None:
    with pytest.raises(PersistError, match=match) as info:
        load_resume(path)
    assert "\n" not in str(info.value)


def test_missing_broken_foreign_and_newer_files_are_refused(tmp_path, capsys):
    refused(None, "There is no saved session to resume")
    path = tmp_path / "s.json"
    save_resume([TURN], make_history(capsys), path=path)
    good = json.loads(path.read_text())

    path.write_text(path.read_text()[:-20])
    refused(path, "is damaged \\(it is not valid JSON\\)")
    path.write_bytes(b"\xff\xfe")
    refused(path, "not valid JSON")
    path.write_text(json.dumps([1, 2]))
    refused(path, "is not a pyaichat session file")
    path.write_text(json.dumps({**good, "format": FORMAT + 1}))
    refused(path, f"written by a newer pyaichat \\(session format {FORMAT + 1}")

    bad_turn = {**good, "turns": [{**TURN, "messages": [{"content": "no role"}]}]}
    path.write_text(json.dumps(bad_turn))
    refused(path, "question 1 is malformed")
    bad_entry = {**good, "history": [good["history"][0], {**good["history"][1], "number": "2"}]}
    path.write_text(json.dumps(bad_entry))
    refused(path, "input 2 has a bad number")
    extra = {**good, "history": [{**good["history"][0], "surprise": 1}]}
    path.write_text(json.dumps(extra))
    refused(path, "input 1 is malformed")
    path.write_text(json.dumps({**good, "turns": None}))
    refused(path, "turns or inputs are missing")


def test_a_failed_write_leaves_the_previous_file(tmp_path, capsys):
    path = tmp_path / "s.json"
    save_resume([TURN], [], path=path)
    old = path.read_bytes()

    class Unserialisable:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        save_resume([{**TURN, "messages": [{"role": "user", "content": Unserialisable()}]}], [], path=path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["s.json"]


def test_the_journal_round_trips_masked_and_a_broken_one_loads_nothing(tmp_path):
    from types import SimpleNamespace

    from pyaichat.records import ApprovedProposal, AssistantTurn

    journal = SimpleNamespace(
        turns=[
            AssistantTurn(
                "raise it", "Raised.", 1, 2, [{"name": "get_repr", "detail": "x", "size": 3, "ok": True}]
            )
        ],
        approved=[
            ApprovedProposal(f"key = '{SECRET}'", "openai/test", "2026-01-01T00:00:00", 2, "Sets the key."),
            ApprovedProposal(
                "level = 2", None, "2026-01-01T00:00:01", 3, undone="Undone.", proposed_by="agent"
            ),
        ],
    )
    path = tmp_path / "s.json"
    save_resume([TURN], [HistoryEntry(1, "x = 1", True, "", 1.0)], path=path, journal=journal)
    assert SECRET not in path.read_text()
    state = load_resume(path)
    assert state.journal_turns == journal.turns
    assert [p.input_number for p in state.approved] == [2, 3] and "<redacted" in state.approved[0].code
    assert state.approved[1].undone == "Undone." and state.approved[1].proposed_by == "agent"
    # a file without a journal (an older pyaichat's) resumes with none
    save_resume([TURN], [HistoryEntry(1, "x = 1", True, "", 1.0)], path=path)
    assert load_resume(path).approved == [] and load_resume(path).journal_turns == []
    document = json.loads(path.read_text())
    document["journal"] = {"turns": [], "approved": [{"code": 1}]}
    path.write_text(json.dumps(document))
    with pytest.raises(PersistError, match="journal record 1 of its approved is malformed"):
        load_resume(path)


def test_an_answers_receipts_resume_and_a_turn_saved_without_them_still_loads(tmp_path):
    from types import SimpleNamespace

    from pyaichat.records import AssistantTurn

    receipts = "receipts: 1 of 2 numbers found in this turn's results · 1 contradicted\nwarning: 12.5 differs"
    turn = AssistantTurn("mean?", "It is 12.5.", 1, 1, receipts=receipts)
    path = tmp_path / "s.json"
    journal = SimpleNamespace(turns=[turn], approved=[])
    save_resume([TURN], [HistoryEntry(1, "x = 1", True, "", 1.0)], path=path, journal=journal)
    assert load_resume(path).journal_turns == [turn]
    # a turn an older pyaichat saved has no receipts: it loads, with none
    document = json.loads(path.read_text())
    del document["journal"]["turns"][0]["receipts"]
    path.write_text(json.dumps(document))
    (loaded,) = load_resume(path).journal_turns
    assert loaded.receipts is None and loaded.answer == "It is 12.5."
