"""The start-up's import set must not grow back.

Each path is started for real in a subprocess: piped (``python -m pyaichat`` with stdin from a pipe) and
interactive (``python -m pyaichat`` in a pseudo-terminal, the module set taken at the moment the first full
prompt is on screen). Neither may have imported anything in ``NEVER_AT_START_UP``; a module that has to move
onto the start path needs a measured reason (``benchmarks/startup*.py``) and an edit here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from timeouts import HANG_GUARD

# Heavy libraries, and our own modules that pull them in or are only needed later.
NEVER_AT_START_UP = {
    "pydantic",
    "pydantic_core",
    "litellm",
    "openai",
    "httpx",
    "rich",
    "pygments",
    "IPython",
    "jedi",
    "jupyter_client",
    "zmq",
    "RestrictedPython",
    "numpy",
    "pandas",
    "sqlglot",  # query_sql's SQL parser: with the first query
    "tomllib",  # only with a config file
    "argparse",  # only with flags
    "mcp",  # the MCP SDK: servers start when the assistant first needs them
    "mcp_types",
    "anyio",
    "pyaichat.mcptools.tools",
    "pyaichat.agent.events",
    # the session's assistant is made at start-up (``assemble``), and cheaply: its module imports nothing
    # heavy (``python -X importtime``: ~2 ms); what answers a question loads with the first question
    "pyaichat.agent.turn",
    "pyaichat.agent.loop",
    "pyaichat.capabilities",
    "pyaichat.commands",
    # serving to outside agents (/mcp, --mcp): the SDK lives in the face processes, never in the session's
    "starlette",
    "uvicorn",
    "pyaichat.mcpserve.service",
    "pyaichat.mcpserve.endpoint",
}
# The piped path has no terminal UI at all.
NEVER_WHEN_PIPED = NEVER_AT_START_UP | {"prompt_toolkit", "asyncio", "wcwidth", "pyaichat.repl.frontend"}
# The interactive path loads completion on the first TAB and rendering with the first event.
NEVER_AT_FIRST_PROMPT = NEVER_AT_START_UP | {
    "pyaichat.repl.completion",
    "pyaichat.repl.render",
    "pyaichat.records",  # dataclasses: loaded with the first run of user code (piped input runs at once)
    "dataclasses",
}

PROBE = "import sys, json, gc; print(json.dumps([sorted(sys.modules), gc.isenabled()]))\n"


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_") and k != "NO_COLOR"}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"))
    return env


def test_piped_start_up_imports_nothing_on_the_list(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input="x = 1\n" + PROBE,
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        timeout=HANG_GUARD,
    )
    assert proc.returncode == 0, proc.stderr
    modules, gc_enabled = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "pyaichat.session" in modules  # the probe ran inside pyaichat's session
    assert sorted(NEVER_WHEN_PIPED & set(modules)) == []
    assert gc_enabled  # paused for the start-up only: user code runs with the collector on


def test_settings_from_env_and_file_are_checked_without_pydantic_and_a_bad_one_is_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "config" / "pyaichat").mkdir(parents=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text(
        'secret_names = ["pin"]\nprivacy = "schema"\n'
    )
    env = clean_env(tmp_path) | {"PYAICHAT_MODEL": "openai/x", "PYAICHAT_MAX_STEPS": "5", "NO_COLOR": "1"}
    probe = "import sys; print(sorted(m for m in ('pydantic', 'tomllib') if m in sys.modules))\n/model\n"
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input=probe,
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD,
    )
    assert proc.returncode == 0, proc.stderr
    model = "Model: openai/x, at openai's own address (api.openai.com)."
    assert proc.stdout.splitlines()[:2] == ["['tomllib']", model]

    env["PYAICHAT_MAX_STEPS"] = "500"
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input=PROBE,
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "pyaichat: In environment variable PYAICHAT_MAX_STEPS: max_steps should be at most 100 (got '500').\n"
    )


# Runs pyaichat's own entry point; the only addition is a look at sys.modules at the first full render, taken
# before the work left to that moment (the lexer's thread) starts.
SNAPSHOT_AT_FIRST_RENDER = """
import json, sys
import pyaichat.repl.prompt_session as prompt_session

original = prompt_session._start_up_done  # the first thing the first full render calls
target = sys.argv[1]
taken = []

def start_up_done(app):
    if not taken:
        taken.append(1)
        with open(target, "w") as fh:
            json.dump(sorted(sys.modules), fh)
    original(app)

prompt_session._start_up_done = start_up_done
sys.argv = ["pyaichat"]
from pyaichat.cli import main
sys.exit(main())
"""


def spawn_in_pty(tmp_path: Path, args: list[str], **extra_env: str):  # type: ignore[no-untyped-def]
    """``python ARGS`` in a 100×30 pseudo-terminal with a clean environment (pexpect's child)."""
    pexpect = pytest.importorskip("pexpect")
    env = clean_env(tmp_path) | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", **extra_env}
    return pexpect.spawn(sys.executable, args, env=env, dimensions=(30, 100), encoding="utf-8", timeout=30)


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("suggest", [None, "ollama/qwen2.5-coder:1.5b"])  # suggestions on: no litellm yet
def test_interactive_first_prompt_imports_nothing_on_the_list(tmp_path: Path, suggest: str | None) -> None:
    pexpect = pytest.importorskip("pexpect")
    snapshot = tmp_path / "modules.json"
    suggesting = {"PYAICHAT_SUGGEST_MODEL": suggest} if suggest else {}
    child = spawn_in_pty(tmp_path, ["-c", SNAPSHOT_AT_FIRST_RENDER, str(snapshot)], **suggesting)
    try:
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.send("import gc; gc.isenabled()\r")
        child.expect(r"True\r\n")  # the collector is back on before user code runs
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    modules = set(json.loads(snapshot.read_text()))
    assert "prompt_toolkit" in modules and "pyaichat.controller" in modules  # taken at the real prompt
    assert sorted(NEVER_AT_FIRST_PROMPT & modules) == []


# A session of one line and Ctrl-D, kept for --resume (autosave "auto"): what keeping it loads is the masker
# and json, not the capabilities' machinery (bounded_repr, the adapters, the registry: ~9 ms for one helper)
# nor pathlib with its urllib and ipaddress (the resume file's path is a string). The module set is taken at
# exit, after the resume file's writer has finished.
NEVER_FOR_ONE_KEPT_LINE = {
    "pathlib",
    "pyaichat.capabilities.bounded_repr",
    "pyaichat.capabilities.adapters",
    "pyaichat.capabilities.catalog",
    "pydantic",
    "rich",
    "litellm",
}
SNAPSHOT_AT_EXIT = """
import atexit, json, sys

target = sys.argv[1]
atexit.register(lambda: open(target, "w").write(json.dumps(sorted(sys.modules))))  # after pyaichat's own
sys.argv = ["pyaichat"]
from pyaichat.cli import main
sys.exit(main())
"""


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_one_line_kept_for_resume_loads_only_what_keeping_it_needs(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    snapshot = tmp_path / "modules.json"
    child = spawn_in_pty(tmp_path, ["-c", SNAPSHOT_AT_EXIT, str(snapshot)])
    try:
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.send("x = 1\r")
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    kept = json.loads((tmp_path / "state" / "pyaichat" / "last-session.json").read_text())
    assert [entry["source"] for entry in kept["history"]] == ["x = 1"]  # kept before the process ended
    modules = set(json.loads(snapshot.read_text()))
    assert "pyaichat.persist.resume" in modules and "pyaichat.capabilities.secret_values" in modules
    assert sorted(NEVER_FOR_ONE_KEPT_LINE & modules) == []


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_what_the_first_input_needs_loads_while_the_first_prompt_waits(tmp_path: Path) -> None:
    """The records of a run and what keeping the session for --resume needs load in the time the person
    spends reading the first prompt, not after their first Enter."""
    pexpect = pytest.importorskip("pexpect")
    child = spawn_in_pty(tmp_path, ["-m", "pyaichat"])
    wanted = ("pyaichat.persist.resume", "pyaichat.capabilities.redact", "json")
    try:
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        time.sleep(1.0)  # the person reads the prompt
        child.send(f"import sys; print('loaded:', [m for m in {wanted!r} if m in sys.modules])\r")
        child.expect(r"loaded: (\[.*?\])\r\n")
        loaded = child.match.group(1)
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert loaded == repr(list(wanted))
