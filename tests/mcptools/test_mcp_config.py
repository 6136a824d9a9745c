"""MCP server entries as users write them: ``[mcp_servers.NAME]`` tables and the ``mcpServers`` JSON of Claude
Desktop, Cursor and VS Code, pasted as they are; mistakes are one sentence; secrets never show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyaichat.configuration.config import Config, Secret, load_config
from pyaichat.configuration.mcp_server_spec import ServerSpec
from pyaichat.configuration.mcp_servers import (
    EntryError,
    merged,
    read_json_file,
    servers_from_json,
    servers_from_table,
)
from pyaichat.errors import ConfigError
from pyaichat.mcptools.launch import launch, worth_masking

TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ann/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": [
                "run",
                "-i",
                "--rm",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN",
                "ghcr.io/github/github-mcp-server",
            ],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN},
        },
    }
}
CURSOR = {
    "mcpServers": {
        "linear": {
            "url": "https://mcp.linear.app/mcp",
            "headers": {"Authorization": "Bearer ${env:LINEAR_KEY}"},
        },
        "time": {"command": "uvx", "args": ["mcp-server-time"], "autoApprove": ["get_current_time"]},
    }
}
VSCODE = {
    "inputs": [{"type": "promptString", "id": "pg-password", "password": True}],
    "servers": {
        "pg": {
            "type": "stdio",
            "command": "postgres-mcp",
            "env": {"PGPASSWORD": "${input:pg-password}", "PGDATA": "${workspaceFolder}/db"},
        },
        "remote": {"type": "http", "url": "https://example.org/mcp"},
        "legacy": {"type": "sse", "url": "https://example.org/sse"},
    },
}


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_tables_in_the_config_file_become_servers_whose_values_are_secrets(tmp_path: Path) -> None:
    path = write_toml(
        tmp_path,
        f"""
model = "openai/x"
[mcp_servers.git]
command = "mcp-server-git"
args = ["--repository", "/srv/repo"]
trust = "read-only"
[mcp_servers.github]
command = "github-mcp"
env = {{ GITHUB_TOKEN = "{TOKEN}" }}
cwd = "~/work"
[mcp_servers.tracker]
url = "https://tracker.example.org/mcp"
headers = {{ Authorization = "Bearer {TOKEN}" }}
call_timeout = 5
""",
    )
    cfg = load_config(config_file=path, env={})
    git, github, tracker = cfg.mcp_servers
    assert (git.name, git.command, git.args, git.trust, git.read_only) == (
        "git",
        "mcp-server-git",
        ("--repository", "/srv/repo"),
        "read-only",
        True,
    )
    assert github.env == (("GITHUB_TOKEN", Secret(TOKEN)),) and not github.read_only
    assert tracker.url == "https://tracker.example.org/mcp" and tracker.call_timeout == 5.0
    shown = repr(cfg) + repr(cfg.mcp_servers) + str(cfg.mcp_servers)
    assert TOKEN not in shown and "GITHUB_TOKEN" in shown
    assert cfg == load_config(config_file=path, env={})  # the same file, the same configuration
    assert cfg.replace(model="openai/y").mcp_servers == cfg.mcp_servers  # /model keeps the servers


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (
            'trusted = true\ncommand = "x"',
            "entry 'git' has an unknown key 'trusted' (known keys: command, args",
        ),
        ('command = "x"\nurl = "http://h/mcp"', "give a command (a server to start) or a url"),
        ('command = "x"\ntrust = "yes"', "trust should be 'ask' or 'read-only' (got 'yes')"),
        ('command = "x"\nargs = "--repository"', "args should be a list of strings"),
        ('command = "x"\nenv = { TOKEN = true }', "env.TOKEN should be a string"),
        ('command = "x"\nstart_timeout = -1', "start_timeout should be a number of seconds"),
        ('type = "stdio"', "a type needs a command or a url"),
        ('url = "http://h/mcp"\ntype = "websocket"', "type should be one of stdio, http, sse"),
    ],
)
def test_a_mistake_in_a_table_is_one_sentence_naming_the_file_and_never_a_value(
    tmp_path: Path, entry: str, reason: str
) -> None:
    path = write_toml(tmp_path, f"[mcp_servers.git]\n{entry}\n")
    with pytest.raises(ConfigError) as info:
        load_config(config_file=path, env={})
    message = str(info.value)
    assert message.startswith(f"In config file {path}: mcp_servers ") and reason in message, message
    assert message.count("\n") == 0 and info.value.key == "mcp_servers"
    assert "(got {" not in message  # the tables themselves (with their secrets) are never echoed


def test_a_table_of_the_wrong_shape_and_the_environment_variable_are_refused(tmp_path: Path) -> None:
    path = write_toml(tmp_path, 'mcp_servers = "git"\n')
    with pytest.raises(
        ConfigError, match=r"mcp_servers input should be a table of servers, one \[mcp_servers"
    ):
        load_config(config_file=path, env={})
    with pytest.raises(ConfigError, match="In environment variable PYAICHAT_MCP_SERVERS: mcp_servers input"):
        load_config(env={"PYAICHAT_MCP_SERVERS": "git"})


def test_claude_desktop_cursor_and_vscode_files_are_taken_as_they_are(tmp_path: Path) -> None:
    for name, data in (("claude", CLAUDE_DESKTOP), ("cursor", CURSOR), ("vscode", VSCODE)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    fs, github = read_json_file(str(tmp_path / "claude.json"))
    assert (fs.transport, fs.command, fs.args[-1]) == ("stdio", "npx", "/Users/ann/Desktop")
    assert github.env == (("GITHUB_PERSONAL_ACCESS_TOKEN", Secret(TOKEN)),)
    linear, time_server = read_json_file(str(tmp_path / "cursor.json"))
    assert (linear.transport, linear.url) == ("http", "https://mcp.linear.app/mcp")
    assert (
        time_server.trust is None and not time_server.read_only
    )  # another client's autoApprove grants nothing
    pg, remote, legacy = read_json_file(str(tmp_path / "vscode.json"))
    assert (pg.transport, remote.transport, legacy.transport) == ("stdio", "http", "sse")
    settings = {"mcp": {"servers": {"x": {"command": "x"}}}}  # VS Code's settings.json form
    assert [s.name for s in servers_from_json(settings, origin="settings.json")] == ["x"]
    cline = {"mcpServers": {"off": {"command": "x", "disabled": True, "timeout": 30}}}
    (off,) = servers_from_json(cline, origin="cline.json")
    assert off.enabled is False and off.call_timeout == 30.0


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "does not exist"),
        ("{not json", "is not valid JSON"),
        ('{"tools": {}}', 'no "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code) object in it'),
        (
            '{"mcpServers": {"x": {"args": []}}}',
            "server 'x': it needs a command (a server to start) or a url",
        ),
        ('{"mcpServers": {"x": "npx"}}', "server 'x' should be an object"),
    ],
)
def test_a_json_file_that_cannot_be_used_is_one_sentence(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "mcp.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as info:
        read_json_file(str(path))
    assert str(path) in str(info.value) and reason in str(info.value) and "\n" not in str(info.value)


def test_a_table_without_a_command_trusts_a_server_from_the_json_file() -> None:
    from_json = servers_from_json(CURSOR, origin="cursor.json")
    from_file = servers_from_table(
        {"time": {"trust": "read-only", "call_timeout": 9}, "own": {"command": "own"}}
    )
    linear, time_server, own = merged(from_file, from_json)
    assert (time_server.command, time_server.trust, time_server.call_timeout) == ("uvx", "read-only", 9.0)
    assert linear.trust is None and own.command == "own"
    (alone,) = merged(servers_from_table({"ghost": {"trust": "read-only"}}), ())
    with pytest.raises(EntryError, match="'ghost' in the config file has no command or url, and no server"):
        launch(alone, start_timeout=1, call_timeout=1)


def test_references_are_filled_from_the_environment_when_a_server_starts() -> None:
    (linear,) = [s for s in servers_from_json(CURSOR, origin="c") if s.name == "linear"]
    ready = launch(linear, start_timeout=3, call_timeout=4, environ={"LINEAR_KEY": "lin_api_abcdef123456"})
    assert dict(ready.headers)["Authorization"] == Secret("Bearer lin_api_abcdef123456")
    assert (ready.start_timeout, ready.call_timeout) == (3, 4)
    assert set(ready.secrets) == {"Bearer lin_api_abcdef123456", "lin_api_abcdef123456"}
    with pytest.raises(EntryError, match=r"'linear' uses \$\{env:LINEAR_KEY\}, but LINEAR_KEY is not set"):
        launch(linear, start_timeout=3, call_timeout=4, environ={})
    pg = servers_from_json(VSCODE, origin="v")[0]
    with pytest.raises(EntryError, match="asks for the VS Code input 'pg-password', which pyaichat cannot"):
        launch(pg, start_timeout=1, call_timeout=1, environ={})
    spec = ServerSpec("s", command="srv", args=("${HOME}/x", "${MISSING:-fallback}", "${workspaceFolder}"))
    ready = launch(spec, start_timeout=1, call_timeout=1, environ={"HOME": "/home/ann"}, cwd="/proj")
    assert ready.args == ("/home/ann/x", "fallback", "/proj")


def test_only_values_that_could_be_credentials_are_masked_in_texts(tmp_path: Path) -> None:
    assert worth_masking("GITHUB_TOKEN", TOKEN) == [TOKEN]
    assert worth_masking("Authorization", "Bearer abcdefgh12345") == ["Bearer abcdefgh12345", "abcdefgh12345"]
    assert worth_masking("LOG_LEVEL", "debug") == []  # short: masking it would hide every "debug"
    assert worth_masking("MODE", "production") == []  # a plain word under a plain name
    assert worth_masking("DATA_DIR", str(tmp_path)) == []  # a path that exists
    assert worth_masking("DB_PASSWORD", "correcthorse") == ["correcthorse"]  # a secret name: masked anyway


def test_mcp_config_named_on_the_command_line_is_checked_at_start_up(tmp_path: Path) -> None:
    bad = tmp_path / "mcp.json"
    bad.write_text("{oops")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "PATH": "/usr/bin:/bin",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat", "--mcp-config", str(bad)],
        input="x = 1\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr.startswith(f"pyaichat: MCP config file {bad} is not valid JSON: ")
        and proc.stderr.count("\n") == 1
    )
    assert load_config({"mcp_config": str(bad)}, env={}).mcp_config == str(bad)


def test_the_settings_have_defaults_and_bounds() -> None:
    cfg = Config()
    assert (
        cfg.mcp_servers,
        cfg.mcp_config,
        cfg.mcp_start_timeout,
        cfg.mcp_call_timeout,
        cfg.mcp_tool_tokens,
    ) == (
        (),
        None,
        20.0,
        60.0,
        1000,
    )
    with pytest.raises(ConfigError, match="mcp_call_timeout should be more than 0"):
        Config(mcp_call_timeout=0)


def test_a_fix_is_written_in_the_form_of_the_file_that_defines_the_server(tmp_path: Path) -> None:
    """A server from ``--mcp-config`` JSON is told its fix in JSON (where that file can hold it); one from
    the config file in TOML; requests back (sampling, elicitation) only in the config file, by design."""
    from types import SimpleNamespace

    from pyaichat.mcptools.status import requests_back_line

    (tmp_path / "cursor.json").write_text(json.dumps(CURSOR))
    _, time_server = read_json_file(str(tmp_path / "cursor.json"))
    assert time_server.how_to_set("trust", "read-only") == (
        f'"trust": "read-only" in its entry in {tmp_path / "cursor.json"}'
    )
    assert time_server.how_to_set("elicitation", True) == (
        "elicitation = true in a [mcp_servers.time] table in the config file"
    )
    (own,) = servers_from_table({"own": {"command": "own"}})
    assert own.how_to_set("trust", "read-only") == 'trust = "read-only" in its [mcp_servers.own] table'
    refused = SimpleNamespace(launch=None, answered={}, refused={"sampling": 2})
    assert requests_back_line(time_server, refused) == (
        "sampling off (refused 2: sampling = true in a [mcp_servers.time] table in the config file turns it "
        "on)"
    )
