"""The start-up's pydantic-free configuration path against the pydantic one (issue 14).

``load_startup_config`` must give exactly what ``load_config`` gives for every mix of file, environment and
flags: the same values, or the same ``ConfigError`` sentence. It may only be faster, never different.
"""

from __future__ import annotations

import json
import math
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from pydantic_core import PydanticUndefined

from pyaichat.config import Config, load_config
from pyaichat.config_light import LazyConfig, load_startup_config, real_config
from pyaichat.errors import ConfigError
from pyaichat.settings import SETTINGS

FIELDS = list(Config.model_fields)
TRICKY_STRINGS = [
    *("0", "1", "5", "8", "-3", "100", "101", "200", "4000", "05", "+5", " 5", "5 ", "1_000", "１"),
    *("1.5", "2.0", "0.0", "-1.5", "1e3", ".5", "5.", "nan", "inf", "3600", "3600.5"),
    *("true", "False", "TRUE", "yes", "off", "on", "t", "n", "2", "", " "),
    *("names", "schema", "sample", "full", "Full", "emacs", "vi", "auto", "native", "text", "fork"),
    *("inprocess", "gpt-4o-mini", "a,b", " a , ,b ", "sk-secret"),
]
scalars = st.one_of(
    st.sampled_from(TRICKY_STRINGS),
    st.text(max_size=6),
    st.integers(min_value=-5, max_value=300_000),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=5000),
    st.booleans(),
)
toml_values = st.one_of(
    scalars, st.lists(st.one_of(st.sampled_from(TRICKY_STRINGS), st.integers()), max_size=3)
)
env_values = st.one_of(st.sampled_from(TRICKY_STRINGS), st.text(max_size=6))
names = st.sampled_from([*FIELDS, "modle", "colour"])


def toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "nan"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def observed(cfg: Config | LazyConfig) -> dict[str, Any]:
    """Every setting as a caller reads it (a secret by its value)."""
    values = {name: getattr(cfg, name) for name in FIELDS if name != "api_key"}
    values["api_key"] = cfg.api_key_value
    return values


def outcome(loader: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        cfg = loader(**kwargs)
    except ConfigError as exc:
        return "error", (str(exc), exc.source, exc.key)
    return "ok", observed(cfg)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    file_values=st.dictionaries(names, toml_values, max_size=4),
    env_values=st.dictionaries(st.sampled_from([*FIELDS, "config"]), env_values, max_size=4),
    flags=st.fixed_dictionaries(
        {},
        optional={
            "model": st.sampled_from(["gpt", "openai/x", ""]),
            "api_base": st.sampled_from(["http://127.0.0.1:1/v1"]),
            "max_steps": st.integers(min_value=-1, max_value=120),
            "color": st.just(False),
        },
    ),
    no_color=st.booleans(),
    use_file=st.booleans(),
)
def test_light_path_gives_what_pydantic_gives(
    file_values: dict[str, Any],
    env_values: dict[str, str],
    flags: dict[str, Any],
    no_color: bool,
    use_file: bool,
) -> None:
    env = {f"PYAICHAT_{name.upper()}": value for name, value in env_values.items() if name != "config"}
    if no_color:
        env["NO_COLOR"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        config_file = None
        if use_file:
            path = Path(tmp) / "config.toml"
            path.write_text("".join(f"{key} = {toml(value)}\n" for key, value in file_values.items()))
            config_file = str(path)
        kwargs = {"overrides": flags, "config_file": config_file, "env": env}
        assert outcome(load_startup_config, **kwargs) == outcome(load_config, **kwargs)


TOML_SCALARS = [0, 1, 5, 100, 101, 200, -1, 0.0, 0.5, 2.0, 3600.0, 1e9, True, False, "x", "5", [], ["a"], [1]]


@pytest.mark.parametrize("name", FIELDS)
def test_every_field_with_every_tricky_value_agrees(name: str, tmp_path: Path) -> None:
    """Exhaustive over the grid that matters most: each setting, each tricky string from the environment
    and each kind of TOML value from a file."""
    for text in TRICKY_STRINGS:
        kwargs = {"env": {f"PYAICHAT_{name.upper()}": text}}
        assert outcome(load_startup_config, **kwargs) == outcome(load_config, **kwargs), (name, text)
    path = tmp_path / "config.toml"
    for value in TOML_SCALARS:
        path.write_text(f"{name} = {toml(value)}\n")
        kwargs = {"config_file": str(path), "env": {}}
        assert outcome(load_startup_config, **kwargs) == outcome(load_config, **kwargs), (name, value)


def test_plain_values_stay_light_and_agree_after_the_real_model_is_built() -> None:
    env = {"PYAICHAT_MODEL": "openai/x", "PYAICHAT_TOOL_TIMEOUT": "2.5", "PYAICHAT_SECRET_NAMES": "pin, otp"}
    cfg = load_startup_config({"max_steps": 3}, env=env)
    assert isinstance(cfg, LazyConfig)
    assert (cfg.model, cfg.tool_timeout, cfg.max_steps, cfg.secret_names) == (
        "openai/x",
        2.5,
        3,
        ["pin", "otp"],
    )
    real = real_config(cfg)
    assert isinstance(real, Config) and real == load_config({"max_steps": 3}, env=env) and cfg == real
    cfg.model = "other"  # writes go to the one real model, validated as before
    assert real.model == "other" and cfg.model == "other"
    with pytest.raises(ValueError):
        cfg.max_steps = 0


def test_a_value_the_light_path_cannot_vouch_for_goes_to_pydantic() -> None:
    assert isinstance(load_startup_config(env={"PYAICHAT_MAX_STEPS": "05"}), Config)
    with pytest.raises(ConfigError, match="PYAICHAT_PRIVACY: privacy input should be"):
        load_startup_config(env={"PYAICHAT_PRIVACY": "everything"})


def annotation_kind(annotation: Any) -> tuple[str, tuple[str, ...], bool]:
    """(kind in the table's terms, choices, optional) of a ``Config`` annotation."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        (annotation,) = [arg for arg in args if arg is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return "choice", typing.get_args(annotation), optional
    kinds = {str: "str", int: "int", float: "float", bool: "bool", SecretStr: "secret", list[str]: "strlist"}
    return kinds.get(annotation, repr(annotation)), (), optional


def test_the_settings_table_and_config_agree_on_every_setting() -> None:
    """``Config`` spells out the types, the table everything else: both must describe the same settings, in
    the same order (``describe_settings`` lists them in it)."""
    assert list(SETTINGS) == list(Config.model_fields)
    for name, setting in SETTINGS.items():
        field = Config.model_fields[name]
        optional = setting.default is None and setting.factory is None
        assert annotation_kind(field.annotation) == (setting.kind, setting.choices, optional), name
        assert field.default_factory is setting.factory, name
        if setting.factory is None:
            assert field.default == setting.default and type(field.default) is type(setting.default), name
        else:
            assert field.default is PydanticUndefined and setting.factory() == [], name
        constraints = {}
        for item in field.metadata:  # Ge(ge=1) -> "ge": 1; any other constraint shows up as itself
            key = type(item).__name__.lower()
            constraints[key] = getattr(item, key, item)
        assert constraints == setting.bounds, name  # and nothing else: the light path checks only these
        assert field.description == setting.description, name
        assert field.alias is None and field.validation_alias is None, name
        default = setting.default_value()
        if default is not None:  # pydantic does not validate defaults: the table's must be valid values
            validated = getattr(Config.model_validate({name: default}), name)
            assert validated == default and type(validated) is type(default), name


def test_config_changes_no_value_beyond_what_the_table_says() -> None:
    """The light path checks a value by its setting's kind, choices and bounds alone; a validator or a
    coercion option (``strict``, ``str_strip_whitespace``, ...) on ``Config`` would make the two disagree."""
    decorators = Config.__pydantic_decorators__
    assert not (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
    )
    assert dict(Config.model_config) == {"extra": "forbid", "validate_assignment": True, "defer_build": True}
