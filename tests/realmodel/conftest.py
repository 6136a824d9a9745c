"""The realmodel suite's fixtures: one real local model server for the whole session, and a runner for
``python -m pyaichat`` pointed at it.

Without llama-cpp-python or the model package the suite is skipped, unless ``PYAICHAT_REQUIRE_REALMODEL=1``
(CI sets it in ``.ci/run``): then it fails, so a CI run can never pass without a real model.
The server log is kept in the pytest temporary folder and printed when a test fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from realmodel.local_server import LocalModelServer, ServerDied, pyaichat_env, server_available

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark this suite ``realmodel`` and run it last: its server is a child process of the test run while it
    lives, and other suites check that their own runs leave no child behind."""
    here = Path(__file__).parent
    ours = [item for item in items if here in Path(str(item.fspath)).parents]
    for item in ours:
        item.add_marker(pytest.mark.realmodel)
    mine = set(map(id, ours))
    items[:] = [item for item in items if id(item) not in mine] + ours


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    why_not = server_available()
    if why_not:
        if os.environ.get("PYAICHAT_REQUIRE_REALMODEL") == "1":
            pytest.fail(f"The realmodel suite needs a real model server: {why_not}.")
        pytest.skip(why_not)
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    server = LocalModelServer(log_path=log)
    try:
        server.start()  # includes one real completion: a server that cannot compute fails here, named
    except ServerDied as exc:
        pytest.fail(str(exc), pytrace=False)
    request.config._realmodel_server = server  # for the failure report hook
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _server_still_alive(request: pytest.FixtureRequest):
    """A server that died in an earlier test fails the next one at once, named, instead of every later test
    failing with "cannot reach the provider"."""
    if "model_server" not in request.fixturenames:
        yield
        return
    server: LocalModelServer = request.getfixturevalue("model_server")
    if server.dead():
        pytest.fail(server.death("in an earlier test"), pytrace=False)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    server = getattr(item.config, "_realmodel_server", None)
    if report.when == "call" and report.failed and server is not None:
        if server.dead(wait=2.0):
            report.sections.append(("model server", server.death("during this test")))
        report.sections.append((f"model server log (tail; full log: {server.log_path})", server.log_tail(80)))


@dataclass
class Run:
    """One finished ``python -m pyaichat`` run."""

    stdout: str
    stderr: str
    returncode: int
    seconds: float

    def after(self, marker: str) -> str:
        """Output after the line ``marker`` (printed by the script), i.e. what one step produced."""
        return self.stdout.split(marker, 1)[1] if marker in self.stdout else ""


@pytest.fixture
def run_piped(model_server: LocalModelServer, tmp_path: Path):
    """Feed a script to ``python -m pyaichat`` on stdin (piped mode) against the real server."""

    def run(script: str, timeout: float = 240, **settings: str) -> Run:
        began = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pyaichat"],
            input=script,
            capture_output=True,
            text=True,
            env=pyaichat_env(model_server, tmp_path, **settings),
            timeout=timeout,
            cwd=tmp_path,
        )
        return Run(proc.stdout, proc.stderr, proc.returncode, time.monotonic() - began)

    return run
