"""Fixtures for the assistant's tests: a session, a scripted in-process model and an event recorder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder
from pyaichat.agent.assistant import Assistant
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


@pytest.fixture
def config() -> Config:
    return Config(model="fake/model", audit=False)


@pytest.fixture
def session(config: Config) -> Session:
    s = Session(echo=lambda value: None)
    s.settings.replace(config)
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
    return assemble(LocalRuntime(session), recorder, llm_factory=lambda cfg: fake)
