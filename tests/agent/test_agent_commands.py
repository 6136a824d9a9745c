"""/clear, /trace, /sent, /cost and /save through the shared command registry."""

from __future__ import annotations

import json

from pyaichat.commands import dispatch, names


def test_assistant_commands_are_registered():
    assert {"clear", "trace", "sent", "cost", "save"} <= set(names())


def test_commands_before_any_question(ctrl, recorder):
    for line in ("/trace", "/sent", "/cost"):
        dispatch(ctrl, line)
    texts = [e.text for e in recorder.of("notice")]
    assert texts == [
        "No question asked yet.",
        "Nothing has been sent to a provider yet.",
        "No questions asked yet in this session.",
    ]


def test_commands_after_a_turn(ctrl, recorder, fake, session, tmp_path):
    session.run("x = 5")
    fake.tool("get_repr", {"expr": "x"}).text("x is **5**.")
    ctrl.ask("what is x?")
    recorder.events.clear()
    dispatch(ctrl, "/trace")
    assert "→ get_repr(x)" in recorder.of("notice")[0].text
    dispatch(ctrl, "/sent")
    codes = recorder.of("code")
    assert [c.title for c in codes] == ["Request 1 of 2", "Request 2 of 2"]
    assert json.loads(codes[1].code)["messages"] == fake.requests[1]["messages"]
    dispatch(ctrl, "/cost")
    assert "200 prompt + 20 completion tokens" in recorder.of("notice")[-1].text
    target = tmp_path / "t.md"
    dispatch(ctrl, f"/save {target}")
    saved = target.read_text()
    assert "what is x?" in saved and "x is **5**." in saved and "`get_repr(x)`" in saved
    dispatch(ctrl, "/clear")
    assert ctrl.assistant.memory.turns == []
    assert recorder.of("notice")[-1].level == "success"


def test_save_reports_an_unwritable_path(ctrl, recorder, tmp_path):
    (tmp_path / "blocker").write_text("a file where a folder would go")
    dispatch(ctrl, f"/save {tmp_path}/blocker/dir/t.md")
    last = recorder.of("notice")[-1]
    assert last.level == "warning" and "Cannot create the folder" in last.text
    assert not (tmp_path / "blocker" / "dir").exists()
