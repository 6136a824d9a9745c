"""The start-up's configuration: same sources, precedence and messages as ``config.load_config``, no pydantic.

Importing pydantic costs about as much as the rest of a piped start-up together (issue 14). Most start-ups
have nothing that needs it: no config file, no ``PYAICHAT_*`` variable, no flag — or only plain values such as
a model name. So this module checks the given values against the settings table (``settings.SETTINGS``: the
one declaration of the settings, from which ``Config`` also takes its defaults, bounds and descriptions) and
returns a ``LazyConfig`` that answers attribute reads from those values and builds the real pydantic
``Config`` only when something needs more (an assignment, a method, a secret, a capability call). Whatever it
is unsure about — a value it would have to coerce in a way it does not know, an unknown setting, any value
that is wrong — goes to ``config.validate_sources`` at once, so a bad value still stops start-up with the same
one-line message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .config_sources import Sources, gather_sources
from .settings import SETTINGS, Setting

if TYPE_CHECKING:
    from .config import Config

_INT = r"-?(?:0|[1-9][0-9]*)"  # re's own cache compiles these on first use, not at import
_FLOAT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
# pydantic's documented lax str -> bool conversions (compared in lower case).
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


class _Unsure(Exception):
    """The light path cannot vouch for a value: pydantic decides."""


# -- checking values -----------------------------------------------------------------------------------------
def _check(spec: Setting, value: Any) -> Any:
    """The value pydantic would store for ``value``, when that is certain; else ``_Unsure``."""
    kind = spec.kind
    if kind in ("str", "secret"):
        if type(value) is str:
            return value
    elif kind == "choice":
        if type(value) is str and value in spec.choices:
            return value
    elif kind == "strlist":
        if type(value) is list and all(type(item) is str for item in value):
            return list(value)
    elif kind == "bool":
        if type(value) is bool:
            return value
        if type(value) is str and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
    elif kind == "int":
        if type(value) is str and re.fullmatch(_INT, value):
            value = int(value)
        if type(value) is int:
            return _in_bounds(spec, value)
    elif kind == "float":
        if type(value) is str and re.fullmatch(_FLOAT, value):
            value = float(value)
        if type(value) in (int, float):
            return _in_bounds(spec, float(value))
    raise _Unsure


def _in_bounds(spec: Setting, value: float) -> Any:
    b = spec.bounds
    if (
        ("ge" in b and not value >= b["ge"])
        or ("gt" in b and not value > b["gt"])
        or ("le" in b and not value <= b["le"])
        or ("lt" in b and not value < b["lt"])
        or value != value  # NaN
    ):
        raise _Unsure  # out of bounds: pydantic writes the message
    return value


def light_values(fields: Mapping[str, Setting], sources: Sources) -> dict[str, Any]:
    """Every setting's value as pydantic would hold it, for the settings the light path can answer."""
    unknown = set(sources) - set(fields)
    if unknown:
        raise _Unsure  # pydantic names the unknown setting and lists the known ones
    values: dict[str, Any] = {}
    for name, spec in fields.items():
        if name in sources:
            checked = _check(spec, sources[name][0])
            if spec.kind != "secret":  # SecretStr needs pydantic: built when first read
                values[name] = checked
        else:
            values[name] = spec.default_value()
    return values


# -- the stand-in --------------------------------------------------------------------------------------------
class LazyConfig:
    """Stands in for ``Config`` until something needs the real model.

    Reads of settings are answered from checked values; anything else (assignment, a method such as
    ``model_dump``, a ``SecretStr``, equality) builds the real ``Config`` from the same sources once, and from
    then on every read and write goes to it, so all holders of this object keep seeing one configuration.
    """

    __slots__ = ("_real", "_sources", "_values")

    def __init__(self, values: dict[str, Any], sources: Sources) -> None:
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_sources", sources)
        object.__setattr__(self, "_real", None)

    def __getattr__(self, name: str) -> Any:
        if name in LazyConfig.__slots__:  # not set yet (e.g. a copy being built): no recursion
            raise AttributeError(name)
        if self._real is None and name in self._values:
            return self._values[name]
        return getattr(self.materialize(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.materialize(), name, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyConfig):
            other = other.materialize()
        return self.materialize() == other

    __hash__ = None  # type: ignore[assignment]  # like Config: mutable, so unhashable

    def __repr__(self) -> str:
        return repr(self.materialize())

    def materialize(self) -> Config:
        """The real pydantic ``Config`` (imports pydantic the first time)."""
        real = self._real
        if real is None:
            from .config import validate_sources

            real = validate_sources(self._sources)
            object.__setattr__(self, "_real", real)
        return real


def real_config(config: Config | LazyConfig) -> Config:
    """The pydantic ``Config`` behind ``config`` (for code that validates it, e.g. a pydantic field)."""
    return config.materialize() if isinstance(config, LazyConfig) else config


def load_startup_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config | LazyConfig:
    """``config.load_config`` for the start-up: a ``LazyConfig`` when every value is plainly valid, else the
    pydantic ``Config`` (or its ``ConfigError``) exactly as ``load_config`` gives it."""
    env = os.environ if env is None else env
    sources = gather_sources(overrides, config_file, env)
    try:
        return LazyConfig(light_values(SETTINGS, sources), sources)
    except _Unsure:
        from .config import validate_sources

        return validate_sources(sources)
