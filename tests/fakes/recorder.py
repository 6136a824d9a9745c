"""A front end for tests: records every event and answers proposals with a fixed decision."""

from __future__ import annotations

from typing import Any

from pyaichat.proposal import Outcome


class Recorder:
    """A front end that records events and answers proposals with a fixed decision."""

    interactive = False
    remembers = False

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


def never_approve(proposal: Any) -> Outcome:
    raise AssertionError("no proposal expected")
