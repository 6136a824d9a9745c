"""A first run as a newcomer makes it, through ``python -m pyaichat`` and the real litellm path: a provider
key that is missing is named by the provider's own variable before any request leaves, and a cloud provider
that cannot be reached is not asked whether its server is running."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

CLAUDE = "anthropic/claude-3-5-haiku-latest"


def piped(stdin: str, *args: str, **env_extra: str) -> subprocess.CompletedProcess[str]:
    """pyaichat as a new user starts it: no config, no provider key of any kind."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYAICHAT_", "OPENAI_", "ANTHROPIC_")) and not k.endswith("_API_KEY")
    }
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_missing_anthropic_key_is_named_and_nothing_is_sent(srv):
    # litellm would send Anthropic's requests to the scripted server: none may arrive
    out = piped("/ask hi\n", "--model", CLAUDE, ANTHROPIC_API_BASE=srv.base_url.removesuffix("/v1"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        f"Error: No API key was found for {CLAUDE}: set ANTHROPIC_API_KEY (or PYAICHAT_API_KEY)."
    )
    assert srv.requests == []


def test_a_cloud_provider_out_of_reach_is_a_network_problem_not_a_server_to_start():
    # litellm's own address for the provider (the person named none), simulated by a closed local port
    out = piped(
        "/ask hi\n",
        "--model",
        CLAUDE,
        ANTHROPIC_API_KEY="sk-ant-test",
        ANTHROPIC_API_BASE=f"http://127.0.0.1:{closed_port()}",
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last == (
        f"Error: Cannot reach the provider for {CLAUDE}: check this machine's network connection (and proxy "
        "settings, if any)."
    )
    assert "server running" not in out.stdout
