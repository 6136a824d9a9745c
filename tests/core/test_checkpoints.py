"""Checkpoints' parts on their own: the link (descriptors and attachments), what a copy holds of its own
memory, how an end is named and which ends are crashes, a GPU context, the person's threads, what the kernel
counts around an input, what continues across a jump; and checkpoints with piped input (crash and /undo),
and the one sentence where there are none."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from pyaichat.checkpoints import copy, effects, memory
from pyaichat.checkpoints.link import Link, LinkClosed
from pyaichat.checkpoints.supervisor import _is_crash, describe_end
from timeouts import HANG_GUARD

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="needs fork()")


# -- the link ----------------------------------------------------------------------------------------------
def test_a_link_carries_messages_descriptors_and_attachments_and_says_when_the_other_end_is_gone() -> None:
    one, two = Link.pair()
    ours, theirs = Link(one), Link(two)
    r, w = os.pipe()
    try:
        assert theirs.poll() == []  # nothing yet: it does not wait

        def sending() -> None:  # 3 MB do not fit in the socket's buffer: the other end reads meanwhile
            ours.send({"op": "first"})
            ours.send({"op": "with", "n": 1}, fds=(r,), blob=b"\x00" * 3_000_000)
            ours.send({"op": "last"})

        sender = threading.Thread(target=sending)
        sender.start()
        got = [theirs.receive(timeout=30) for _ in range(3)]
        sender.join(30)
        assert [m["op"] for m in got] == ["first", "with", "last"]
        assert got[1]["_blob"] == b"\x00" * 3_000_000 and len(got[1]["_fds"]) == 1
        os.write(w, b"through")
        assert os.read(got[1]["_fds"][0], 7) == b"through"  # the same pipe, passed along
        os.close(got[1]["_fds"][0])
        ours.close()
        with pytest.raises(LinkClosed):
            theirs.receive(timeout=5)
    finally:
        os.close(r)
        os.close(w)
        theirs.close()


def test_the_last_messages_of_a_process_that_ended_are_read_before_its_end() -> None:
    """A session that takes a checkpoint, starts an input and crashes leaves both messages and its end in
    the supervisor's socket at once: the copy (and its descriptor) and the crashing input must not be lost
    with the end, or the crash resumes an older copy and the newest one is never let go."""
    one, two = Link.pair()
    ours, theirs = Link(one), Link(two)
    r, w = os.pipe()
    try:
        ours.send({"op": "checkpoint", "pid": 1}, fds=(r,))
        ours.send({"op": "running", "number": 7})
        ours.close()
        got = theirs.poll()
        assert [m["op"] for m in got] == ["checkpoint", "running"]
        assert len(got[0]["_fds"]) == 1
        os.close(got[0]["_fds"][0])
        assert theirs.closed  # the end came after them
        with pytest.raises(LinkClosed):
            theirs.poll()
    finally:
        os.close(r)
        os.close(w)
        theirs.close()


@needs_fork
def test_a_session_that_crashed_while_a_message_to_it_failed_still_ends_for_the_supervisor() -> None:
    """A notice sent to a session that has just crashed fails; the supervisor must still read what the
    session said last (the input it was running) and see it end (then resume a copy, or leave), not wait for
    a read that never comes."""
    import signal
    import time

    from pyaichat.checkpoints.supervisor import Supervisor

    one, two = Link.pair()
    pid = os.fork()
    if pid == 0:  # the session: it crashes at once
        one.close()
        Link(two).send({"op": "running", "number": 7, "source": "lib.run(x)"})
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGSEGV)
        os._exit(1)
    two.close()
    supervisor = Supervisor(Link(one), pid, os.getpgrp(), 1.0)
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    supervisor._tell({"op": "memory", "used": 0, "budget": 1})  # fails: the session is gone
    ended: list[int] = []
    loop = threading.Thread(target=lambda: ended.append(supervisor._loop()), daemon=True)
    loop.start()
    loop.join(10)
    assert ended, "the supervisor never saw the session end"
    assert os.WIFSIGNALED(ended[0]) and os.WTERMSIG(ended[0]) == signal.SIGSEGV  # no copy: it leaves so
    assert supervisor.running == {"number": 7, "source": "lib.run(x)"}  # the sentence can name the input


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0].decode()
    except OSError:
        return ""


# -- memory ------------------------------------------------------------------------------------------------
def test_the_copies_own_memory_is_what_they_hold_that_the_live_session_does_not() -> None:
    live = memory.Usage()
    live.rss, live.pss = 100 << 20, 60 << 20  # 40 MB of its pages are shared with the copies
    copy_a, copy_b = memory.Usage(), memory.Usage()
    copy_a.pss, copy_a.tables = 30 << 20, 1 << 20
    copy_b.pss = 20 << 20
    # every page is counted once over the three (Σ Pss): 110 MB in all, 100 of them the live session's
    assert memory.held_by_copies(live, [copy_a, copy_b]) == (10 << 20) + (1 << 20)
    assert memory.size_text(1536 << 20) == "1.5 GB" and memory.size_text(12 << 10) == "12 kB"


def test_a_process_memory_is_read_from_the_kernel() -> None:
    found = memory.usage(os.getpid())
    if found is None:
        pytest.skip("no /proc/<pid>/smaps_rollup here")
    assert found.rss > 0 and 0 < found.pss <= found.rss and found.tables > 0
    assert memory.budget(0.5) == 512 << 20


# -- how a session ended -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "words", "crash"),
    [
        (11, "a segmentation fault", True),
        (9, "SIGKILL (killed by the system when memory ran out, or by someone)", True),
        (6, "an abort (SIGABRT)", True),
        (3 << 8, "exit code 3 without leaving the REPL (os._exit)", True),
        (2, "signal SIGINT", False),
        (15, "signal SIGTERM", False),
        (1, "signal SIGHUP", False),
    ],
)
def test_how_a_session_ended_is_named_and_which_ends_are_crashes(
    status: int, words: str, crash: bool
) -> None:
    assert describe_end(status) == words
    assert _is_crash(status) is crash


# -- what a fork would break, and what it leaves behind ---------------------------------------------------
def test_an_initialised_cuda_context_turns_checkpoints_off(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = types.SimpleNamespace(is_initialized=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    assert copy.gpu_context() is None  # torch loaded, no context: a fork is fine
    cuda.is_initialized = lambda: True
    assert copy.gpu_context() == "a CUDA context (torch)"


def test_the_persons_threads_are_told_apart_from_pyaichats() -> None:
    stop = threading.Event()
    mine = threading.Thread(target=stop.wait, name="my-worker", daemon=True)
    ours = threading.Thread(target=stop.wait, name="pyaichat-autosave", daemon=True)
    mine.start()
    ours.start()
    try:
        names = copy.person_threads(threading.enumerate())
        assert "my-worker" in names and "pyaichat-autosave" not in names
        assert threading.main_thread().name not in names
    finally:
        stop.set()


def test_the_kernel_counts_an_inputs_files_processes_and_descriptors(tmp_path: Path) -> None:
    window = effects.Window.open(7, "...")
    with open(tmp_path / "out.bin", "wb") as fh:
        fh.write(os.urandom(200_000))
        fh.flush()
        os.fsync(fh.fileno())
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    kept = open(tmp_path / "kept.txt", "w")  # noqa: SIM115 - still open when the window closes
    try:
        window.close()
        if not os.path.exists("/proc/thread-self/io"):
            pytest.skip("no per-thread I/O counters here")
        assert window.wrote >= 200_000
        assert window.children
        assert str(tmp_path / "kept.txt") in window.opened.values()
        state = effects.fd_state(kept.fileno(), str(tmp_path / "kept.txt"))
        assert state is not None and state["pos"] == 0
    finally:
        kept.close()


def test_a_tcp_connections_traffic_is_seen_through_its_descriptor() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    peer, _ = server.accept()
    try:
        target = os.readlink(f"/proc/self/fd/{client.fileno()}")
        before = effects.fd_state(client.fileno(), target)
        client.sendall(b"commit;")
        peer.recv(16)
        after = effects.fd_state(client.fileno(), target)
        assert before is not None and after is not None and before["kind"] == "tcp"
        assert before["counters"] != after["counters"]
    finally:
        for sock in (client, peer, server):
            sock.close()


# -- what continues across a jump --------------------------------------------------------------------------
def test_the_story_of_a_session_carries_over_to_another(tmp_path: Path) -> None:
    from pyaichat.assemble import assemble
    from pyaichat.checkpoints import carry
    from pyaichat.configuration.config import Config
    from pyaichat.modes import Mode
    from pyaichat.ports import BaseFrontEnd
    from pyaichat.runtime import LocalRuntime
    from pyaichat.session import Session

    def controller():  # type: ignore[no-untyped-def]
        return assemble(LocalRuntime(Session(config=Config(model="openai/a"))), BaseFrontEnd())

    left, taken = controller(), controller()
    left.handle("x = 1")
    left.handle("y = 2")
    left.assistant.restore(
        [{"question": "why?", "messages": [{"role": "user", "content": "why?"}], "answer": "A."}], []
    )
    left.journal.approve("y = 2", "openai/a", 2)
    left.settings.replace(model="openai/b")
    left.set_mode(Mode.ASSISTANT)
    blob = carry.gather(left, None, {"undone": [2]})
    parts = carry.unpack(blob)
    carry.apply(taken, None, parts, mode_of=Mode)
    assert [e.source for e in taken.runtime.history] == ["x = 1", "y = 2"]
    assert taken.runtime.session.next_number == 3  # the numbering goes on
    assert [t.question for t in taken.assistant.memory.turns] == ["why?"]
    assert taken.journal.approved[0].code == "y = 2"
    assert taken.config.model == "openai/b" and taken.mode is Mode.ASSISTANT
    assert parts["undone"] == [2]
    assert "x" not in taken.runtime.session.namespace  # the state is not carried: only the story is


# -- with piped input, and where there are none ------------------------------------------------------------
def pyaichat(stdin: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYAICHAT_")}
    environ.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), **env)
    return subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=HANG_GUARD,
    )


@needs_fork
def test_piped_input_with_checkpoints_on_survives_a_crash_and_undoes(tmp_path: Path) -> None:
    script = (
        "x = 1\nx = 2\n/undo\nprint('x is', x)\nimport ctypes\nctypes.string_at(0)\nprint('still', x)\n"
        "for i in range(2):\n    print('loop', i)\ny = 5\nprint('y is', y)\n"
    )
    done = pyaichat(script, tmp_path, PYAICHAT_CHECKPOINTS="on")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Back to before input 2 (`x = 2`): input 2 undone." in out
    assert "x is 1" in out and "still 1" in out
    assert (
        "The session ended with a segmentation fault while running input 5 (`ctypes.string_at(0)`); it is "
        "back as it was before that input." in out
    )
    assert "loop 0\nloop 1\n" in out and "y is 5" in out  # the lines after the crash, read on in order


@needs_fork
def test_a_piped_sessions_exit_status_is_its_own_through_the_supervisor(tmp_path: Path) -> None:
    done = pyaichat("x = 1\nimport sys; sys.exit(7)\n", tmp_path, PYAICHAT_CHECKPOINTS="on")
    assert done.returncode == 7


def test_without_checkpoints_undo_takes_back_proposals_and_says_why(tmp_path: Path) -> None:
    done = pyaichat("x = 1\n/undo\n/checkpoints\n/redo\n", tmp_path)
    assert done.returncode == 0
    why = 'Checkpoints are off for piped input (checkpoints = "on" keeps them).'
    assert f"Nothing to undo: no approved proposal has run since the session started. ({why}" in done.stdout
    assert done.stdout.count(why) == 3
    off = pyaichat("/checkpoints\n", tmp_path, PYAICHAT_CHECKPOINTS="off")
    assert "Checkpoints are off (the checkpoints setting)." in off.stdout
