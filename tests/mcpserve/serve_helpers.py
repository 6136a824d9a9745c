"""Sessions that serve, and the official MCP Python SDK's client over each transport (a plain module:
``conftest`` names clash across test folders)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.mcpserve import discovery
from pyaichat.mcpserve.service import McpService
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session
from pyaichat.untrusted import CLOSE, OPEN, unwrap

ROOT = Path(__file__).resolve().parents[2]
READY = 60.0


class RecordingFrontEnd:
    """A terminal-like front end that keeps what it is given; the person's answers to proposals are
    ``answers`` in order ("no" once they run out), and code put into the next input is ``next_input``."""

    interactive = True
    where = "pyaichat REPL"
    remembers = False

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.answers: list[str] = []
        self.next_input: str | None = None

    def emit(self, event: Any) -> None:
        self.events.append(event)

    def decide(self, proposal: Any) -> str:
        return self.answers.pop(0) if self.answers else "no"

    def set_next_input(self, code: str) -> None:
        self.next_input = code

    def notices(self) -> list[str]:
        return [e.text for e in self.events if getattr(e, "type", "") == "notice"]


@contextlib.contextmanager
def environment(state: Path) -> Iterator[None]:
    """``XDG_STATE_HOME=state`` and no runtime directory, for as long as a session starts serving."""
    saved = {key: os.environ.get(key) for key in ("XDG_STATE_HOME", "XDG_RUNTIME_DIR")}
    os.environ["XDG_STATE_HOME"] = str(state)
    os.environ.pop("XDG_RUNTIME_DIR", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Served:
    """A session in this process, serving (``/mcp on`` through the controller); ``lines`` are the quiet
    lines the person would see."""

    def __init__(self, state: Path, source: str = "", host: str | None = None, **config: Any) -> None:
        self.state = state
        self.frontend = RecordingFrontEnd()
        self.session = Session(config=Config(**config))
        self.ctrl = controller_over(LocalRuntime(self.session), self.frontend)
        if source:
            self.ctrl.handle(source)
        self.lines: list[str] = []
        with environment(state):
            self.ctrl.handle("/mcp on" + (f" {host}" if host else ""))
        service = self.ctrl.mcp(create=False)
        assert service is not None and service.serving, self.frontend.notices()
        self.service: McpService = service
        service.show = self.lines.append
        assert service.wait_ready(READY), "the HTTP face did not start"

    @property
    def url(self) -> str:
        assert self.service.url
        return self.service.url

    @property
    def token(self) -> str:
        token = self.service.token()
        assert token
        return token

    def env(self) -> dict[str, str]:
        return bridge_env(self.state)

    def stop(self) -> None:
        self.ctrl.handle("/mcp off")


def controller_over(runtime: Any, frontend: Any) -> Controller:
    """A controller as the command line builds one: over ``runtime``, with the assistant made on first use."""
    return assemble(runtime, frontend)


def bridge_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "XDG_RUNTIME_DIR"))}
    env["XDG_STATE_HOME"] = str(state)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@contextlib.asynccontextmanager
async def http_client(
    url: str, token: str | None, name: str = "test-agent", connection: list[Any] | None = None
) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP; ``connection`` gets its HTTP client (its connections)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        if connection is not None:
            connection.append(http)
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, client_info=types.Implementation(name=name, version="1")) as client:
            yield client


@contextlib.asynccontextmanager
async def stdio_client(
    env: dict[str, str], name: str = "claude-code", cwd: str | None = None, args: tuple[str, ...] = ()
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pyaichat", "mcp", *args], env=env, cwd=cwd
    )
    async with Client(params, client_info=types.Implementation(name=name, version="1")) as client:
        yield client


def text(result: types.CallToolResult) -> str:
    """What the agent read, out of the data span every result comes in (checked here, on every call)."""
    raw = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    assert raw.startswith(OPEN + "\n") and raw.endswith("\n" + CLOSE), raw[:200]
    return unwrap(raw)


class OtherSession:
    """A session in a process of its own (``pyaichat --mcp`` reading piped input), started in ``cwd``."""

    def __init__(self, state: Path, cwd: Path, source: str = "") -> None:
        env = bridge_env(state)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pyaichat", "--mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd),
            env=env,
            text=True,
        )
        assert self.proc.stdin is not None
        if source:
            self.proc.stdin.write(source.rstrip("\n") + "\n\n")
            self.proc.stdin.flush()
        self.record = self._wait_for_record(state)

    def _wait_for_record(self, state: Path) -> dict[str, Any]:
        deadline = time.monotonic() + READY
        with environment(state):
            directory = discovery.records_dir()
        while time.monotonic() < deadline:
            for record in discovery.read_records(directory, clean=False):
                if record["pid"] == self.proc.pid:
                    return record
            if self.proc.poll() is not None:
                said = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"the session exited: {said}")
            time.sleep(0.05)
        raise AssertionError("the other session never served")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # end of input: pyaichat exits and stops serving
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
