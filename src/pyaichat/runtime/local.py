"""The local runtime: the user's ``Session`` in this process, with the capabilities and the digest over it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..session import Session, input_is_complete

if TYPE_CHECKING:
    from ..capabilities.registry import CapabilityResult
    from ..config import Config
    from ..records import ExecResult, HistoryEntry, LastError
    from .completion import Completion


class LocalRuntime:
    """A ``Runtime`` over a ``Session``; its configuration is the session's."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._reported_error: object = None  # the last error the previous digest told about

    @property
    def config(self) -> Config:
        return self.session.config

    @config.setter
    def config(self, config: Config) -> None:
        self.session.config = config

    def run(self, source: str) -> ExecResult:
        return self.session.run(source)

    @property
    def history(self) -> Sequence[HistoryEntry]:
        return self.session.history

    @property
    def last_error(self) -> LastError | None:
        return self.session.last_error

    def complete(self, text: str, cursor: int) -> list[Completion]:
        from .completion import complete  # on the first TAB, not at start-up

        return complete(self.session.namespace, text, cursor)

    def is_complete(self, text: str) -> bool:
        return input_is_complete(text)

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        origin: str = "assistant",
        images: bool = False,
    ) -> CapabilityResult:
        from ..capabilities import call  # pydantic: with the first question, not at start-up

        return call(self.session, name, args, origin=origin, images=images)

    def digest(self) -> str:
        from ..capabilities.digest import session_digest  # with the first question, not at start-up

        text = session_digest(self.session, self.config, seen_error=self._reported_error)
        self._reported_error = self.session.last_error
        return text

    def user_names(self) -> list[tuple[str, str]]:
        from .completion import user_names  # on the first TAB, not at start-up

        return user_names(self.session.namespace)

    def describe(self) -> str | None:
        return None

    def close(self) -> None:
        pass
