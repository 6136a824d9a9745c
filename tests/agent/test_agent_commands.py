"""/clear, /trace, /sent, /cost and /save through the shared command registry."""

from __future__ import annotations

import json

from fakes.sent import expand_sent
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
    (page,) = recorder.of("page")
    assert [s.title for s in page.sections] == ["Request 1 of 2", "Request 2 of 2"]
    shown = [json.loads(s.code) for s in page.sections]
    assert expand_sent(shown)[1]["messages"] == fake.requests[1]["messages"]
    # each part once: the second request names the first's tools and its messages, then adds its own
    assert shown[1]["tools"] == f"(the same {len(fake.requests[0]['tools'])} tools as request 1)"
    assert shown[1]["messages"][0] == f"(messages 1–{len(fake.requests[0]['messages'])}: as in request 1)"
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


def test_model_of_another_provider_drops_the_old_base_and_says_where_it_goes(ctrl, recorder):
    """A session started against a llama.cpp base: ``/model ollama/…`` kept that base (and the 404 that
    followed blamed the model name). The base and key stay with their provider; each switch says where."""
    ctrl.settings.replace(model="openai/smollm2", api_base="http://127.0.0.1:8080/v1", api_key="sk-local")
    dispatch(ctrl, "/model openai/other")  # the same provider: the same server
    assert recorder.of("notice")[-1].text == (
        "Model set to openai/other for the next question, at http://127.0.0.1:8080/v1."
    )
    assert ctrl.config.api_base == "http://127.0.0.1:8080/v1"
    dispatch(ctrl, "/model ollama/qwen2.5-coder")
    set_to, dropped = (n.text for n in recorder.of("notice")[-2:])
    assert set_to == (
        "Model set to ollama/qwen2.5-coder for the next question, at ollama's own address (localhost:11434)."
    )
    assert dropped.startswith(
        "Not used for it: the address http://127.0.0.1:8080/v1 and the api_key, set for openai/other "
        "(another provider)"
    )
    assert ctrl.config.api_base is None and ctrl.config.api_key is None
    dispatch(ctrl, "/model")
    assert (
        recorder.of("notice")[-1].text
        == "Model: ollama/qwen2.5-coder, at ollama's own address (localhost:11434)."
    )
