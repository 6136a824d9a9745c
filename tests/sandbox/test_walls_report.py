"""``/tools`` says which walls stand around ``run_python`` here."""

from __future__ import annotations

import io
import os

import pytest

from pyaichat.assemble import assemble
from pyaichat.capabilities.sandbox import confine, walls_report
from pyaichat.capabilities.sandbox.isolation import fork_available
from pyaichat.configuration.config import Config
from pyaichat.piped import PlainFrontEnd
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session


def _tools_text(config: Config) -> str:
    out = io.StringIO()
    runtime = LocalRuntime(Session(config=config))
    assemble(runtime, PlainFrontEnd(out=out)).handle("/tools")
    return out.getvalue()


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_tools_names_the_walls_in_fork_mode() -> None:
    text = _tools_text(Config(sandbox_isolation="fork", audit=False))
    assert "Sandbox walls:" in text and "forked child" in text
    walls = confine.probe()
    if walls.complete:
        assert f"Landlock (ABI {walls.landlock_abi})" in text and "seccomp: no sockets" in text
        assert "both walls up" in text
    else:
        assert "not available" in text and "a wall is down" in text
    shared = "made private in the child" if os.path.exists("/proc/self/maps") else "stays shared on this OS"
    assert f"shared memory (memmap, mmap, multiprocessing): {shared}" in text


def test_tools_says_inprocess_has_no_kernel_wall() -> None:
    text = _tools_text(Config(sandbox_isolation="inprocess", audit=False))
    assert "in-process, behind the RestrictedPython guards only" in text


def test_report_when_the_kernel_has_no_walls(monkeypatch) -> None:
    import pyaichat.capabilities.sandbox as sandbox

    down = confine.Walls(0, False, (), ("this kernel has no Landlock",))
    monkeypatch.setattr(sandbox, "probe_walls", lambda: down)
    monkeypatch.setattr(confine, "probe", lambda: down)
    monkeypatch.setattr(sandbox, "isolation_mode", lambda setting: "fork")
    text = "\n".join(walls_report("fork"))
    assert "Landlock: not available" in text and "seccomp: not available" in text
    assert "(down: this kernel has no Landlock)" in text and "a wall is down" in text
