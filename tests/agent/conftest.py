"""Fixtures for the assistant's tests: a session, a scripted in-process model and an event recorder."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.fake_llm import FakeLLM
from pyaichat.agent.assistant import Assistant
from pyaichat.agent.loop import Approval
from pyaichat.config import Config
from pyaichat.controller import Controller
from pyaichat.session import Session


class Recorder:
    """A front end that records events and answers proposals with a fixed decision."""

    interactive = False

    def __init__(self, decision: str = "no") -> None:
        self.events: list[Any] = []
        self.decision = decision
        self.next_input: str | None = None

    def emit(self, event: Any) -> None:
        self.events.append(event)

    def decide(self, proposal: Any) -> str:
        return self.decision

    def set_next_input(self, code: str) -> None:
        self.next_input = code

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture
def config() -> Config:
    return Config(model="fake/model", audit=False)


@pytest.fixture
def session(config: Config) -> Session:
    s = Session(echo=lambda value: None)
    s.config = config
    return s


@pytest.fixture
def fake() -> FakeLLM:
    return FakeLLM()


@pytest.fixture
def assistant(config: Config, session: Session, fake: FakeLLM) -> Assistant:
    return Assistant(config, session, llm_factory=lambda cfg: fake)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def ctrl(config: Config, session: Session, fake: FakeLLM, recorder: Recorder) -> Controller:
    c = Controller(config, session, recorder)
    c._assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    return c


def never_approve(event: Any) -> Approval:
    raise AssertionError("no proposal expected")
