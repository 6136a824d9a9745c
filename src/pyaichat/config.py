"""Configuration: defaults < config file < ``PYAICHAT_*`` environment < command-line flags.

Every source is merged into one dict first (``config_sources``) and validated once by the pydantic
``Config``, so a bad value is reported with the place it came from (file and key, variable, or flag) instead
of a traceback.

``Config`` is the one declaration of the settings: names, types, defaults, bounds and descriptions. The
start-up (``config_light``) reads that declaration from this file's source and validates plain values itself,
so ``python -m pyaichat`` does not import pydantic unless a value needs it; any doubt or error comes here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from .config_sources import ENV_PREFIX, Sources, config_file_path, gather_sources
from .errors import ConfigError

__all__ = ["ENV_PREFIX", "Config", "config_file_path", "describe_settings", "load_config", "validate_sources"]

Privacy = Literal["names", "schema", "sample", "full"]


class Config(BaseModel):
    """All user-facing settings. Field names are the config-file keys; ``PYAICHAT_<NAME>`` sets one from the
    environment."""

    # defer_build: the validator is only built when something needs validating. Keep fields declared as
    # ``name: type = Field(default, ge=/gt=/le=/lt=, description=...)``: ``config_light`` reads exactly that
    # shape (anything else is left to pydantic, which then loads at start-up).
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    model: str | None = Field(
        None, description="litellm model string, e.g. gpt-4o-mini or ollama/qwen2.5-coder"
    )
    api_base: str | None = Field(None, description="base URL of the provider or an OpenAI-compatible server")
    api_key: SecretStr | None = Field(None, description="API key; else the provider's own variable is used")
    max_steps: int = Field(8, ge=1, le=100, description="most tool-calling steps per answer")
    turn_timeout: float = Field(120.0, gt=0, le=3600, description="seconds one answer may take in all")
    request_timeout: float = Field(60.0, gt=0, le=3600, description="seconds one LLM request may take")
    tool_timeout: float = Field(2.0, gt=0, le=600, description="seconds one capability call may take")
    max_output_chars: int = Field(
        4000, ge=200, le=200_000, description="characters one capability may return"
    )
    context_tokens: int = Field(8000, ge=1000, le=1_000_000, description="token budget for the context")
    privacy: Privacy = Field(
        "sample", description="what capabilities may reveal: names < schema < sample < full"
    )
    sandbox_isolation: Literal["auto", "fork", "inprocess"] = Field(
        "auto", description="run generated code in a forked child (auto: where the platform can fork)"
    )
    secret_names: list[str] = Field(
        default_factory=list, description="extra name patterns to treat as secret"
    )
    secret_patterns: list[str] = Field(default_factory=list, description="extra regexes to mask in any text")
    audit: bool = Field(True, description="append every capability call to audit.jsonl")
    budget_usd: float | None = Field(
        None, gt=0, description="stop asking once the session has cost this much"
    )
    color: bool = Field(True, description="coloured output (--no-color or NO_COLOR turn it off)")
    editing_mode: Literal["emacs", "vi"] = Field("emacs", description="key bindings of the prompt")
    max_tokens: int = Field(
        1024,
        ge=16,
        le=200_000,
        description="most tokens one model reply may have (less if the window is full)",
    )
    context_window: int | None = Field(
        None, ge=512, le=10_000_000, description="the model's context window in tokens (unset: ask the model)"
    )
    temperature: float | None = Field(
        None, ge=0, le=2, description="sampling temperature (unset: provider's)"
    )
    seed: int | None = Field(None, description="sampling seed, for repeatable local-model answers")
    tool_protocol: Literal["auto", "native", "text"] = Field(
        "auto", description="tool calling: native function calls, the text protocol, or auto (by the model)"
    )

    @property
    def api_key_value(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None


# Fields that hold lists: from the environment they are comma-separated.
_LIST_FIELDS = {name for name, f in Config.model_fields.items() if f.annotation == list[str]}


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective ``Config``. ``overrides`` are command-line values (``None`` means "not given")."""
    env = os.environ if env is None else env
    sources = gather_sources(overrides, config_file, env, Config.model_fields, _LIST_FIELDS)
    return validate_sources(sources)


def validate_sources(sources: Sources) -> Config:
    """The one validation of all sources together; a bad value becomes a ``ConfigError`` naming its origin."""
    if not sources:
        return Config.model_construct()  # all defaults: nothing to validate
    try:
        return Config.model_validate({k: v for k, (v, _) in sources.items()})
    except ValidationError as exc:
        raise _friendly(exc, sources) from None


def _friendly(exc: ValidationError, sources: Mapping[str, tuple[Any, str]]) -> ConfigError:
    err = exc.errors()[0]
    key = str(err["loc"][0]) if err.get("loc") else "?"
    where = sources.get(key, (None, "configuration"))[1]
    if err["type"] == "extra_forbidden":
        known = ", ".join(Config.model_fields)
        return ConfigError(
            f"In {where}: unknown setting {key!r} (known settings: {known}).", source=where, key=key
        )
    value = sources.get(key, (None, ""))[0]
    shown = "" if key == "api_key" else f" (got {value!r})"
    return ConfigError(f"In {where}: {key} {_lower_first(err['msg'])}{shown}.", source=where, key=key)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def describe_settings() -> list[tuple[str, str, str]]:
    """(key, default, description) rows for the README table and ``/help config``."""
    rows = []
    for name, field in Config.model_fields.items():
        default = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
        rows.append((name, repr(default), field.description or ""))
    return rows
