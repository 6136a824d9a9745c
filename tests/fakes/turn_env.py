"""A bare turn for the loop's own tests: a scripted model, a fake clock, a tool runner, and no session."""

from __future__ import annotations

from typing import Any

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.budget import Budget, Limits
from pyaichat.agent.loop import TurnEnv
from pyaichat.agent.protocol import Prompt


def timed_env(
    fake: FakeLLM, now: list[float], run_tool: Any = None, *, turn_timeout: float = 10.0
) -> tuple[TurnEnv, Recorder]:
    """A turn with a ``turn_timeout`` deadline on a fake clock that the scripted replies move (``now[0]``)."""
    rec = Recorder()
    prompt = Prompt(system="You answer.", schemas=[], context="")
    budget = Budget(fake, Limits(turn_timeout=turn_timeout), prompt, clock=lambda: now[0])
    env = TurnEnv(llm=fake, budget=budget, emit=rec.emit, run_tool=run_tool, decide=never_approve)
    return env, rec
