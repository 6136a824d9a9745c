"""The session's assistant as the entry points hand it to the controller: made on first use.

Making an ``agent.assistant.Assistant`` imports the agent, the capabilities and pydantic (~100 ms), which the
first prompt must not wait for. ``DeferredAssistant`` stands in for it from the start: the controller and the
slash commands use it like the real one (``controller.AssistantPort``), and the real one is made the first
time something needs it (entering Assistant mode warms it up). Until then it answers what it can without
it: nothing to remember for ``--resume``, and notes for the model are kept for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from .agent.assistant import Assistant
    from .agent.events import ApprovalRequiredEvent, Event
    from .agent.loop import Approval
    from .agent.trace import TurnResult
    from .config import Config
    from .mcptools.approval import Approve, Ask
    from .mcptools.tools import ServerTools
    from .runtime import Runtime


class DeferredAssistant:
    """An ``Assistant(config, runtime)`` made on first use."""

    def __init__(self, config: Config, runtime: Runtime) -> None:
        self._config = config
        self._runtime = runtime
        self._made: Assistant | None = None
        self._notes: list[str] = []  # told before the assistant was made

    @property
    def made(self) -> Assistant:
        """The real assistant (made now if it was not yet)."""
        if self._made is None:
            from .agent.assistant import Assistant  # the agent: with its first use, not at start-up

            self._made = Assistant(self._config, self._runtime)
            for note in self._notes:
                self._made.tell(note)
            self._notes.clear()
        return self._made

    @property
    def config(self) -> Config:
        return self._config

    @config.setter
    def config(self, config: Config) -> None:
        self._config = config
        if self._made is not None:
            self._made.config = config

    # -- what the controller and the commands use (``controller.AssistantPort``) ----------------------------
    def ask(
        self,
        question: str,
        emit: Callable[[Event], None],
        approve: Callable[[ApprovalRequiredEvent], Approval],
        *,
        config: Config | None = None,
        approve_tool: Approve | None = None,
        ask_person: Ask | None = None,
    ) -> TurnResult | None:
        return self.made.ask(
            question, emit, approve, config=config, approve_tool=approve_tool, ask_person=ask_person
        )

    def warm_up(self) -> None:
        self.made.warm_up()

    def close(self) -> None:
        if self._made is not None:
            self._made.close()

    @property
    def servers(self) -> ServerTools | None:
        return self.made.servers

    def clear(self) -> None:
        if self._made is not None:
            self._made.clear()

    def tell(self, note: str) -> None:
        if self._made is None:
            self._notes.append(note)
        else:
            self._made.tell(note)

    def memory_state(self) -> tuple[list[dict[str, Any]], list[str]]:
        if self._made is None:
            return [], list(self._notes)
        return self._made.memory_state()

    def restore(self, turns: Iterable[Mapping[str, Any]], notes: Iterable[str]) -> None:
        self.made.restore(turns, notes)

    def trace_text(self) -> str:
        return self.made.trace_text()

    def sent_json(self) -> list[str]:
        return self.made.sent_json()

    def sent_labels(self) -> list[str]:
        return self.made.sent_labels()

    def sent_tokens(self) -> str:
        return self.made.sent_tokens()

    def cost_text(self) -> str:
        return self.made.cost_text()
