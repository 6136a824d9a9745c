"""A failed model call, as one plain sentence the user can act on (an ``LLMError`` of the right class).

litellm normalises every provider's errors into its own exception classes (subclasses of the OpenAI SDK's);
they are matched with ``isinstance`` against the loaded library, which is passed in so that importing this
module imports no litellm. The status code is checked too, because the class is not always the whole story:
a 401 can arrive as a ``BadRequestError`` with ``status_code == 401``, litellm reports some client-side
failures (no API key, nothing listening) as HTTP 500, and an OpenAI-compatible server's "context window
exceeded" is a plain ``BadRequestError`` whose words say so.
"""

from __future__ import annotations

import ipaddress
import os
import re
from typing import Any
from urllib.parse import urlsplit

from ...errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConnectError,
    LLMConnectionClosed,
    LLMContextTooLong,
    LLMError,
    LLMMalformedReply,
    LLMNetworkError,
    LLMProviderError,
    LLMRateLimited,
    LLMServerError,
    LLMStreamCut,
    LLMTimeout,
    LLMToolsRefused,
    LLMUnknownModel,
)

UNKNOWN_PROVIDER = (
    "pyaichat cannot tell which provider serves {model!r}: use a litellm model string such as gpt-4o-mini, "
    "anthropic/<model>, ollama/<model> or openai/<model> with --api-base."
)
NO_MODEL = (
    "No model is configured: choose one with /model <name>, the --model flag, the PYAICHAT_MODEL variable "
    'or model = "…" in the config file.'
)

_UNREACHABLE = (
    "connection refused",
    "connection error",
    "errno 111",
    "name or service not known",
    "nodename nor servname",
    "no route to host",
    "temporary failure in name resolution",
)
# The server took the request and hung up: httpx's RemoteProtocolError ("Server disconnected without sending a
# response", "peer closed connection without sending complete message body"), a reset. litellm reports them as
# "Connection error." (even as HTTP 500); the words are in the exception's causes.
_CLOSED = (
    "server disconnected",
    "peer closed connection",
    "connection reset by peer",
    "remote end closed connection",
    "connection aborted",
    "errno 104",
)
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception\s*-\s*)+")


def map_error(
    exc: BaseException,
    lib: Any,
    *,
    model: str,
    api_base: str | None,
    timeout: float,
    sent_tools: bool,
    key_given: bool = False,
) -> LLMError:
    """The ``LLMError`` for an exception raised by ``lib.completion`` or while reading its stream.
    ``key_given``: pyaichat passed a key itself (``PYAICHAT_API_KEY``), so litellm read none of its own."""
    x = lib.exceptions
    status = getattr(exc, "status_code", None)
    low = f"{exc} {getattr(exc, 'original_exception', None) or ''}".lower()
    where = f"at {api_base}" if api_base else f"for {model}"
    causes = _causes(exc)
    closed = any(words in causes for words in _CLOSED)
    local = is_local(api_base, model)

    if isinstance(exc, x.MidStreamFallbackError):
        if "expecting" in low or "json" in low:
            return LLMMalformedReply(f"The provider {where} sent a reply that is not valid JSON; try again.")
        if closed and local:
            return LLMStreamCut(
                f"The model server {where} broke off its reply and closed the connection; it runs on this "
                "machine, so it may have crashed: check its log."
            )
        return LLMStreamCut(f"The provider {where} broke off its reply in the middle; ask again.")
    if closed:
        if local:
            return LLMConnectionClosed(
                f"The model server {where} closed the connection without answering; it runs on this machine, "
                "so it may have crashed: check its log.",
                local=True,
            )
        return LLMConnectionClosed(
            f"The provider {where} closed the connection without answering; try again in a moment."
        )
    if isinstance(exc, x.ContextWindowExceededError) or "context length" in low or "context window" in low:
        return LLMContextTooLong(
            f"The conversation is too long for {model}'s context window; /clear starts afresh."
        )
    # Client-side failures that litellm reports as HTTP 500 (or as a 401 no provider ever sent): recognised
    # by their words before the status.
    no_key = (
        "missing credentials" in low
        or ("api_key" in low and "must be set" in low)
        or "no api key" in low
        or ("missing" in low and "api key" in low)
    )
    refused = isinstance(exc, (x.AuthenticationError, x.PermissionDeniedError)) or status in (401, 403)
    if no_key or refused:
        return _key_error(lib, model, api_base, no_key=no_key, key_given=key_given)
    if any(words in low for words in _UNREACHABLE):
        if api_base or local:  # a server the person named, or runs here
            return LLMConnectError(
                f"Cannot reach the provider {where}: is the server running and the address right?"
            )
        return LLMConnectError(
            f"Cannot reach the provider for {model}: check this machine's network connection (and proxy "
            "settings, if any)."
        )
    if isinstance(exc, x.RateLimitError) or status == 429:
        return LLMRateLimited(f"The provider {where} is rate limiting requests; wait a moment and ask again.")
    if isinstance(exc, x.Timeout) or status == 408 or "timed out" in low:
        return LLMTimeout(
            f"The provider {where} did not answer within {timeout:.0f} s; ask again or raise request_timeout."
        )
    if isinstance(exc, x.NotFoundError) or status == 404:
        if api_base:  # the address may be the one that is wrong: another provider's server
            return LLMUnknownModel(
                f"The server at {api_base} does not know the model {model}: check the name, and that this "
                "address serves that provider's models (/model says where each model's requests go)."
            )
        return LLMUnknownModel(f"The provider {where} does not know the model {model}; check it with /model.")
    if isinstance(exc, x.LiteLLMUnknownProvider) or "llm provider not provided" in low:
        return LLMUnknownModel(UNKNOWN_PROVIDER.format(model=model))
    if isinstance(exc, x.BadRequestError) or status == 400:
        if sent_tools and ("tool" in low or "function" in low):
            return LLMToolsRefused(f"{model} does not accept tool schemas.")
        return LLMBadRequest(f"The provider refused the request: {_first_sentence(str(exc))}")
    if isinstance(exc, x.APIConnectionError):  # litellm gives it status 500: the class says more
        return LLMNetworkError(f"Cannot reach the provider {where}; check the network.")
    server_classes = (x.InternalServerError, x.ServiceUnavailableError, x.BadGatewayError, x.APIError)
    if isinstance(exc, server_classes) or (isinstance(status, int) and status >= 500):
        return LLMServerError(f"The provider {where} failed (HTTP {status or 500}); try again in a moment.")
    if "connection" in low:
        return LLMNetworkError(f"Cannot reach the provider {where}; check the network.")
    return LLMProviderError(f"The model call failed: {_first_sentence(str(exc))}")


def model_problem(lib: Any, model: str) -> str | None:
    """Why litellm cannot place ``model`` with a provider — the sentence a request for it would end with —
    or ``None``; asked before a model is chosen (``/model``, ``/suggest``), no request made."""
    try:
        lib.get_llm_provider(model=model)
    except Exception as exc:
        unknown = getattr(lib.exceptions, "LiteLLMUnknownProvider", ())
        if (unknown and isinstance(exc, unknown)) or "llm provider not provided" in str(exc).lower():
            return UNKNOWN_PROVIDER.format(model=model)
    return None


def _key_error(lib: Any, model: str, api_base: str | None, *, no_key: bool, key_given: bool) -> LLMAuthError:
    """No key, or a key refused: named by the variable the provider reads (litellm knows which), never
    another provider's."""
    if key_given:
        return LLMAuthError(f"The provider rejected the API key for {model}: check PYAICHAT_API_KEY.")
    missing = _missing_keys(lib, model, api_base)
    if no_key or missing:
        names = missing or _key_names(lib, model)
        either = " or " if all(n.endswith("_API_KEY") for n in names) else " and "
        what = either.join(names) if names else "the provider's own key variable"
        return LLMAuthError(f"No API key was found for {model}: set {what} (or PYAICHAT_API_KEY).")
    names = [n for n in _key_names(lib, model) if n in os.environ]
    what = " or ".join(names) if names else "the provider's own key variable"
    return LLMAuthError(f"The provider rejected the API key for {model}: check {what} (or PYAICHAT_API_KEY).")


def _missing_keys(lib: Any, model: str, api_base: str | None) -> list[str]:
    """The key variables litellm says ``model``'s provider wants and the environment lacks (not its other
    settings, such as a base URL)."""
    try:
        found = lib.validate_environment(model=model, api_base=api_base)
        names = [str(n) for n in found.get("missing_keys") or []]
    except Exception:  # an older litellm, a model it cannot place: say less rather than something wrong
        return []
    return [n for n in names if "KEY" in n or "TOKEN" in n]


def _key_names(lib: Any, model: str) -> list[str]:
    """The usual key variable of ``model``'s provider (``ANTHROPIC_API_KEY``), as litellm places it."""
    try:
        provider = str(lib.get_llm_provider(model)[1] or "")
    except Exception:
        return []
    return [f"{provider.upper()}_API_KEY"] if provider.replace("_", "").isalnum() else []


def _causes(exc: BaseException) -> str:
    """The words of ``exc`` and of the exceptions it was raised from (litellm's message hides httpx's)."""
    words: list[str] = []
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 12:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        words.append(f"{type(current).__name__}: {current}")
        original = getattr(current, "original_exception", None)
        todo.extend(
            [
                current.__cause__,
                current.__context__,
                original if isinstance(original, BaseException) else None,
            ]
        )
    return " ".join(words).lower()


def is_local(api_base: str | None, model: str) -> bool:
    """Does the model server run on this machine (a loopback address, or Ollama's default)?"""
    if not api_base:
        return model.startswith(("ollama/", "ollama_chat/"))
    host = urlsplit(api_base if "//" in api_base else f"http://{api_base}").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _first_sentence(text: str, limit: int = 200) -> str:
    """The provider's own message without litellm's class-name prefixes, cut to one line."""
    text = _PREFIX.sub("", " ".join(text.split()))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text if text.endswith((".", "!", "?", "…")) else text + "."
