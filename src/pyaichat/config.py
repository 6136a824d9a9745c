"""Configuration: defaults < config file < ``PYAICHAT_*`` environment < command-line flags.

Every source is merged into one dict first (``config_sources``) and checked once, setting by setting, against
the settings table (``settings.py``: names, kinds, defaults, bounds, descriptions), so a bad value is reported
with the place it came from (file and key, variable, or flag) instead of a traceback. ``Config`` holds the
result and checks every later assignment the same way (``/model x``, ``%ai --max-steps 3``).

The checks accept what a person writes in a TOML file, an environment variable or a flag: ``"5"`` for a
number, ``"yes"``/``"off"`` for a switch, ``"1_000"``, surrounding spaces. Their wording is the one the README
shows ("max_steps input should be a valid integer, unable to parse string as an integer"), which is
pydantic's: pyaichat used pydantic here once, and the messages stay as users have seen them. Plain Python
keeps this module off the cost of importing pydantic at start-up.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .config_sources import ENV_PREFIX, Sources, config_file_path, gather_sources
from .errors import ConfigError
from .secret import Secret
from .settings import SETTINGS, Setting

if TYPE_CHECKING:
    from .mcptools.spec import ServerSpec

__all__ = [
    "ENV_PREFIX",
    "Config",
    "Secret",
    "config_file_path",
    "describe_settings",
    "load_config",
    "validate_sources",
]

Privacy = Literal["names", "schema", "sample", "full"]

# Unicode's White_Space characters: what is stripped around a number (not str.strip's set, which also strips
# the ASCII separators \x1c-\x1f).
_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_I64 = 2**63


class Config:
    """All user-facing settings. Attribute names are the config-file keys; ``PYAICHAT_<NAME>`` sets one from
    the environment. Assigning a setting checks the value; two configurations are equal when their values
    are."""

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
    secret_names: list[str]
    secret_patterns: list[str]
    audit: bool
    autosave: Literal["auto", "on", "off"]
    budget_usd: float | None
    color: bool
    editing_mode: Literal["emacs", "vi"]
    max_tokens: int
    context_window: int | None
    temperature: float | None
    seed: int | None
    tool_protocol: Literal["auto", "native", "text"]
    suggest_model: str | None
    suggest_api_base: str | None
    mcp_servers: tuple[ServerSpec, ...]
    mcp_config: str | None
    mcp_start_timeout: float
    mcp_call_timeout: float
    mcp_tool_tokens: int
    mcp_serve_host: str | None
    mcp_serve_busy_wait: float
    mcp_serve_show_calls: bool

    __slots__ = tuple(SETTINGS)

    def __init__(self, **values: Any) -> None:
        checked = {name: _check_named(name, value, None) for name, value in values.items()}
        for name, setting in SETTINGS.items():
            object.__setattr__(self, name, checked[name] if name in checked else setting.default_value())

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, _check_named(name, value, None))

    @property
    def api_key_value(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key is not None else None

    def replace(self, **changes: Any) -> Config:
        """A copy with ``changes`` applied (each checked)."""
        return Config(**{**self.values(), **changes})

    def values(self) -> dict[str, Any]:
        """Every setting's value, by name, in the table's order."""
        return {name: getattr(self, name) for name in SETTINGS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self.values() == other.values()

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable

    def __repr__(self) -> str:
        return f"Config({', '.join(f'{name}={value!r}' for name, value in self.values().items())})"


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective ``Config``. ``overrides`` are command-line values (``None`` means "not given")."""
    env = os.environ if env is None else env
    return validate_sources(gather_sources(overrides, config_file, env))


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


def describe_settings() -> list[tuple[str, str, str]]:
    """(key, default, description) rows for the README table and ``/help config``."""
    return [(name, repr(s.default_value()), s.description) for name, s in SETTINGS.items()]


# -- checking one value --------------------------------------------------------------------------------------
class _Invalid(Exception):
    """A value a setting cannot take; ``str()`` is the reason, e.g. "Input should be a valid integer"."""


def _check_named(name: str, value: Any, where: str | None) -> Any:
    setting = SETTINGS.get(name)
    if setting is None:
        raise _unknown(name, where)
    try:
        return check(setting, value)
    except _Invalid as exc:
        reason = str(exc)
        shown = "" if setting.kind in ("secret", "servers") else f" (got {value!r})"
        prefix = f"In {where}: " if where else ""
        message = f"{prefix}{name} {reason[:1].lower()}{reason[1:]}{shown}."
        raise ConfigError(message, source=where, key=name) from None


def _unknown(name: str, where: str | None) -> ConfigError:
    prefix = f"In {where}: " if where else ""
    known = ", ".join(SETTINGS)
    return ConfigError(f"{prefix}unknown setting {name!r} (known settings: {known}).", source=where, key=name)


def check(setting: Setting, value: Any) -> Any:
    """The value ``setting`` holds for ``value``, or ``_Invalid`` saying why it cannot take it."""
    if value is None and setting.default is None and setting.factory is None:
        return None  # an optional setting left unset
    kind = setting.kind
    if kind == "str":
        return _string(value)
    if kind == "secret":
        if isinstance(value, Secret):
            return value
        try:
            return Secret(_string(value))
        except _Invalid:  # without the reason: it could describe the key
            raise _Invalid("Input should be a valid string") from None
    if kind == "choice":
        if type(value) is str and value in setting.choices:
            return value
        quoted = [repr(choice) for choice in setting.choices]
        listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        raise _Invalid(f"Input should be {listed}")
    if kind == "strlist":
        return _string_list(value)
    if kind == "servers":
        from .mcptools.config import servers_from_table  # only with a config that lists MCP servers

        try:
            return servers_from_table(value)
        except ValueError as exc:
            raise _Invalid(str(exc)) from None
    if kind == "bool":
        return _boolean(value)
    if kind == "int":
        return _bounded(setting, _integer(value))
    if kind == "float":
        return _bounded(setting, _number(value))
    raise ValueError(f"setting {setting.name!r} has an unknown kind {kind!r}")  # a mistake in the table


def _string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            raise _Invalid("Input should be a valid string, unable to parse raw data as a unicode string")
    raise _Invalid("Input should be a valid string")


def _string_list(value: Any) -> list[str]:
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not hasattr(value, "__iter__"):
        raise _Invalid("Input should be a valid list")
    return [_string(item) for item in value]


def _text(value: str | bytes) -> str | None:
    """A number's text without the white space around it; ``None`` when it cannot be one: bytes that are not
    UTF-8, or characters that ``int()``/``float()`` would take but a number is not written with (digits of
    other scripts, the separators \x1c-\x1f at either end)."""
    if isinstance(value, bytes):
        try:
            value = value.decode()
        except UnicodeDecodeError:
            return None
    text = value.strip(_SPACE)
    return text if text.isascii() and text.strip() == text else None


def _integer(value: Any) -> int:
    if isinstance(value, int):  # bool included: True is 1
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Invalid("Input should be a finite number")
        if not value.is_integer():
            raise _Invalid("Input should be a valid integer, got a number with a fractional part")
        if not -_I64 < value < _I64:
            raise _Invalid("Unable to parse input string as an integer, exceeded maximum size")
        return int(value)
    if isinstance(value, (str, bytes)):
        text = _text(value)
        if text is not None:
            whole, dot, fraction = text.partition(".")
            if not dot or (fraction and not fraction.strip("0")):  # "5" or "5.00", not "5." or "5.1"
                try:
                    return int(whole)
                except ValueError:
                    pass
        raise _Invalid("Input should be a valid integer, unable to parse string as an integer")
    raise _Invalid("Input should be a valid integer")


def _number(value: Any) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            raise _Invalid("Input should be a valid number") from None
    if isinstance(value, (str, bytes)):
        text = _text(value)
        # Underscores may separate any two characters, one at a time: "1_000", "1_.5", "in_f".
        if text is not None and text[:1] != "_" and text[-1:] != "_" and "__" not in text:
            try:
                return float(text.replace("_", ""))
            except ValueError:
                pass
        raise _Invalid("Input should be a valid number, unable to parse string as a number")
    raise _Invalid("Input should be a valid number")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, bytes)):
        text = value.decode(errors="replace") if isinstance(value, bytes) else value
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise _Invalid("Input should be a valid boolean, unable to interpret input")
    if isinstance(value, (int, float)):
        if value in (0, 1):
            return bool(value)
        integral = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
        if integral and -_I64 <= value < _I64:  # a whole number, but not 0 or 1
            raise _Invalid("Input should be a valid boolean, unable to interpret input")
    raise _Invalid("Input should be a valid boolean")


def _bounded(setting: Setting, value: float) -> Any:
    bounds = setting.bounds
    # the order of the checks decides which message a NaN gets (it fails them all)
    if "le" in bounds and not value <= bounds["le"]:
        raise _Invalid(f"Input should be less than or equal to {bounds['le']}")
    if "lt" in bounds and not value < bounds["lt"]:
        raise _Invalid(f"Input should be less than {bounds['lt']}")
    if "ge" in bounds and not value >= bounds["ge"]:
        raise _Invalid(f"Input should be greater than or equal to {bounds['ge']}")
    if "gt" in bounds and not value > bounds["gt"]:
        raise _Invalid(f"Input should be greater than {bounds['gt']}")
    return value
