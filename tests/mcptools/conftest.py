"""Fixtures for the MCP tools: server entries (our fault server, real servers from PyPI and npm), a git
repository made by the test, and assistants whose servers are stopped at the end of each test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_helpers import NPM_PACKAGES, fault

from fakes.fake_llm import FakeLLM
from pyaichat.agent.assistant import Assistant
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, str]:
    """Files the fault server writes: what its write tools wrote, and every call it received."""
    return {"FAULT_NOTE_FILE": str(tmp_path / "note.txt"), "FAULT_CALLS_FILE": str(tmp_path / "calls.jsonl")}


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A repository with two commits, made here (the git server reads it)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ann Example",
        "GIT_AUTHOR_EMAIL": "ann@example.org",
        "GIT_COMMITTER_NAME": "Ann Example",
        "GIT_COMMITTER_EMAIL": "ann@example.org",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=30)

    git("init", "-q", "-b", "main")
    (repo / "data.csv").write_text("id,value\n1,10\n")
    git("add", "data.csv")
    git("commit", "-q", "-m", "Load the raw data")
    (repo / "data.csv").write_text("id,value\n1,10\n2,20\n")
    git("commit", "-q", "-am", "Fix the join key: ids are integers")
    return repo


@pytest.fixture
def make_assistant() -> Iterator[Callable[..., tuple[Assistant, FakeLLM, Session]]]:
    """``make_assistant(servers, **settings)``: an assistant over a scripted model with these MCP servers;
    every one made is closed (its servers stopped) when the test ends."""
    made: list[Assistant] = []

    def make(servers: dict[str, Any], *, llm: FakeLLM | None = None, **settings: Any):
        config = Config(**{"model": "fake/model", "audit": False, "mcp_servers": servers, **settings})
        session = Session(echo=lambda value: None)
        session.settings.replace(config)
        fake = llm or FakeLLM()
        assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
        made.append(assistant)
        return assistant, fake, session

    yield make
    for assistant in made:
        assistant.close()


@pytest.fixture(scope="session")
def npm_servers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference servers from npm, installed once into a cache directory (kept between runs); the tests
    that use them skip, saying why, where node or npm is missing or the registry cannot be reached."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: the reference MCP servers from npm cannot run here")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pyaichat-tests" / "npm-mcp"
    marker = cache / ("installed-" + "-".join(p.rpartition("@")[2] for p in NPM_PACKAGES))
    if not marker.exists():
        cache.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(cache), *NPM_PACKAGES],
            capture_output=True,
            text=True,
            timeout=240,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install the reference MCP servers: {proc.stderr.strip()[-300:]}")
        marker.touch()
    return cache / "node_modules" / "@modelcontextprotocol"


@pytest.fixture
def sessions(notes, tmp_path: Path, monkeypatch):
    """``sessions(person, **settings)``: a new pyaichat session (same state directory, same project) with the
    fault server (under each of ``servers``' names), its definitions changed by ``tools.json`` when the test
    writes it; ``person`` is the front end (``test_mcp_approval_panel.Person``)."""
    monkeypatch.chdir(tmp_path)
    made: list[Controller] = []
    tools_file = tmp_path / "tools.json"

    def make(
        person: Any, trust: str = "read-only", servers: tuple[str, ...] = ("fault",), **settings: Any
    ) -> tuple[Controller, FakeLLM]:
        env = {**notes, "FAULT_TOOLS_FILE": str(tools_file)}
        entries = {name: fault(env=env, trust=trust) for name in servers}
        config = Config(model="fake/model", audit=False, mcp_servers=entries, **settings)
        session = Session(echo=lambda value: None, config=config)
        fake = FakeLLM()
        ctrl = assemble(LocalRuntime(session), person, llm_factory=lambda cfg: fake)
        made.append(ctrl)
        return ctrl, fake

    make.tools_file = tools_file  # type: ignore[attr-defined]
    yield make
    for ctrl in made:
        ctrl.close()
