"""The audit log: one masked JSON line per call, off by config, never breaking a call."""

from __future__ import annotations

import json
import os

from cap_helpers import make_session

from pyaichat.capabilities import audit, call
from pyaichat.paths import state_dir

KEY = "sk-" + "proj-" + "Zx9Qw3Er7Ty1Ui5Op0As4Df8Gh2Jk6Lz"


def _lines() -> list[dict]:
    path = state_dir() / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_call_appends_one_json_line_with_the_documented_fields():
    session = make_session("x = [1, 2, 3]")
    call(session, "get_repr", {"expr": "x"})
    call(session, "get_type", {"expr": "nope"})
    first, second = _lines()
    assert set(first) >= {
        "time",
        "session",
        "capability",
        "args",
        "ok",
        "error",
        "duration_ms",
        "output_chars",
    }
    assert first["capability"] == "get_repr" and first["args"] == {"expr": "x"} and first["ok"] is True
    assert first["output_chars"] == len(call(session, "get_repr", {"expr": "x"}).text)
    assert second["ok"] is False and "no variable named 'nope'" in second["error"]
    assert first["session"] == second["session"]
    assert first["session"] != audit.session_id(make_session())


def test_arguments_are_masked_in_the_log():
    session = make_session()
    call(session, "get_repr", {"expr": f"'{KEY}'"})
    call(session, "list_globals", {"pattern": "password=hunter2"})
    text = (state_dir() / "audit.jsonl").read_text()
    assert KEY not in text and "hunter2" not in text and "<redacted openai key>" in text


def test_the_log_is_off_when_config_audit_is_false():
    call(make_session(audit=False), "list_globals", {})
    assert not (state_dir() / "audit.jsonl").exists()


def test_an_unwritable_state_directory_never_breaks_a_call(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the state dir cannot be created under a file
    result = call(make_session("x = 1"), "get_repr", {"expr": "x"})
    assert result.ok and result.text.endswith("1")


def test_the_log_file_is_private_to_the_user():
    call(make_session(), "list_globals", {})
    assert oct(os.stat(state_dir() / "audit.jsonl").st_mode & 0o777) == "0o600"


def test_read_last_and_format_entry():
    session = make_session("x = 1")
    for expr in ("x", "x", "y"):
        call(session, "get_type", {"expr": expr})
    entries = audit.read_last(2)
    assert [e["args"]["expr"] for e in entries] == ["x", "y"]
    line = audit.format_entry(entries[-1])
    assert "get_type(expr='y')  failed: There is no variable named 'y' in the session." in line
    assert line.endswith("0 chars")
    assert audit.read_last(0) == []


def test_the_assistants_mcp_tools_record_under_the_sessions_own_id():
    """The user's MCP servers' calls and the capabilities' calls of one session share the audit's session id:
    the runtime declares whom its records name (``audit_key``) instead of being searched for a ``session``."""
    from pyaichat.agent.assistant import Assistant
    from pyaichat.configuration.config import Config
    from pyaichat.runtime.local import LocalRuntime

    session = make_session()
    runtime = LocalRuntime(session)
    assert runtime.audit_key() is session
    config = Config(mcp_servers={"time": {"command": "mcp-server-time"}})
    servers = Assistant(config, runtime).servers  # made, not started: nothing runs until a question needs it
    assert servers is not None
    assert audit.session_id(servers.session) == audit.session_id(session)
