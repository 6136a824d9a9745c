"""Where settings come from (config file < ``PYAICHAT_*`` environment < command-line flags).

``config.load_config`` merges these sources and checks the result. The variables to read and which of them are
lists come from the settings table (``settings.py``). Each value travels with the place it came from, so an
error can name the file and key, the variable or the flag.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..paths import default_config_file, default_config_location
from .settings import LIST_SETTINGS, SETTINGS, closest_setting

if TYPE_CHECKING:
    from pathlib import Path

ENV_PREFIX = "PYAICHAT_"
# Variables of ours that are not settings: the config file's path.
OTHER_VARIABLES = frozenset({ENV_PREFIX + "CONFIG"})

Sources = dict[str, tuple[Any, str]]
"""setting name -> (raw value, where it came from), later sources already applied over earlier ones."""


_BARE_WORD = r"[^\s\"'\[{#=][^#\n]*"  # a value that is none of TOML's: no quote, bracket or brace


def _toml_sentence(path: Path, error: str) -> str:
    """The sentence for a file TOML cannot read. The parser's "Invalid value (at line 1, column 9)" for
    ``model = gpt-4o-mini`` becomes "line 1: text values need quotes", with the line as it should read."""
    import re  # only for a broken config file

    where = re.search(r"at line (\d+), column (\d+)", error)
    if where is not None and error.startswith("Invalid value"):
        number, column = int(where.group(1)), int(where.group(2))
        try:
            line = path.read_text(encoding="utf-8", errors="replace").splitlines()[number - 1]
        except (OSError, IndexError):
            line = ""
        key, _, value = line.partition("=")
        value = value.strip()
        if key.strip() and re.fullmatch(_BARE_WORD, value) and column > len(key):
            if value.lower() in ("true", "false"):
                return (
                    f"Config file {path}, line {number}: true and false are written in lowercase: "
                    f"{key.strip()} = {value.lower()}."
                )
            fixed = f'{key.strip()} = "{value.rstrip()}"'
            return (
                f"Config file {path}, line {number}: text values need quotes: {line.strip()} should read "
                f"{fixed}."
            )
    return f"Config file {path} is not valid TOML: {error}."


def read_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib  # only with a config file: not at every start-up
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]  # the backport on Python 3.10 only
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"Config file {path} does not exist.", source=str(path))
    except OSError as exc:
        raise ConfigError(f"Config file {path} cannot be read: {exc.strerror}.", source=str(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_toml_sentence(path, str(exc)), source=str(path)) from None
    # Accept both a flat file and one with a [pyaichat] table.
    if isinstance(data.get("pyaichat"), dict):
        data = {**{k: v for k, v in data.items() if k != "pyaichat"}, **data["pyaichat"]}
    return data


def env_layer(env: Mapping[str, str]) -> Sources:
    """``PYAICHAT_<NAME>`` for every setting (comma-separated for lists); ``NO_COLOR``."""
    layer: Sources = {}
    for name in SETTINGS:
        var = ENV_PREFIX + name.upper()
        if var in env and env[var] != "":
            raw: Any = env[var]
            if name in LIST_SETTINGS:
                raw = tuple(part.strip() for part in raw.split(",") if part.strip())
            layer[name] = (raw, f"environment variable {var}")
    if "color" not in layer and env.get("NO_COLOR"):
        layer["color"] = (False, "environment variable NO_COLOR")
    return layer


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One sentence for each ``PYAICHAT_*`` variable that names no setting (a typo would otherwise be
    ignored without a word), naming the closest setting's variable."""
    known = {ENV_PREFIX + name.upper() for name in SETTINGS} | OTHER_VARIABLES
    sentences = []
    for var in sorted(env):
        if not var.startswith(ENV_PREFIX) or var in known:
            continue
        near = closest_setting(var[len(ENV_PREFIX) :])
        hint = f"did you mean {ENV_PREFIX}{near.upper()}?" if near else "see the settings in the README"
        sentences.append(f"{var} is not a setting and is ignored ({hint})")
    return sentences


def config_file_path(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """The config file to read and whether the user named it (then it must exist)."""
    from pathlib import Path  # only with a config file: not at every start-up

    if explicit:
        return Path(explicit).expanduser(), True
    if env.get(ENV_PREFIX + "CONFIG"):
        return Path(env[ENV_PREFIX + "CONFIG"]).expanduser(), True
    return default_config_file(), False


def gather_sources(
    overrides: Mapping[str, Any] | None,
    config_file: str | os.PathLike[str] | None,
    env: Mapping[str, str],
) -> Sources:
    """Every value the user gave, with its origin; ``overrides`` are flags (``None`` means "not given")."""
    sources: Sources = {}
    if config_file or env.get(ENV_PREFIX + "CONFIG") or os.path.isfile(default_config_location()):
        path, required = config_file_path(config_file, env)
        if required or path.is_file():
            for key, value in read_toml(path).items():
                sources[key] = (value, f"config file {path}")
    sources.update(env_layer(env))
    for key, value in (overrides or {}).items():
        if value is not None:
            sources[key] = (value, f"option --{key.replace('_', '-')}")
    return sources
