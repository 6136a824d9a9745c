"""Configuration: defaults < config file < ``PYAICHAT_*`` environment < command-line flags.

Every source is merged into one dict first (``config_sources``) and validated once by the pydantic
``Config``, so a bad value is reported with the place it came from (file and key, variable, or flag) instead
of a traceback.

The settings are declared once, as plain data, in ``settings.py``: ``Config`` spells out each field's type
(for type checkers and readers) and takes its default, bounds and description from that table. The start-up
(``config_light``) checks plain values against the same table and imports this module, and with it pydantic,
only when a value needs them; any doubt or error comes here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from .config_sources import ENV_PREFIX, Sources, config_file_path, gather_sources
from .errors import ConfigError
from .settings import SETTINGS

__all__ = ["ENV_PREFIX", "Config", "config_file_path", "describe_settings", "load_config", "validate_sources"]

Privacy = Literal["names", "schema", "sample", "full"]


def _field(name: str) -> Any:
    """``Field(...)`` with the default (or list factory), bounds and description of setting ``name``."""
    setting = SETTINGS[name]
    if setting.factory is not None:
        return Field(default_factory=setting.factory, description=setting.description, **setting.bounds)
    return Field(setting.default, description=setting.description, **setting.bounds)


class Config(BaseModel):
    """All user-facing settings. Field names are the config-file keys; ``PYAICHAT_<NAME>`` sets one from the
    environment."""

    # defer_build: the validator is only built when something needs validating. No validators and no
    # coercion options (strict, ...): the start-up's light path checks values by the kinds in the table.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    # In the table's order; each type matches the table's kind (tests/core/test_config_light.py checks both).
    model: str | None = _field("model")
    api_base: str | None = _field("api_base")
    api_key: SecretStr | None = _field("api_key")
    max_steps: int = _field("max_steps")
    turn_timeout: float = _field("turn_timeout")
    request_timeout: float = _field("request_timeout")
    tool_timeout: float = _field("tool_timeout")
    max_output_chars: int = _field("max_output_chars")
    context_tokens: int = _field("context_tokens")
    privacy: Privacy = _field("privacy")
    sandbox_isolation: Literal["auto", "fork", "inprocess"] = _field("sandbox_isolation")
    secret_names: list[str] = _field("secret_names")
    secret_patterns: list[str] = _field("secret_patterns")
    audit: bool = _field("audit")
    budget_usd: float | None = _field("budget_usd")
    color: bool = _field("color")
    editing_mode: Literal["emacs", "vi"] = _field("editing_mode")
    max_tokens: int = _field("max_tokens")
    context_window: int | None = _field("context_window")
    temperature: float | None = _field("temperature")
    seed: int | None = _field("seed")
    tool_protocol: Literal["auto", "native", "text"] = _field("tool_protocol")

    @property
    def api_key_value(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective ``Config``. ``overrides`` are command-line values (``None`` means "not given")."""
    env = os.environ if env is None else env
    sources = gather_sources(overrides, config_file, env)
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
