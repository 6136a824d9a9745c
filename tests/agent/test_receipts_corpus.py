"""Receipts over a corpus of answers written from real-looking sessions (``receipts_corpus/``), each asked
through the real litellm HTTP path against the scripted OpenAI-compatible server: the model calls the tools,
the real capabilities answer on a live session, and the scripted answer is checked against what they showed.

Right answers (rounded, as percentages, in tables, in prose) get no warning and the stated number of "not
found" (the model's own arithmetic, and small numbers no word ties to a value: a 4 is not "found" because
some result showed a 4); misreported ones (a mean, a count, a percentage, a table value) get exactly the
contradictions named; a turn where no tool ran says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.agent.receipts import CONTRADICTED, NOT_FOUND
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytestmark = pytest.mark.e2e

CORPUS = Path(__file__).parent / "receipts_corpus"
SESSIONS = json.loads((CORPUS / "sessions.json").read_text())
ANSWERS = json.loads((CORPUS / "answers.json").read_text())


@pytest.fixture(scope="module")
def sessions():
    """One live session per setup, shared by the module (the capabilities only read them)."""
    made: dict[str, Session] = {}

    def get(name: str) -> Session:
        if name not in made:
            session = Session(echo=lambda value: None)
            assert session.run(SESSIONS[name]).ok
            made[name] = session
        return made[name]

    return get


def ask(srv, session: Session, case: dict) -> tuple[object, Recorder]:
    config = Config(model="openai/local", api_base=srv.base_url, audit=False, request_timeout=10)
    session.settings.replace(config)
    assistant = Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    if case["calls"]:
        srv.tools(*[(name, args) for name, args in case["calls"]])
    srv.text(case["answer"])
    rec = Recorder()
    result = assistant.ask(case["question"], Front(rec.emit, never_approve))
    assert result is not None and result.answer == case["answer"]
    assert [s.ok for s in result.steps if s.kind == "tool"] == [True] * len(case["calls"])
    return result, rec


def test_the_corpus_is_big_enough():
    right = [c for c in ANSWERS if not c["contradicted"]]
    assert len(right) >= 40 and len(ANSWERS) - len(right) >= 10


@pytest.mark.parametrize("case", ANSWERS, ids=[f"{c['session']}-{i}" for i, c in enumerate(ANSWERS)])
def test_receipts_of_each_answer(srv, sessions, case):
    result, rec = ask(srv, sessions(case["session"]), case)
    found = result.receipts
    contradicted = [r.number for r in found.receipts if r.status == CONTRADICTED]
    assert contradicted == case["contradicted"], found.lines()
    if case["not_found"] is not None:
        assert found.count(NOT_FOUND) == case["not_found"], found.lines()
    events = rec.of("receipts")
    if found.receipts:
        (event,) = events
        assert len(event.warnings) == len(case["contradicted"])
        counted = f"{found.count('supported')} of {len(found.receipts)}"
        no_tool = f"receipts: no tool ran this turn · {counted}"
        assert event.summary.startswith((f"receipts: {counted}", no_tool))
        assert ("no tool ran this turn" in event.summary) == (not case["calls"])
    else:
        assert events == []
