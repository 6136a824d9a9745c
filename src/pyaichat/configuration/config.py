"""Configuration: defaults < config file < ``PYAICHAT_*`` environment < command-line flags.

Every source is merged into one dict first (``configuration.sources``) and checked once, setting by setting,
against the settings table (``settings.py``: names, kinds, defaults, bounds, descriptions), so a bad value is
reported with the place it came from (file and key, variable, or flag) instead of a traceback.

A ``Config`` never changes: ``replace(**changes)`` gives a checked copy. ``Settings`` holds the session's
current one: every part reads it there, and only the controller replaces it (``/model``, a fixed
configuration in IPython); a ``%ai --model M`` question gets its own ``replace(...)`` for that question only.

The checks are pyaichat's own, in its own words, and accept what a person writes in a TOML file, an
environment variable or a flag: ``"5"`` or ``" 5 "`` for a number, ``"1_000"``, ``"yes"``/``"off"`` for a
switch. Plain Python keeps this module off the cost of importing pydantic at start-up.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError
from ..printable import show
from .secret import Secret
from .settings import SETTINGS, Setting, closest_setting
from .sources import ENV_PREFIX, Sources, config_file_path, gather_sources, unknown_variables

if TYPE_CHECKING:
    from .mcp_server_spec import ServerSpec

__all__ = [
    "ENV_PREFIX",
    "Config",
    "Secret",
    "Settings",
    "config_file_path",
    "load_config",
    "validate_sources",
]

Privacy = Literal["names", "schema", "sample", "full"]

_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def provider_of(model: str) -> str:
    """The provider a litellm model string names (``ollama/qwen`` → ``ollama``; a bare name → "")."""
    return model.partition("/")[0] if "/" in model else ""


class Config:
    """All user-facing settings, fixed once made. Attribute names are the config-file keys;
    ``PYAICHAT_<NAME>`` sets one from the environment. ``replace`` makes a checked copy; two configurations
    are equal when their values are."""

    # The table's settings, in its order; each type is what the table's kind holds.
    model: str | None
    api_base: str | None
    api_key: Secret | None
    max_steps: int
    turn_timeout: float
    request_timeout: float
    tool_timeout: float
    max_output_chars: int
    context_tokens: int
    privacy: Privacy
    sandbox_isolation: Literal["auto", "fork", "inprocess"]
    secret_names: tuple[str, ...]
    secret_patterns: tuple[str, ...]
    audit: bool
    autosave: Literal["auto", "on", "off"]
    checkpoints: Literal["auto", "on", "off"]
    checkpoint_memory: float | None
    budget_usd: float | None
    color: bool
    editing_mode: Literal["emacs", "vi"]
    receipts: bool
    max_tokens: int
    context_window: int | None
    temperature: float | None
    seed: int | None
    tool_protocol: Literal["auto", "native", "text"]
    suggest_model: str | None
    suggest_api_base: str | None
    mcp_servers: tuple[ServerSpec, ...]
    mcp_tool_rules: tuple[tuple[str, str], ...]
    mcp_config: str | None
    mcp_start_timeout: float
    mcp_call_timeout: float
    mcp_tool_tokens: int
    mcp_serve_host: str | None
    mcp_serve_busy_wait: float
    mcp_serve_proposal_wait: float
    mcp_serve_show_calls: bool
    mcp_serve_quiet: bool

    __slots__ = tuple(SETTINGS)

    def __init__(self, **values: Any) -> None:
        checked = {name: _check_named(name, value, None) for name, value in values.items()}
        for name, setting in SETTINGS.items():
            object.__setattr__(self, name, checked[name] if name in checked else setting.default_value())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Config does not change: use config.replace({name}=...) for a new one")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a Config does not change")

    @property
    def api_key_value(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key is not None else None

    def base_for(self, model: str) -> str | None:
        """The base URL ``model`` is sent to: ``api_base`` when ``model`` names the same provider as the
        configured ``model`` (one server serving both: ``openai/a`` and ``openai/b``), else none, its
        provider's own address (a llama.cpp server's base is no Ollama server's)."""
        if self.api_base and (not self.model or provider_of(model) == provider_of(self.model)):
            return self.api_base
        return None

    def for_model(self, model: str) -> Config:
        """A copy that sends to ``model``: the base URL and key kept when it is the same provider's, dropped
        when another's (its requests then go to its provider's own address, with that provider's own key
        variable, as litellm reads it)."""
        if not self.model or provider_of(model) == provider_of(self.model):
            return self.replace(model=model)
        return self.replace(model=model, api_base=None, api_key=None)

    def replace(self, **changes: Any) -> Config:
        """A copy with ``changes`` applied (each checked; ``ConfigError`` names the first bad one)."""
        return Config(**{**self.values(), **changes})

    def values(self) -> dict[str, Any]:
        """Every setting's value, by name, in the table's order."""
        return {name: getattr(self, name) for name in SETTINGS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self.values() == other.values()

    def __hash__(self) -> int:
        return hash(tuple(self.values().values()))

    def __repr__(self) -> str:
        return f"Config({', '.join(f'{name}={value!r}' for name, value in self.values().items())})"


class Settings:
    """The session's current configuration, held in one place: the composition root makes one per session
    and hands it to every part that reads a setting (the session, the runtime, the assistant, the controller,
    the suggestions, the MCP server); each reads ``current()`` when it needs a value, so a change reaches all
    of them at once. Only the controller changes it (``/model``, ``/suggest``, a fixed configuration in
    IPython), with ``replace``; ``listen`` is told of each new configuration."""

    __slots__ = ("_config", "_listeners")

    def __init__(self, config: Config | None = None) -> None:
        self._config = config if config is not None else Config()
        self._listeners: list[Callable[[Config], None]] = []

    @classmethod
    def of(cls, given: Settings | Config | None) -> Settings:
        """``given`` if it is a holder already, else a holder of its own for that configuration (a part made
        on its own: a test, the Python API)."""
        return given if isinstance(given, Settings) else cls(given)

    def current(self) -> Config:
        return self._config

    def replace(self, config: Config | None = None, /, **changes: Any) -> Config:
        """Make ``config`` (default: the current one), with ``changes`` applied, the current configuration;
        each listener is told. ``ConfigError`` names the first bad change, and nothing changes then."""
        new = (config if config is not None else self._config).replace(**changes) if changes else config
        if new is None or new == self._config:
            return self._config
        self._config = new
        for listener in list(self._listeners):
            listener(new)
        return new

    def listen(self, listener: Callable[[Config], None]) -> None:
        """Call ``listener(config)`` with every new configuration."""
        self._listeners.append(listener)

    def __repr__(self) -> str:
        return f"Settings({self._config!r})"


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Config:
    """Build the effective ``Config``. ``overrides`` are command-line values (``None`` means "not given").

    A ``PYAICHAT_*`` variable that names no setting (``PYAICHAT_MAX_STEP``) is ignored, and ``warn`` is given
    one sentence about it, naming the closest setting (default: a ``pyaichat:`` line on stderr)."""
    env = os.environ if env is None else env
    config = validate_sources(gather_sources(overrides, config_file, env))
    for sentence in unknown_variables(env):
        if warn is None:
            show(f"pyaichat: {sentence}", file=sys.stderr)
        else:
            warn(sentence)
    return config


def validate_sources(sources: Sources) -> Config:
    """The one check of all sources together; the first bad value (in the table's order, then an unknown
    setting) becomes a ``ConfigError`` naming its origin."""
    values = {}
    for name in SETTINGS:
        if name in sources:
            value, where = sources[name]
            values[name] = _check_named(name, value, where)
    for name, (_, where) in sources.items():
        if name not in SETTINGS:
            raise _unknown(name, where)
    return Config(**values)  # checked already: checking again accepts each value as it is


# -- checking one value --------------------------------------------------------------------------------------
class _Invalid(Exception):
    """A value a setting cannot take; ``str()`` is what it should be, e.g. "should be a whole number"."""


def _check_named(name: str, value: Any, where: str | None) -> Any:
    setting = SETTINGS.get(name)
    if setting is None:
        raise _unknown(name, where)
    try:
        return check(setting, value)
    except _Invalid as exc:
        shown = "" if setting.kind in ("secret", "servers") else f" (got {value!r})"
        prefix = f"In {where}: " if where else ""
        reason = str(exc)  # a table's own checker may start it with a capital
        reason = reason[:1].lower() + reason[1:]
        raise ConfigError(f"{prefix}{name} {reason}{shown}.", source=where, key=name) from None


def _unknown(name: str, where: str | None) -> ConfigError:
    prefix = f"In {where}: " if where else ""
    near = closest_setting(name)
    hint = f"did you mean {near!r}?" if near else f"known settings: {', '.join(SETTINGS)}"
    return ConfigError(f"{prefix}unknown setting {name!r} ({hint}).", source=where, key=name)


def check(setting: Setting, value: Any) -> Any:
    """The value ``setting`` holds for ``value``, or ``_Invalid`` saying what it should be."""
    if value is None and setting.default is None:
        return None  # an optional setting left unset
    kind = setting.kind
    if kind == "str":
        return value if isinstance(value, str) else _refuse("should be text")
    if kind == "secret":
        if isinstance(value, Secret):
            return value
        return Secret(value) if isinstance(value, str) else _refuse("should be text")
    if kind == "choice":
        if value in setting.choices and isinstance(value, str):
            return value
        quoted = [repr(choice) for choice in setting.choices]
        return _refuse(f"should be {', '.join(quoted[:-1])} or {quoted[-1]}")
    if kind == "strlist":
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            return tuple(value)
        return _refuse("should be a list of strings")
    if kind == "servers":
        from .mcp_servers import servers_from_table  # only with a config that lists MCP servers

        try:
            return servers_from_table(value)
        except ValueError as exc:
            return _refuse(str(exc))
    if kind == "rules":
        from .mcp_tool_rules import rules_from  # fnmatch: only with a config that has rules

        try:
            return rules_from(value)
        except ValueError as exc:
            return _refuse(str(exc))
    if kind == "bool":
        return _boolean(value)
    if kind == "int":
        return _bounded(setting, _integer(value))
    if kind == "float":
        return _bounded(setting, _number(value))
    raise ValueError(f"setting {setting.name!r} has an unknown kind {kind!r}")  # a mistake in the table


def _refuse(reason: str) -> Any:
    raise _Invalid(reason)


def _written(value: str) -> str | None:
    """A number as a person writes it, ready for ``int()``/``float()``: no spaces around it, ASCII only
    (``int()`` would also take other scripts' digits), underscores only between digits."""
    text = value.strip()
    if not text or not text.isascii() or "__" in text or text[0] == "_" or text[-1] == "_":
        return None
    return text


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        return _refuse("should be a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (text := _written(value)) is not None:
        whole, dot, fraction = text.partition(".")
        if not dot or (fraction.isdigit() and not fraction.strip("0")):  # "5" or "5.00", not "5." or "5.1"
            try:
                return int(whole)
            except ValueError:
                pass
    return _refuse("should be a whole number")


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return _refuse("should be a number")
    number: float | None = None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and (text := _written(value)) is not None:
        try:
            number = float(text)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        return _refuse("should be a number")
    return number


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return _refuse("should be true or false (or yes/no, on/off, 1/0)")


def _bounded(setting: Setting, value: float) -> Any:
    bounds = setting.bounds
    if "ge" in bounds and not value >= bounds["ge"]:
        raise _Invalid(f"should be at least {_shown(bounds['ge'])}")
    if "gt" in bounds and not value > bounds["gt"]:
        raise _Invalid(f"should be more than {_shown(bounds['gt'])}")
    if "le" in bounds and not value <= bounds["le"]:
        raise _Invalid(f"should be at most {_shown(bounds['le'])}")
    if "lt" in bounds and not value < bounds["lt"]:
        raise _Invalid(f"should be less than {_shown(bounds['lt'])}")
    return value


def _shown(bound: float) -> str:
    return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:g}"
