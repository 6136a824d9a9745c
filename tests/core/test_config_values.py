"""What ``Config`` accepts and how it words a refusal, checked against the reference it replaced.

pyaichat's configuration was a pydantic model until ``Config`` became a plain class checked by the settings
table. Users have seen pydantic's lax coercions ("5" for a number, "yes" for a switch) and its wording in the
one-line start-up errors (the README quotes one), so the reference below — the model as it was, built from the
same table — must agree with ``load_config`` on every mix of file, environment and flags: the same values, or
the same ``ConfigError`` sentence.
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
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, create_model

from pyaichat.config import Config, Secret, load_config
from pyaichat.config_sources import gather_sources
from pyaichat.errors import ConfigError
from pyaichat.mcptools.spec import ServerSpec
from pyaichat.settings import SETTINGS

# The reference below is a pydantic model of the scalar settings; the MCP server tables (kind "servers") have
# their own tests (tests/mcptools/test_mcp_config.py).
FIELDS = [name for name, setting in SETTINGS.items() if setting.kind != "servers"]


# -- the reference: the pydantic model and its error sentence, as they were ----------------------------------
def _annotation(name: str) -> Any:
    setting = SETTINGS[name]
    kinds = {"str": str, "secret": SecretStr, "int": int, "float": float, "bool": bool, "strlist": list[str]}
    base = Literal[setting.choices] if setting.kind == "choice" else kinds[setting.kind]
    return base | None if setting.default is None and setting.factory is None else base


def _field(name: str) -> Any:
    setting = SETTINGS[name]
    if setting.factory is not None:
        return Field(default_factory=setting.factory, **setting.bounds)
    return Field(setting.default, **setting.bounds)


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")


Reference = create_model(  # type: ignore[call-overload]
    "Reference", __base__=_Base, **{name: (_annotation(name), _field(name)) for name in FIELDS}
)


def reference_load(overrides: Any, config_file: str | None, env: dict[str, str]) -> dict[str, Any]:
    sources = gather_sources(overrides, config_file, env)
    try:
        model = Reference.model_validate({k: v for k, (v, _) in sources.items()})
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0])
        value, where = sources[key]
        if err["type"] == "extra_forbidden":
            known = ", ".join(SETTINGS)
            message = f"In {where}: unknown setting {key!r} (known settings: {known})."
        else:
            shown = "" if key == "api_key" else f" (got {value!r})"
            message = f"In {where}: {key} {err['msg'][:1].lower()}{err['msg'][1:]}{shown}."
        raise ConfigError(message, source=where, key=key) from None
    values = {name: getattr(model, name) for name in FIELDS if name != "api_key"}
    values["api_key"] = model.api_key.get_secret_value() if model.api_key else None
    return values


def observed(cfg: Config) -> dict[str, Any]:
    values = {name: getattr(cfg, name) for name in FIELDS if name != "api_key"}
    values["api_key"] = cfg.api_key_value
    return values


def outcome(loader: Any, overrides: Any = None, config_file: str | None = None, env: Any = None) -> Any:
    try:
        values = loader(overrides, config_file=config_file, env=env or {})
    except ConfigError as exc:
        return "error", (str(exc), exc.source, exc.key)
    values = observed(values) if isinstance(values, Config) else values
    # NaN never equals itself: compare it by name; a float's sign and type are part of the value
    return "ok", {
        k: ("nan" if isinstance(v, float) and math.isnan(v) else (type(v), v)) for k, v in values.items()
    }


def ours(overrides: Any, *, config_file: str | None, env: dict[str, str]) -> Config:
    return load_config(overrides, config_file=config_file, env=env)


def reference(overrides: Any, *, config_file: str | None, env: dict[str, str]) -> dict[str, Any]:
    return reference_load(overrides, config_file, env)


# -- agreement with the reference ----------------------------------------------------------------------------
TRICKY_STRINGS = [
    *("0", "1", "5", "8", "-3", "100", "101", "200", "4000", "05", "+5", " 5", "5 ", "1_000", "１", "٣"),
    *("1.5", "2.0", "0.0", "-1.5", "1e3", ".5", "5.", "nan", "inf", "-inf", "Infinity", "3600", "3600.5"),
    *(
        "5.00",
        "5.10",
        "5_0.0",
        "1_.5",
        "in_f",
        "_1",
        "1_",
        "1__0",
        "+_1",
        "0x10",
        "\u00a05",
        "\x1c5",
        "\t7\n",
    ),
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
def test_every_mix_of_sources_gives_what_the_reference_gives(
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
        assert outcome(ours, **kwargs) == outcome(reference, **kwargs)


TOML_SCALARS = [
    0,
    1,
    5,
    100,
    101,
    200,
    -1,
    0.0,
    0.5,
    2.0,
    3600.0,
    1e9,
    1e20,
    True,
    False,
    "x",
    "5",
    [],
    ["a"],
    [1],
]


@pytest.mark.parametrize("name", FIELDS)
def test_every_setting_with_every_tricky_value_agrees(name: str, tmp_path: Path) -> None:
    """Exhaustive over the grid that matters most: each setting, each tricky string from the environment and
    each kind of TOML value from a file (TOML dates included)."""
    for text in TRICKY_STRINGS:
        kwargs = {"env": {f"PYAICHAT_{name.upper()}": text}}
        assert outcome(ours, **kwargs) == outcome(reference, **kwargs), (name, text)
    path = tmp_path / "config.toml"
    for value in [*map(toml, TOML_SCALARS), "1979-05-27", "07:32:00", "{ a = 1 }"]:
        path.write_text(f"{name} = {value}\n")
        kwargs = {"config_file": str(path)}
        assert outcome(ours, **kwargs) == outcome(reference, **kwargs), (name, value)


# -- the class itself ----------------------------------------------------------------------------------------
def test_assignment_is_checked_and_a_refused_value_changes_nothing() -> None:
    cfg = Config(model="a")
    cfg.model = "openai/other"  # /model x
    cfg.max_steps = "5"  # the same coercions as a file or variable
    assert (cfg.model, cfg.max_steps) == ("openai/other", 5)
    with pytest.raises(ConfigError) as info:
        cfg.max_steps = "zero"
    assert str(info.value) == (
        "max_steps input should be a valid integer, unable to parse string as an integer (got 'zero')."
    )
    assert info.value.key == "max_steps" and cfg.max_steps == 5
    with pytest.raises(ValueError, match="greater than or equal to 1"):  # a ConfigError is a ValueError too
        Config(max_steps=0)
    with pytest.raises(ConfigError, match=r"unknown setting 'colour' \(known settings: model, api_base"):
        cfg.colour = False  # type: ignore[attr-defined]


def test_the_api_key_never_shows_and_configs_compare_by_value() -> None:
    cfg = Config(api_key="sk-live-123456", secret_names=["pin"])
    assert cfg.api_key_value == "sk-live-123456" and isinstance(cfg.api_key, Secret)
    assert "sk-live" not in repr(cfg) and "sk-live" not in str(cfg.api_key) and "api_key=Secret(" in repr(cfg)
    with pytest.raises(ConfigError) as info:
        Config(api_key=123456)
    assert "123456" not in str(info.value) and "api_key" in str(info.value)
    assert cfg == Config(api_key="sk-live-123456", secret_names=["pin"])
    assert cfg != Config(api_key="sk-other", secret_names=["pin"]) and cfg != Config()
    changed = cfg.replace(privacy="schema")
    assert changed.privacy == "schema" and cfg.privacy == "sample" and changed.api_key == cfg.api_key
    with pytest.raises(TypeError):
        hash(cfg)


def test_defaults_come_from_the_table_and_lists_are_not_shared() -> None:
    a, b = Config(), Config()
    assert a.values() == {name: setting.default_value() for name, setting in SETTINGS.items()}
    a.secret_names.append("pin")
    assert b.secret_names == []


def annotation_kind(annotation: Any) -> tuple[str, tuple[str, ...], bool]:
    """(kind in the table's terms, choices, optional) of a ``Config`` annotation."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        (annotation,) = [arg for arg in args if arg is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return "choice", typing.get_args(annotation), optional
    kinds = {str: "str", int: "int", float: "float", bool: "bool", Secret: "secret", list[str]: "strlist"}
    kinds[tuple[ServerSpec, ...]] = "servers"
    return kinds.get(annotation, repr(annotation)), (), optional


def test_the_annotations_say_what_the_table_says() -> None:
    """``Config`` spells out each setting's type for readers and type checkers; the table decides the rest.
    Both name the same settings in the same order (``describe_settings`` lists them in it)."""
    hints = typing.get_type_hints(Config, localns={"ServerSpec": ServerSpec})
    assert list(hints) == list(SETTINGS)
    for name, setting in SETTINGS.items():
        optional = setting.default is None and setting.factory is None
        assert annotation_kind(hints[name]) == (setting.kind, setting.choices, optional), name
        default = setting.default_value()
        if default is not None:  # a default is never checked: the table's must be values the setting takes
            assert getattr(Config(**{name: default}), name) == default, name
