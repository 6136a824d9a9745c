"""Ctrl-C, dead and restarted kernels: the kernel is interrupted (not pyaichat) and the REPL stays up."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from kernel_process import attach

from fakes.recorder import Recorder
from pyaichat.assemble import assemble
from pyaichat.configuration.config import Config
from pyaichat.runtime import KernelUnavailable, connect
from pyaichat.runtime.kernel_connection import DEAD, DEAD_OWN, RESTARTED


def ctrl_c_after(seconds: float) -> threading.Timer:
    """Press Ctrl-C (SIGINT to this process, as the terminal does) after ``seconds``."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.parametrize("how", ["existing", "started"])
def test_ctrl_c_interrupts_the_kernel_not_pyaichat(kernel, how, capsys):
    # --existing: an interrupt_request on the control channel; --kernel: the manager signals its own kernel
    runtime = (
        attach(kernel) if how == "existing" else connect.start("python3", Config(audit=False, color=False))
    )
    try:
        runtime.run("import time\nsurvivor = 7")
        started = time.monotonic()
        ctrl_c_after(1.0)
        result = runtime.run("time.sleep(30)\nafter = 1")
        took = time.monotonic() - started
        assert took < 15, took
        assert result.interrupted and not result.ok
        assert "KeyboardInterrupt" in capsys.readouterr().err
        # the kernel lives on with its variables; the interrupted cell stopped before its second line
        assert runtime.run("survivor * 6").output.strip() == "42"
        assert runtime.run("'after' in dir()").output.strip() == "False"
        assert runtime.call("get_type", {"expr": "survivor"}).ok
    finally:
        runtime.close()
    if how == "started":
        assert not runtime.kernel.manager.is_alive()  # pyaichat shut down the kernel it started


def test_dead_kernel_is_one_sentence_and_the_controller_stays_up(kernel):
    runtime = attach(kernel)
    front = Recorder()
    ctrl = assemble(runtime, front)
    try:
        ctrl.handle("x = 1")
        kernel.kill()
        deadline = time.monotonic() + 10
        while runtime.kernel.alive() and time.monotonic() < deadline:  # the heartbeat notices within seconds
            time.sleep(0.1)
        ctrl.handle("x + 1")
        ctrl.handle("print('still here')")
        assert [e.message for e in front.of("error")] == [DEAD, DEAD]
        result = runtime.call("get_type", {"expr": "x"})
        assert not result.ok and result.error == DEAD
        with pytest.raises(KernelUnavailable):
            runtime.run("1")
    finally:
        runtime.close()


def test_kernel_dying_while_running_code(kernel, capsys):
    runtime = attach(kernel)
    try:
        started = time.monotonic()
        with pytest.raises(KernelUnavailable, match="died while running"):
            runtime.run("import os, time\nprint('going', flush=True)\ntime.sleep(0.5)\nos._exit(1)")
        assert time.monotonic() - started < 15
        assert "going" in capsys.readouterr().out
    finally:
        runtime.close()


def test_restarted_kernel_is_one_sentence_and_the_helper_comes_back(capsys):
    runtime = connect.start("python3", Config(audit=False, color=False))
    try:
        runtime.run("before_restart = 1")
        assert runtime.call("get_type", {"expr": "before_restart"}).ok
        runtime.kernel.manager.restart_kernel(now=True)
        time.sleep(0.5)
        result = runtime.run("before_restart")
        err = capsys.readouterr().err
        assert RESTARTED in err and "NameError" in err and not result.ok
        runtime.run("after_restart = [1, 2]")
        started = time.monotonic()
        typed = runtime.call("get_type", {"expr": "after_restart"})
        assert typed.ok and "list" in typed.text, typed
        assert time.monotonic() - started < 5
    finally:
        runtime.close()


def test_a_kernel_pyaichat_started_that_dies_says_so():
    runtime = connect.start("python3", Config(audit=False, color=False))
    try:
        runtime.run("y = 1")
        os.kill(runtime.kernel.manager.provisioner.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while runtime.kernel.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(KernelUnavailable) as info:
            runtime.run("y")
        assert str(info.value) == DEAD_OWN
        assert runtime.call("get_type", {"expr": "y"}).error == DEAD_OWN
    finally:
        runtime.close()
