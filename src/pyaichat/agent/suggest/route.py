"""Where suggestions go: the endpoint, the protocol (fill-in-the-middle or chat), and what the toolbar says.

Fill-in-the-middle is litellm's text completion with a ``suffix``, on the providers that serve it: an
OpenAI-compatible server named with ``openai/`` and a base URL (llama.cpp, llama-cpp-python, LM Studio,
Ollama's ``/v1``…), Ollama (through its OpenAI-compatible ``/v1/completions``, which takes ``suffix`` for its
FIM models), Codestral and DeepSeek (its ``/beta`` completions). Every other model gets a short chat prompt,
and so does a server that refuses a completion request (the engine remembers that for the session).

Standard library only: the toolbar asks ``destination`` at the first prompt.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from ...configuration.config import provider_of

if TYPE_CHECKING:
    from ...configuration.config import Config

Kind = Literal["fim", "chat"]

OLLAMA_BASE = "http://localhost:11434"
DEEPSEEK_FIM_BASE = "https://api.deepseek.com/beta"
# Where a provider's requests go when no base URL is set (what the toolbar names).
DEFAULT_HOSTS = {
    "": "api.openai.com",
    "openai": "api.openai.com",
    "text-completion-openai": "api.openai.com",
    "anthropic": "api.anthropic.com",
    "codestral": "codestral.mistral.ai",
    "text-completion-codestral": "codestral.mistral.ai",
    "mistral": "api.mistral.ai",
    "deepseek": "api.deepseek.com",
    "ollama": "localhost:11434",
    "ollama_chat": "localhost:11434",
    "groq": "api.groq.com",
    "gemini": "generativelanguage.googleapis.com",
    "openrouter": "openrouter.ai",
}
_LOCAL = ("localhost", "127.", "::1", "[::1]", "0.0.0.0")


class Route:
    """How one suggestion request is sent: ``kind``, the litellm ``model`` string, base URL and key."""

    __slots__ = ("api_base", "api_key", "kind", "model")

    def __init__(self, kind: Kind, model: str, api_base: str | None, api_key: str | None) -> None:
        self.kind, self.model, self.api_base, self.api_key = kind, model, api_base, api_key

    def __repr__(self) -> str:  # never the key
        return f"Route({self.kind!r}, {self.model!r}, api_base={self.api_base!r})"


def base_of(config: Config) -> str | None:
    """``suggest_api_base``; unset, the assistant's ``api_base`` when both models use the same provider (one
    server serving both), else none (the provider's own endpoint)."""
    if config.suggest_api_base:
        return config.suggest_api_base
    return config.base_for(config.suggest_model or "") if config.model else None


def route_for(config: Config, *, chat_only: bool = False) -> Route:
    """The route for ``config.suggest_model`` (``chat_only``: the server refused fill-in-the-middle)."""
    model = config.suggest_model or ""
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    base = base_of(config)
    # The assistant's key goes only to the assistant's own server.
    key = config.api_key_value if base is not None and base == config.api_base else None
    if not chat_only:
        if provider in ("text-completion-openai", "text-completion-codestral"):
            return Route("fim", model, base, key)
        if provider == "codestral":
            return Route("fim", f"text-completion-codestral/{name}", base, key)
        if provider == "openai" and base:
            return Route("fim", model, base, _openai_key(key, base))
        if provider in ("ollama", "ollama_chat"):
            root = (base or OLLAMA_BASE).rstrip("/").removesuffix("/v1")
            return Route("fim", f"text-completion-openai/{name}", f"{root}/v1", key or "ollama")
        if provider == "deepseek":
            return Route(
                "fim",
                f"text-completion-openai/{name}",
                base or DEEPSEEK_FIM_BASE,
                key or os.environ.get("DEEPSEEK_API_KEY"),
            )
    if provider == "openai" and base:
        return Route("chat", model, base, _openai_key(key, base))
    return Route("chat", model, base, key)


def _openai_key(key: str | None, base: str) -> str | None:
    """An OpenAI-compatible server on this machine rarely checks keys, but the client insists on one."""
    return key or os.environ.get("OPENAI_API_KEY") or ("no-key" if is_local(base) else None)


def host_of(url: str) -> str:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        return parts.netloc or url
    except ValueError:
        return url


def is_local(url: str) -> bool:
    host = host_of(url).rpartition("@")[2]
    return host.startswith(_LOCAL)


def destination(config: Config) -> tuple[str, bool]:
    """Where what the user types goes: (a host to name, whether it is this machine)."""
    model = config.suggest_model or ""
    base = base_of(config)
    if base:
        return host_of(base), is_local(base)
    provider = provider_of(model)
    host = DEFAULT_HOSTS.get(provider, f"{provider}'s servers")
    return host, host.startswith(_LOCAL)
