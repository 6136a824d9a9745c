"""Helpers shared by the capability tests (a plain module: ``conftest`` names clash across test folders)."""

from __future__ import annotations

from typing import Any

from pyaichat.capabilities import CapabilityResult, call
from pyaichat.configuration.config import Config
from pyaichat.session import Session


def make_session(source: str = "", namespace: dict[str, Any] | None = None, **config: Any) -> Session:
    """A session whose namespace is ``namespace`` plus whatever ``source`` defines, with
    ``Config(**config)``."""
    session = Session(namespace if namespace is not None else {})
    session.settings.replace(Config(**config))
    if source:
        result = session.run(source)
        assert result.ok, result.error and result.error.formatted
    return session


def tool(session: Session, name: str, **args: Any) -> CapabilityResult:
    """``call`` with keyword arguments."""
    return call(session, name, args)
