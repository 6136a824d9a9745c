"""The start-up's import set must not grow back (issue 14).

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
from pathlib import Path

import pytest

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
    "tomllib",  # only with a config file
    "argparse",  # only with flags
    "pyaichat.config",  # the pydantic model: only when a value needs it
    "pyaichat.agent.events",
    "pyaichat.agent.assistant",
    "pyaichat.capabilities",
    "pyaichat.commands",
}
# The piped path has no terminal UI at all.
NEVER_WHEN_PIPED = NEVER_AT_START_UP | {"prompt_toolkit", "asyncio", "wcwidth", "pyaichat.repl.frontend"}
# The interactive path loads completion on the first TAB and rendering with the first event.
NEVER_AT_FIRST_PROMPT = NEVER_AT_START_UP | {
    "pyaichat.repl.completion",
    "pyaichat.repl.render",
    "pyaichat.records",  # dataclasses: loaded with the first run of user code (piped input runs at once)
    "dataclasses",
    # prompt_toolkit's package __init__s run just after the first prompt (repl/startup_trims.py).
    "prompt_toolkit.shortcuts.dialogs",
    "prompt_toolkit.shortcuts.progress_bar",
    "prompt_toolkit.shortcuts.choice_input",
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
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    modules, gc_enabled = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "pyaichat.session" in modules  # the probe ran inside pyaichat's session
    assert sorted(NEVER_WHEN_PIPED & set(modules)) == []
    assert gc_enabled  # paused for the start-up only: user code runs with the collector on


def test_plain_env_values_keep_pydantic_out_and_a_bad_one_brings_the_message(tmp_path: Path) -> None:
    env = clean_env(tmp_path) | {"PYAICHAT_MODEL": "openai/x", "PYAICHAT_MAX_STEPS": "5", "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat"], input=PROBE, capture_output=True, text=True, env=env, timeout=60
    )
    modules, _ = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "pydantic" not in modules and "pyaichat.config" not in modules

    env["PYAICHAT_MAX_STEPS"] = "500"
    proc = subprocess.run(
        [sys.executable, "-m", "pyaichat"], input=PROBE, capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "pyaichat: In environment variable PYAICHAT_MAX_STEPS: max_steps input should be less than or equal "
        "to 100 (got '500').\n"
    )


# The configuration path on its own (the session, which parses user code, imports ``ast`` anyway).
CONFIG_PROBE = """
import json, sys
from pyaichat.config_light import load_startup_config
config = load_startup_config({"max_steps": 3})
values = [type(config).__name__, config.model, config.max_steps, config.secret_names]
print(json.dumps([*values, sorted(sys.modules)]))
"""


def test_plain_values_are_checked_against_the_table_without_pydantic_or_ast(tmp_path: Path) -> None:
    (tmp_path / "config" / "pyaichat").mkdir(parents=True)
    (tmp_path / "config" / "pyaichat" / "config.toml").write_text('secret_names = ["pin"]\n')
    env = clean_env(tmp_path) | {"PYAICHAT_MODEL": "openai/x"}
    proc = subprocess.run(
        [sys.executable, "-c", CONFIG_PROBE], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    kind, model, max_steps, secret_names, modules = json.loads(proc.stdout)
    assert (kind, model, max_steps, secret_names) == ("LazyConfig", "openai/x", 3, ["pin"])
    assert "pyaichat.settings" in modules
    # dataclasses: the table is plain data, no generated code to compile at import.
    assert sorted({"pydantic", "pyaichat.config", "ast", "dataclasses"} & set(modules)) == []


# Runs pyaichat's own entry point; the only addition is a look at sys.modules at the first full render, taken
# before the work deferred to that moment (prompt_toolkit's package __init__s, the lexer) starts.
SNAPSHOT_AT_FIRST_RENDER = """
import json, sys
import pyaichat.repl.startup_trims as trims  # imports no prompt_toolkit: the start-up path stays as it is

original = trims.finish_package_inits  # the first thing the first full render calls
target = sys.argv[1]
taken = []

def finish_package_inits():
    if not taken:
        taken.append(1)
        with open(target, "w") as fh:
            json.dump(sorted(sys.modules), fh)
    original()

trims.finish_package_inits = finish_package_inits
sys.argv = ["pyaichat"]
from pyaichat.cli import main
sys.exit(main())
"""


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_interactive_first_prompt_imports_nothing_on_the_list(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    snapshot = tmp_path / "modules.json"
    env = clean_env(tmp_path) | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-c", SNAPSHOT_AT_FIRST_RENDER, str(snapshot)],
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.send("import gc; gc.isenabled()\r")
        child.expect(r"True\r\n")  # the collector is back on before user code runs
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        # prompt_toolkit, its package __init__s deferred past the first prompt, is whole for user code.
        child.send("from prompt_toolkit.shortcuts import prompt; type(prompt).__name__\r")
        child.expect(r"'function'\r\n")
        child.expect(r"\x1b\[\?2004h.*?>>>[ \x1b]")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    modules = set(json.loads(snapshot.read_text()))
    assert "prompt_toolkit" in modules and "pyaichat.controller" in modules  # taken at the real prompt
    assert sorted(NEVER_AT_FIRST_PROMPT & modules) == []
