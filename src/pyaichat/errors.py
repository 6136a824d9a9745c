"""The small, typed error tree of pyaichat.

Lower layers raise these with a message already written for a person; only the front ends turn them into
output, so a user never sees a traceback for a problem that pyaichat itself detected.
"""

from __future__ import annotations


class PyAIChatError(Exception):
    """Base of every error pyaichat raises on purpose. ``str(err)`` is one plain sentence for the user."""


class ConfigError(PyAIChatError, ValueError):
    """The configuration (file, environment, flags or an assignment) is invalid. The front end exits with
    status 2. A ``ValueError`` too, as a bad value passed to any Python API is."""

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None) -> None:
        self.source = source
        self.key = key
        super().__init__(message)


class LLMError(PyAIChatError):
    """The language model could not be reached or answered with an error (mapped to a plain sentence)."""

    def __init__(self, message: str, *, kind: str = "provider", retryable: bool = False) -> None:
        self.kind = kind
        self.retryable = retryable
        super().__init__(message)


class CapabilityError(PyAIChatError):
    """A capability refused or failed; becomes an ``ok=False`` result, never escapes ``capabilities.call``."""


class SandboxViolation(CapabilityError):
    """Generated code tried something the sandbox forbids (escape, mutation, I/O, resource abuse)."""


class CapabilityTimeout(CapabilityError):
    """A capability or sandbox run did not finish before its deadline."""


class AssistantUnavailable(PyAIChatError):
    """The assistant cannot answer (no model configured, or its dependencies are missing)."""
