"""Config precedence (defaults < file < environment < flags) and every error path."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyaichat.configuration.config import Config, load_config
from pyaichat.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_any_source() -> None:
    cfg = load_config(env={})
    assert cfg == Config()
    assert cfg.model is None and cfg.max_steps == 8 and cfg.privacy == "sample" and cfg.color


def test_default_file_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    write(tmp_path / "pyaichat" / "config.toml", 'model = "from-file"\n')
    assert load_config(env={}).model == "from-file"


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    cfg_file = write(
        tmp_path / "c.toml", 'model = "file"\nmax_steps = 3\nprivacy = "schema"\napi_base = "http://f"\n'
    )
    env = {"PYAICHAT_CONFIG": str(cfg_file), "PYAICHAT_MODEL": "env", "PYAICHAT_MAX_STEPS": "5"}
    cfg = load_config({"model": "flag", "max_steps": None}, env=env)
    assert cfg.model == "flag"  # flag beats env
    assert cfg.max_steps == 5  # env beats file
    assert cfg.privacy == "schema"  # file beats default
    assert cfg.api_base == "http://f"


def test_explicit_config_flag_beats_env_config_path(tmp_path: Path) -> None:
    a = write(tmp_path / "a.toml", 'model = "a"\n')
    b = write(tmp_path / "b.toml", 'model = "b"\n')
    assert load_config(config_file=b, env={"PYAICHAT_CONFIG": str(a)}).model == "b"


def test_pyaichat_table_and_list_values_from_env(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", '[pyaichat]\nmodel = "ollama/qwen2.5-coder"\nsecret_names = ["pin"]\n')
    cfg = load_config(config_file=f, env={"PYAICHAT_SECRET_PATTERNS": r"acme-\d+, other"})
    assert cfg.model == "ollama/qwen2.5-coder"
    assert cfg.secret_names == ("pin",)
    assert cfg.secret_patterns == (r"acme-\d+", "other")


def test_api_key_is_secret_and_no_color_env() -> None:
    cfg = load_config(env={"PYAICHAT_API_KEY": "sk-test-123", "NO_COLOR": "1"})
    assert cfg.api_key_value == "sk-test-123"
    assert "sk-test-123" not in repr(cfg)
    assert cfg.color is False


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Config file .*nope\.toml does not exist\."):
        load_config(config_file=tmp_path / "nope.toml", env={})


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "bad.toml", "model = \n")
    with pytest.raises(ConfigError, match=r"Config file .*bad\.toml is not valid TOML"):
        load_config(config_file=f, env={})


def test_an_unquoted_text_value_is_told_it_needs_quotes_with_its_line(tmp_path: Path) -> None:
    """The parser says "Invalid value (at line 2, column 9)"; the person is told what to write instead."""
    f = write(tmp_path / "c.toml", "max_steps = 4\nmodel = gpt-4o-mini\n")
    with pytest.raises(ConfigError) as info:
        load_config(config_file=f, env={})
    assert str(info.value) == (
        f"Config file {f}, line 2: text values need quotes: model = gpt-4o-mini should read "
        'model = "gpt-4o-mini".'
    )
    f = write(tmp_path / "d.toml", "color = False\n")
    with pytest.raises(
        ConfigError, match=r"line 1: true and false are written in lowercase: color = false\."
    ):
        load_config(config_file=f, env={})


def test_unknown_key_names_file_and_key(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", 'modle = "gpt"\n')
    with pytest.raises(ConfigError) as info:
        load_config(config_file=f, env={})
    msg = str(info.value)
    assert str(f) in msg and "unknown setting 'modle'" in msg and "model" in msg
    assert info.value.key == "modle"


def test_bad_value_in_file_names_file_key_and_problem(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", 'max_steps = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_config(config_file=f, env={})
    msg = str(info.value)
    assert f"config file {f}" in msg and "max_steps" in msg and "whole number" in msg and "'many'" in msg


def test_bad_value_in_env_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"environment variable PYAICHAT_PRIVACY: privacy should be"):
        load_config(env={"PYAICHAT_PRIVACY": "everything"})


def test_bad_flag_value_names_the_flag() -> None:
    with pytest.raises(ConfigError, match=r"option --max-steps: max_steps should be at least 1"):
        load_config({"max_steps": 0}, env={})


def test_bad_api_key_type_does_not_echo_the_value(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", "api_key = 12345\n")
    with pytest.raises(ConfigError) as info:
        load_config(config_file=f, env={})
    assert "12345" not in str(info.value) and "api_key" in str(info.value)
