"""Fixtures of the adversarial suite: each test runs once per isolation mode (fork, inprocess)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sbx_helpers import ENV_CANARY, MODES, make_session

import pyaichat
from pyaichat.capabilities import CapabilityResult, call


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def session(mode: str, monkeypatch: pytest.MonkeyPatch) -> pyaichat.Session:
    monkeypatch.setenv("SANDBOX_TEST_CANARY", ENV_CANARY)
    return make_session(mode)


@pytest.fixture
def run(session: pyaichat.Session) -> Callable[[str], CapabilityResult]:
    return lambda code: call(session, "run_python", {"code": code})


@pytest.fixture
def ev(session: pyaichat.Session) -> Callable[[str], CapabilityResult]:
    return lambda expr: call(session, "eval_expr", {"expr": expr})
