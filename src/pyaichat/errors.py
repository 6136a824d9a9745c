"""The small, typed error tree of pyaichat.

Lower layers raise these with a message already written for a person; only the front ends turn them into
output, so a user never sees a traceback for a problem that pyaichat itself detected.
"""

from __future__ import annotations

from typing import ClassVar


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
    """The language model could not be used; ``str(err)`` already says why in one sentence.

    A small tree, modelled on httpx's: *what* failed is the class (the setup, the transport, or the
    provider's answer), and each class knows whether asking again may help (``retryable``). ``kind`` is the
    short name front ends and tests see in an ``error`` event.
    """

    kind: ClassVar[str] = "provider"
    retryable: ClassVar[bool] = False


# -- before any request --------------------------------------------------------------------------------------
class LLMSetupError(LLMError):
    """pyaichat cannot make a request at all (no model, no model library)."""

    kind = "setup"


class NoModelConfigured(LLMSetupError):
    kind = "no_model"


# -- the request did not get a whole answer through ----------------------------------------------------------
class LLMTransportError(LLMError):
    """The provider could not be reached, or its answer did not arrive whole."""

    kind = "connection"


class LLMConnectError(LLMTransportError):
    """Nothing answered at the address (refused, unknown host): asking again at once would not help."""


class LLMNetworkError(LLMTransportError):
    """The connection failed on the way; it may work a moment later."""

    retryable = True


class LLMTimeout(LLMTransportError):
    kind = "timeout"
    retryable = True


class LLMConnectionClosed(LLMTransportError):
    """The server took the request, then closed the connection without a (whole) answer. A server on this
    machine that does this has usually crashed (a local model server killed by a signal mid-request)."""

    retryable = True

    def __init__(self, message: str, *, local: bool = False) -> None:
        super().__init__(message)
        self.local = local


class LLMStreamCut(LLMTransportError):
    """The streamed reply stopped in the middle."""

    kind = "stream_cut"
    retryable = True


class LLMHelperStopped(LLMTransportError):
    """The helper process that makes the suggestion model's calls stopped before it answered (killed, or it
    could not start); the next suggestion starts another."""

    retryable = True


# -- the provider answered with an error ---------------------------------------------------------------------
class LLMProviderError(LLMError):
    """The provider answered, but with an error (or with something that is not an answer)."""

    kind = "provider"


class LLMAuthError(LLMProviderError):
    kind = "auth"


class LLMRateLimited(LLMProviderError):
    kind = "rate_limit"
    retryable = True


class LLMServerError(LLMProviderError):
    """The provider failed on its side (HTTP 5xx)."""

    retryable = True


class LLMUnknownModel(LLMProviderError):
    kind = "model"


class LLMContextTooLong(LLMProviderError):
    kind = "context"


class LLMToolsRefused(LLMProviderError):
    """The model does not take tool schemas: the text protocol can still drive it."""

    kind = "tools_unsupported"


class LLMBadRequest(LLMProviderError):
    kind = "bad_request"


class LLMMalformedReply(LLMProviderError):
    kind = "malformed"


class CapabilityError(PyAIChatError):
    """A capability refused or failed; becomes an ``ok=False`` result, never escapes ``capabilities.call``."""


class SandboxViolation(CapabilityError):
    """Generated code tried something the sandbox forbids (escape, mutation, I/O, resource abuse)."""


class CapabilityTimeout(CapabilityError):
    """A capability or sandbox run did not finish before its deadline."""


def internal_error(exc: BaseException, who: str = "pyaichat") -> str:
    """The one sentence for a bug in pyaichat that was caught before it could end the session."""
    return f"{who} hit an internal error ({type(exc).__name__}: {exc}); your session is intact."
