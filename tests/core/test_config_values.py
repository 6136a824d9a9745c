"""What ``Config`` accepts, how it words a refusal, and that a configuration never changes once made.

The checks are pyaichat's own (no pydantic at start-up): they take what a person writes in a TOML file, an
environment variable or a flag, and refuse anything else with one sentence naming the source, the setting,
what it should be and what it got.
"""

from __future__ import annotations

import json
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyaichat.configuration.config import Config, Secret, load_config
from pyaichat.configuration.mcp_server_spec import ServerSpec
from pyaichat.configuration.settings import SETTINGS, closest_setting
from pyaichat.errors import ConfigError

FIELDS = list(SETTINGS)


def from_env(name: str, text: str) -> Any:
    return getattr(load_config(env={f"PYAICHAT_{name.upper()}": text}), name)


def env_error(name: str, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(env={f"PYAICHAT_{name.upper()}": text})
    assert info.value.key == name and info.value.source == f"environment variable PYAICHAT_{name.upper()}"
    return str(info.value)


# -- what each kind accepts --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5", 5),
        (" 5 ", 5),
        ("\t7\n", 7),
        ("5.0", 5),
        ("5.00", 5),
        ("1_0", 10),
        ("+5", 5),
        ("05", 5),
        ("100", 100),
    ],
)
def test_a_whole_number_as_a_person_writes_it(text: str, value: int) -> None:
    assert from_env("max_steps", text) == value and type(from_env("max_steps", text)) is int


@pytest.mark.parametrize(
    "text", ["5.1", "5.", "many", " ", "true", "1__0", "_1", "1_", "0x10", "٣", "１", "5e0"]
)
def test_what_is_not_a_whole_number_is_refused_in_one_sentence(text: str) -> None:
    assert env_error("max_steps", text) == (
        f"In environment variable PYAICHAT_MAX_STEPS: max_steps should be a whole number (got {text!r})."
    )


def test_bounds_are_said_in_plain_words() -> None:
    prefix = "In environment variable PYAICHAT_"
    assert env_error("max_steps", "0") == f"{prefix}MAX_STEPS: max_steps should be at least 1 (got '0')."
    assert env_error("max_steps", "500") == f"{prefix}MAX_STEPS: max_steps should be at most 100 (got '500')."
    assert (
        env_error("turn_timeout", "0")
        == f"{prefix}TURN_TIMEOUT: turn_timeout should be more than 0 (got '0')."
    )
    assert env_error("max_output_chars", "1e9") == (
        f"{prefix}MAX_OUTPUT_CHARS: max_output_chars should be a whole number (got '1e9')."
    )
    assert env_error("max_output_chars", "300000") == (
        f"{prefix}MAX_OUTPUT_CHARS: max_output_chars should be at most 200,000 (got '300000')."
    )
    assert (
        env_error("temperature", "2.5")
        == f"{prefix}TEMPERATURE: temperature should be at most 2 (got '2.5')."
    )


@pytest.mark.parametrize(("text", "value"), [("1.5", 1.5), (" 2 ", 2.0), ("1e3", 1000.0), ("1_000", 1000.0)])
def test_a_number(text: str, value: float) -> None:
    got = from_env("turn_timeout", text)
    assert got == value and type(got) is float


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "fast", " ", "1,5"])
def test_what_is_not_a_number_is_refused(text: str) -> None:
    assert "turn_timeout should be a number" in env_error("turn_timeout", text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("yes", True), ("On", True), ("1", True), ("true", True), (" off ", False), ("NO", False), ("0", False)],
)
def test_a_switch(text: str, value: bool) -> None:
    assert from_env("audit", text) is value


def test_what_is_not_a_switch_is_refused() -> None:
    assert env_error("audit", "maybe") == (
        "In environment variable PYAICHAT_AUDIT: audit should be true or false (or yes/no, on/off, 1/0) "
        "(got 'maybe')."
    )


def test_a_choice_is_one_of_its_words_exactly() -> None:
    assert from_env("privacy", "schema") == "schema"
    assert env_error("privacy", "Full") == (
        "In environment variable PYAICHAT_PRIVACY: privacy should be 'names', 'schema', 'sample' or 'full' "
        "(got 'Full')."
    )


def test_lists_from_the_environment_and_from_a_file(tmp_path: Path) -> None:
    assert from_env("secret_names", " acct_* , ,pin ") == ("acct_*", "pin")
    path = tmp_path / "config.toml"
    path.write_text('secret_patterns = ["CUST-\\\\d+"]\n')
    assert load_config(config_file=path, env={}).secret_patterns == (r"CUST-\d+",)
    path.write_text('secret_patterns = "CUST"\n')
    with pytest.raises(ConfigError, match=r"secret_patterns should be a list of strings \(got 'CUST'\)"):
        load_config(config_file=path, env={})
    path.write_text("secret_names = [1]\n")
    with pytest.raises(ConfigError, match=r"secret_names should be a list of strings \(got \[1\]\)"):
        load_config(config_file=path, env={})


def test_values_of_the_wrong_type_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    for line, said in [
        ("model = 5", "model should be text (got 5)"),
        ("max_steps = true", "max_steps should be a whole number (got True)"),
        ("max_steps = 2.5", "max_steps should be a whole number (got 2.5)"),
        ("turn_timeout = false", "turn_timeout should be a number (got False)"),
        ("audit = 2", "audit should be true or false (or yes/no, on/off, 1/0) (got 2)"),
        ("color = 1979-05-27", "color should be true or false"),
    ]:
        path.write_text(line + "\n")
        with pytest.raises(ConfigError) as info:
            load_config(config_file=path, env={})
        assert str(info.value).startswith(f"In config file {path}: {said}"), line
    path.write_text("max_steps = 4.0\nturn_timeout = 30\naudit = 0\n")
    cfg = load_config(config_file=path, env={})
    assert (cfg.max_steps, cfg.turn_timeout, cfg.audit) == (4, 30.0, False)


def test_an_unknown_setting_names_the_closest_one(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("max_step = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(config_file=path, env={})
    assert (
        str(info.value) == f"In config file {path}: unknown setting 'max_step' (did you mean 'max_steps'?)."
    )
    path.write_text("zzzz = 3\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'zzzz' \(known settings: model, api_base, "):
        load_config(config_file=path, env={})
    assert closest_setting("colour") == "color" and closest_setting("MODEL") == "model"


def test_an_unknown_variable_is_said_in_one_line_and_the_rest_applies() -> None:
    said: list[str] = []
    env = {"PYAICHAT_MAX_STEP": "3", "PYAICHAT_MODEL": "openai/x", "PYAICHAT_CONFIG": "", "PYAICHAT_ZZZ": "1"}
    cfg = load_config(env=env, warn=said.append)
    assert cfg.max_steps == 8 and cfg.model == "openai/x"
    assert said == [
        "PYAICHAT_MAX_STEP is not a setting and is ignored (did you mean PYAICHAT_MAX_STEPS?)",
        "PYAICHAT_ZZZ is not a setting and is ignored (see the settings in the README)",
    ]


# -- every source checks the same way ------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(FIELDS),
    text=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
    | st.sampled_from(["5", " 5 ", "5.0", "1_0", "yes", "off", "2", "1e3", "nan", "schema", "Full", "fork"]),
)
def test_a_value_means_the_same_from_the_environment_and_from_a_file(name: str, text: str) -> None:
    """The same text set by a variable or written as a TOML string is the same value, or the same refusal
    (but for where it came from). Lists are written differently in the two, so they are left out."""
    if SETTINGS[name].kind in ("strlist", "servers"):  # tables neither (tests/mcptools/test_mcp_config.py)
        return
    env = {f"PYAICHAT_{name.upper()}": text}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.toml"
        path.write_text(f"{name} = {json.dumps(text, ensure_ascii=False)}\n", encoding="utf-8")
        results = []
        for kwargs in ({"env": env}, {"config_file": path, "env": {}}):
            try:
                results.append(("ok", getattr(load_config(**kwargs), name)))
            except ConfigError as exc:
                results.append(("error", str(exc).split(": ", 1)[1]))
        if text == "":
            return  # an empty variable is not set at all, an empty string in a file is a value
        assert results[0] == results[1]


@settings(max_examples=200, deadline=None)
@given(
    values=st.fixed_dictionaries(
        {},
        optional={
            "model": st.text(max_size=5),
            "max_steps": st.integers(1, 100),
            "turn_timeout": st.floats(0.001, 3600),
            "privacy": st.sampled_from(["names", "schema", "sample", "full"]),
            "secret_names": st.lists(st.text(max_size=3), max_size=2),
            "audit": st.booleans(),
        },
    )
)
def test_every_accepted_value_is_kept_as_given_and_survives_replace(values: dict[str, Any]) -> None:
    cfg = Config(**values)
    for name, value in values.items():
        assert getattr(cfg, name) == (tuple(value) if isinstance(value, list) else value)
    assert Config(**cfg.values()) == cfg and cfg.replace() == cfg and hash(cfg.replace()) == hash(cfg)


# -- the class itself ----------------------------------------------------------------------------------------
def test_a_config_never_changes_and_replace_checks_its_values() -> None:
    cfg = Config(model="a")
    with pytest.raises(AttributeError, match=r"use config.replace\(model=...\)"):
        cfg.model = "openai/other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del cfg.model
    other = cfg.replace(model="openai/other", max_steps="5")  # /model x; the same coercions as a file
    assert (other.model, other.max_steps) == ("openai/other", 5) and cfg.model == "a" and cfg.max_steps == 8
    with pytest.raises(ConfigError) as info:
        cfg.replace(max_steps="zero")
    assert str(info.value) == "max_steps should be a whole number (got 'zero')."
    assert info.value.key == "max_steps" and cfg.max_steps == 8
    with pytest.raises(ValueError, match="at least 1"):  # a ConfigError is a ValueError too
        Config(max_steps=0)
    with pytest.raises(ConfigError, match=r"unknown setting 'colour' \(did you mean 'color'\?\)"):
        cfg.replace(colour=False)


def test_the_api_key_never_shows_and_configs_compare_by_value() -> None:
    cfg = Config(api_key="sk-live-123456", secret_names=["pin"])
    assert cfg.api_key_value == "sk-live-123456" and isinstance(cfg.api_key, Secret)
    assert "sk-live" not in repr(cfg) and "sk-live" not in str(cfg.api_key) and "api_key=Secret(" in repr(cfg)
    with pytest.raises(ConfigError) as info:
        Config(api_key=123456)
    assert "123456" not in str(info.value) and "api_key" in str(info.value)
    assert cfg == Config(api_key="sk-live-123456", secret_names=("pin",))
    assert cfg != Config(api_key="sk-other", secret_names=["pin"]) and cfg != Config()
    changed = cfg.replace(privacy="schema")
    assert changed.privacy == "schema" and cfg.privacy == "sample" and changed.api_key == cfg.api_key
    assert {cfg: 1}[Config(api_key="sk-live-123456", secret_names=["pin"])] == 1  # hashable, by value


def test_defaults_come_from_the_table_and_lists_are_tuples() -> None:
    a = Config()
    assert a.values() == {name: setting.default_value() for name, setting in SETTINGS.items()}
    assert a.secret_names == () and Config(secret_names=["pin"]).secret_names == ("pin",)


def annotation_kind(annotation: Any) -> tuple[str, tuple[str, ...], bool]:
    """(kind in the table's terms, choices, optional) of a ``Config`` annotation."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        (annotation,) = [arg for arg in args if arg is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return "choice", typing.get_args(annotation), optional
    kinds = {
        str: "str",
        int: "int",
        float: "float",
        bool: "bool",
        Secret: "secret",
        tuple[str, ...]: "strlist",
        tuple[ServerSpec, ...]: "servers",
        tuple[tuple[str, str], ...]: "rules",
    }
    return kinds.get(annotation, repr(annotation)), (), optional


def test_the_annotations_say_what_the_table_says() -> None:
    """``Config`` spells out each setting's type for readers and type checkers; the table decides the rest.
    Both name the same settings in the same order (``SETTINGS`` lists them in it)."""
    hints = typing.get_type_hints(Config, localns={"ServerSpec": ServerSpec})
    assert list(hints) == FIELDS
    for name, setting in SETTINGS.items():
        optional = setting.default is None
        assert annotation_kind(hints[name]) == (setting.kind, setting.choices, optional), name
        default = setting.default_value()
        if default is not None:  # a default is never checked: the table's must be values the setting takes
            assert getattr(Config(**{name: default}), name) == default, name
