"""The README sells and starts: 150–250 lines, with the two commands intact — one that installs and starts
pyaichat, one that installs the test extras and passes the tests, which is exactly what CI's ``.ci/run`` runs.
Its reference moved to the documentation site, and every benchmark is listed in ``benchmarks/README.md``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
START = "python3 -m venv .venv && .venv/bin/pip install -q . pandas && .venv/bin/pyaichat"


def ci_command() -> str:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line for line in lines if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert len(commands) == 1, commands
    return commands[0]


def test_the_readme_is_short():
    assert 150 <= len(README.splitlines()) <= 250, len(README.splitlines())


def test_the_readme_says_the_two_commands():
    lines = README.splitlines()
    assert START in lines
    assert ci_command() in lines  # CI runs the README's test command, exactly
    assert ci_command() in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").splitlines()


def test_the_start_command_comes_before_the_test_command():
    """A person who came to use pyaichat meets the command that starts it first (the test command is
    Development's)."""
    assert README.index(START) < README.index("## Development") < README.index(ci_command())


def test_every_benchmark_is_listed():
    listed = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    missing = [path.name for path in (ROOT / "benchmarks").glob("*.py") if f"`{path.name}`" not in listed]
    assert not missing, f"benchmarks/README.md does not name {missing}"


def test_the_readme_links_to_pages_that_exist():
    for target in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+|CONTRIBUTING\.md)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), target
