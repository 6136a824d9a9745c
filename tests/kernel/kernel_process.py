"""Real ipykernel processes, for the kernel-runtime tests and ``benchmarks/kernel.py``.

A kernel is started as ``python -m ipykernel_launcher -f <conn.json>`` in its own session (as Jupyter starts
kernels: an ``interrupt_request`` makes ipykernel signal its whole process group, which must not be pytest's),
and pyaichat attaches to it through the connection file, exactly as ``--existing`` does. A module of its own
(not the conftest) so that tests import it by a name no other test folder uses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pyaichat.configuration.config import Config
from pyaichat.runtime import connect
from pyaichat.runtime.kernel import KernelRuntime

START_TIMEOUT = 60.0


@dataclass
class Kernel:
    """A kernel process started by a test, and its connection file."""

    proc: subprocess.Popen
    connection_file: Path

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def start_kernel(directory: Path, name: str = "kernel-test.json", env: dict | None = None) -> Kernel:
    """Start an ipykernel that writes its connection file to ``directory/name``; wait for the file.

    The kernel gets configuration and state directories of its own under ``directory``: what runs in it
    (the audit log, a snapshot's default file) never reaches the user's real ones."""
    conn = directory / name
    env = dict(os.environ if env is None else env)
    env.update(
        XDG_CONFIG_HOME=str(directory / "kernel-config"), XDG_STATE_HOME=str(directory / "kernel-state")
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "ipykernel_launcher", "-f", str(conn), "--IPKernelApp.log_level=ERROR"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            if json.loads(conn.read_text()).get("shell_port"):
                return Kernel(proc, conn)
        except (OSError, ValueError):
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"the kernel exited with {proc.returncode}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the kernel did not write its connection file")


def attach(kernel: Kernel, **config: object) -> KernelRuntime:
    return connect.attach(
        str(kernel.connection_file), Config(audit=False, color=False, **config), timeout=START_TIMEOUT
    )


def kernel_eval(runtime: KernelRuntime, expression: str) -> str:
    """Evaluate ``expression`` in the kernel without touching its history (a silent user expression)."""
    msg_id = runtime.kernel.client.execute(
        "", silent=True, store_history=False, user_expressions={"v": expression}, allow_stdin=False
    )
    reply = runtime.kernel.shell_reply(msg_id, 30)
    assert reply is not None
    value = reply["content"]["user_expressions"]["v"]
    assert value["status"] == "ok", value
    return value["data"]["text/plain"]
