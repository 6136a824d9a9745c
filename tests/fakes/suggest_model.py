"""A scripted suggestion model and screen for the suggestion tests: the model call is a coroutine whose
answers are queued in order (a text, an exception, or ``HOLD``: wait until cancelled or released), and the
screen records what the engine handed the front end. Tests wait on their events, never on a clock."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pyaichat.agent.llm.infill import CodeAnswer, CodeRequest

WAIT = 30.0  # seconds before a test gives up waiting for an event: a failure bound, never a pass condition


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Model:
    """Scripted answers in order: a text, an exception, or ``HOLD`` (waits until cancelled or released)."""

    HOLD = object()

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.requests: list[CodeRequest] = []
        self.asked = threading.Semaphore(0)
        self.cancelled = threading.Event()
        self.release = threading.Event()

    async def __call__(self, request: CodeRequest, timeout: float) -> CodeAnswer:
        self.requests.append(request)
        self.asked.release()
        step = self.script.pop(0) if self.script else ""
        if step is Model.HOLD:
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.005)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            step = "held answer"
        if isinstance(step, BaseException):
            raise step
        return CodeAnswer(step, prompt_tokens=30, completion_tokens=5)

    def wait_asked(self) -> None:
        assert self.asked.acquire(timeout=WAIT), "the model was never asked"


class Screen:
    """What the front end was handed (from the engine's thread)."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str, str]] = []
        self.arrived = threading.Event()

    def __call__(self, before: str, after: str, text: str) -> None:
        self.shown.append((before, after, text))
        self.arrived.set()
