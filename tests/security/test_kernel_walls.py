# ruff: noqa: SIM115  (files opened in the confined child are meant to fail)
"""The kernel wall around the forked child (Landlock + seccomp), proved from inside.

Part 1 runs plain Python callables in the confined child with the RestrictedPython guards OFF (``run_forked``
with the walls of ``confine.probe()``), so each test shows that the kernel itself refuses, with the errno.
Part 2 attacks through the session's own functions and the snippet's own classes, which the sandbox now lets
run behind the wall: every attempt ends denied or harmless, and the session is unchanged.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sbx_helpers import assert_unchanged, leaked, make_session, snapshot

from pyaichat.capabilities import call
from pyaichat.capabilities.sandbox import confine
from pyaichat.capabilities.sandbox.isolation import fork_available, run_forked

WALLS = confine.probe() if fork_available() else None
pytestmark = pytest.mark.skipif(
    WALLS is None or not WALLS.complete, reason="no Landlock + seccomp here: " + str(WALLS and WALLS.why_not)
)


def confined(job: Callable[[], Any]) -> Any:
    """Run ``job`` unguarded in the confined child; return what it returned (or the errno name it raised)."""

    def wrapped() -> dict[str, Any]:
        try:
            return {"ok": True, "value": job()}
        except OSError as exc:
            return {"ok": True, "value": errno.errorcode.get(exc.errno or 0, str(exc.errno))}

    result = run_forked(wrapped, 5.0, WALLS, require_walls=True)
    assert result.get("ok"), result
    return result["value"]


# -- part 1: each wall, guards off ---------------------------------------------------------------------------
def test_no_file_can_be_written_anywhere(tmp_path) -> None:
    target = tmp_path / "w.txt"
    existing = tmp_path / "existing.txt"
    existing.write_text("before")
    assert confined(lambda: open(target, "w").close()) == "EACCES"
    assert confined(lambda: open(existing, "a").write("x")) == "EACCES"
    assert confined(lambda: os.truncate(existing, 0)) == "EACCES"
    assert confined(lambda: os.mkdir(tmp_path / "d")) == "EACCES"
    assert confined(lambda: os.unlink(existing)) == "EACCES"
    assert confined(lambda: os.symlink("/etc/passwd", tmp_path / "l")) == "EACCES"
    assert confined(lambda: open("/dev/shm/pyaichat-sbx", "w").close()) == "EACCES"
    assert not target.exists() and existing.read_text() == "before"
    # Even a library's own directory is read-only.
    assert confined(lambda: open(os.path.join(os.path.dirname(os.__file__), "x.py"), "w").close()) == "EACCES"


def test_nothing_outside_the_library_paths_can_be_read(tmp_path) -> None:
    private = tmp_path / "notes.txt"
    private.write_text("private")
    assert confined(lambda: private.read_text()) == "EACCES"
    assert confined(lambda: open("/etc/passwd").read()) == "EACCES"
    assert confined(lambda: os.listdir(tmp_path)) == "EACCES"
    assert confined(lambda: open(os.path.expanduser("~/.bashrc")).read()) in ("EACCES", "ENOENT")


def test_proc_self_mem_and_the_parents_proc_files_are_closed() -> None:
    assert confined(lambda: open("/proc/self/mem", "r+b")) == "EACCES"
    assert confined(lambda: open("/proc/self/mem", "rb")) == "EACCES"
    assert confined(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read()) == "EACCES"
    assert confined(lambda: open(f"/proc/{os.getppid()}/mem", "rb")) == "EACCES"


@pytest.mark.parametrize(
    "family",
    [socket.AF_INET, socket.AF_INET6, socket.AF_UNIX, socket.AF_PACKET, socket.AF_NETLINK],
    ids=["inet", "inet6", "unix", "packet", "netlink"],
)
def test_no_socket_of_any_family(family: int) -> None:
    assert confined(lambda: socket.socket(family, socket.SOCK_DGRAM)) == "EPERM"
    assert confined(lambda: socket.socketpair()) == "EPERM"


def test_no_exec_and_no_new_process(tmp_path) -> None:
    marker = tmp_path / "ran"
    assert confined(lambda: os.execv("/bin/sh", ["sh", "-c", f"touch {marker}"])) == "EPERM"
    assert confined(lambda: os.fork()) == "EPERM"
    assert confined(lambda: os.posix_spawn("/bin/sh", ["sh", "-c", f"touch {marker}"], {})) == "EPERM"
    assert confined(lambda: subprocess.run(["/bin/sh", "-c", f"touch {marker}"], check=False)) == "EPERM"
    # glibc's system() cannot start its shell: it reports exit status 127, and nothing ran.
    assert confined(lambda: os.system(f"touch {marker}")) == 127 << 8
    assert not marker.exists()


def test_clone3_is_unavailable_and_clone_only_makes_threads() -> None:
    def raw_clone3() -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        args = (ctypes.c_uint64 * 11)()  # struct clone_args, flags 0: a new process if it were allowed
        rc = libc.syscall(ctypes.c_long(435), args, ctypes.c_size_t(88))
        return errno.errorcode.get(ctypes.get_errno(), rc) if rc < 0 else rc

    assert confined(raw_clone3) == "ENOSYS"

    def threads() -> list[int]:
        out: list[int] = []
        workers = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return sorted(out)

    assert confined(threads) == [0, 1, 2, 3]


def test_no_signal_to_another_process() -> None:
    parent = os.getpid()
    assert confined(lambda: os.kill(parent, signal.SIGTERM)) == "EPERM"
    assert confined(lambda: os.kill(0, signal.SIGTERM)) == "EPERM"  # the whole process group
    assert confined(lambda: os.kill(-1, signal.SIGTERM)) == "EPERM"
    assert confined(lambda: os.kill(os.getpid(), 0)) is None  # itself: fine


def test_no_change_to_another_process_limits_or_scheduling() -> None:
    import resource

    parent = os.getpid()
    before = resource.prlimit(parent, resource.RLIMIT_CPU)
    assert confined(lambda: resource.prlimit(parent, resource.RLIMIT_CPU, (1, 1))) == "EPERM"
    assert confined(lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE)) == "EPERM"  # not even a look
    assert resource.prlimit(parent, resource.RLIMIT_CPU) == before
    assert confined(lambda: os.setpriority(os.PRIO_PROCESS, parent, 19)) == "EPERM"
    assert confined(lambda: os.setpriority(os.PRIO_PGRP, 0, 19)) == "EPERM"  # the whole group
    assert confined(lambda: os.sched_setaffinity(parent, {0})) == "EPERM"
    policy = os.SCHED_IDLE
    assert confined(lambda: os.sched_setscheduler(parent, policy, os.sched_param(0))) == "EPERM"
    # its own limits still work (glibc's getrlimit/setrlimit are prlimit64 on pid 0)
    assert confined(lambda: resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 0) is True
    assert confined(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0))) is None


def test_no_descriptor_of_the_session_survives_into_the_child(tmp_path) -> None:
    """An open file, pipe or socket of the session would be a way out no wall covers: all are closed,
    however high their number."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = min(hard, 1 << 20) - 1  # the highest number this process may use
    resource.setrlimit(resource.RLIMIT_NOFILE, (high + 1, hard))
    fh = open(tmp_path / "session.txt", "w")
    try:
        os.dup2(fh.fileno(), high)
        open_fds = {fh.fileno(), high}
        assert confined(lambda: [fd for fd in open_fds if _is_open(fd)]) == []
    finally:
        os.close(high)
        fh.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert (tmp_path / "session.txt").read_text() == ""


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_no_ptrace_and_no_cross_process_memory() -> None:
    parent = os.getpid()

    def syscall(nr: int, *args: int) -> str | int:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        rc = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
        return errno.errorcode.get(ctypes.get_errno(), rc) if rc < 0 else rc

    arch = WALLS.arch
    assert arch is not None
    ptrace_attach = 16
    assert confined(lambda: syscall(arch.deny["ptrace"], ptrace_attach, parent, 0, 0)) == "EPERM"
    assert confined(lambda: syscall(arch.deny["process_vm_readv"], parent, 0, 0, 0, 0, 0)) == "EPERM"
    assert confined(lambda: syscall(arch.deny["pidfd_open"], parent, 0)) == "EPERM"
    assert confined(lambda: syscall(arch.deny["io_uring_setup"], 8, 0)) == "EPERM"


def test_lazy_imports_and_library_data_still_work() -> None:
    def job() -> dict[str, Any]:
        import zoneinfo

        fresh = [
            m
            for m in ("csv", "difflib", "numpy.polynomial.laguerre", "xml.dom.minidom")
            if m not in sys.modules
        ]
        for name in fresh:
            __import__(name)
        import numpy as np

        rng = np.random.default_rng(0)
        product = float((rng.random((200, 200)) @ rng.random((200, 200))).sum())  # BLAS, maybe threads
        oslo = str(zoneinfo.ZoneInfo("Europe/Oslo"))
        return {"fresh": fresh, "blas": product > 0, "tz": oslo, "cpus": os.cpu_count()}

    out = confined(job)
    assert out["blas"] and out["tz"] == "Europe/Oslo" and out["cpus"]


def test_status_names_each_wall() -> None:
    lines = confine.status()
    assert any(line.startswith(f"Landlock (ABI {WALLS.landlock_abi})") for line in lines)
    assert any(line.startswith("seccomp: no sockets") for line in lines)


def test_a_wall_that_fails_to_go_up_ends_the_run(monkeypatch) -> None:
    from pyaichat.capabilities.sandbox import isolation

    def broken(*args: Any) -> None:
        raise confine.ConfineError(errno.EINVAL, "landlock_restrict_self: Invalid argument")

    monkeypatch.setattr(isolation, "raise_walls", broken)
    result = run_forked(lambda: {"ok": True, "text": "ran"}, 5.0, WALLS, require_walls=True)
    assert not result["ok"] and "could not confine" in result["error"]


def test_without_the_walls_the_old_guards_apply(monkeypatch) -> None:
    """A kernel without Landlock/seccomp: the run still works, under today's rules."""
    import pyaichat.capabilities.sandbox as sandbox

    monkeypatch.setattr(sandbox, "probe_walls", lambda: confine.Walls(0, False, (), ("no Landlock",)))
    session = make_session("fork")
    refused = call(session, "run_python", {"code": "helper(21)"})
    assert not refused.ok and "session's own function" in refused.error
    assert call(session, "run_python", {"code": "sum(lst)"}).text == "int\n6"


# -- part 2: through the session's own code and the snippet's own classes ------------------------------------
HOSTILE = """
import os, socket, subprocess, ctypes

def write_file(path):
    with open(path, "w") as fh:
        fh.write("pwned")
    return "wrote"

def connect(port):
    socket.create_connection(("127.0.0.1", port), timeout=1).sendall(b"hello")
    return "connected"

def run_cmd(cmd):
    return subprocess.run(cmd, shell=True).returncode

def sh(cmd):
    return os.system(cmd)

def exec_it(cmd):
    os.execv("/bin/sh", ["sh", "-c", cmd])

def with_ctypes(cmd):
    return ctypes.CDLL(None).system(cmd.encode())

def poke_memory():
    with open("/proc/self/mem", "r+b") as fh:
        return fh.read(1)

def read_file(path):
    with open(path) as fh:
        return fh.read()

def kill_parent():
    os.kill(os.getppid(), 9)

def spawn():
    return os.fork()

def environment():
    return dict(os.environ)

def get(obj, name):
    return getattr(obj, name)

def key():
    return OPENAI_API_KEY

def everything():
    return {"names": dict(globals()), "nested": [{"k": OPENAI_API_KEY}]}
"""


@pytest.fixture
def hostile(tmp_path) -> Any:
    session = make_session("fork")
    assert session.run(HOSTILE).ok
    return session


def _run(session: Any, code: str) -> Any:
    before = snapshot(session)
    result = call(session, "run_python", {"code": code})
    assert not leaked(result), result
    assert_unchanged(session, before)
    assert "Traceback" not in (result.error or "")
    return result


def test_user_function_cannot_write(hostile, tmp_path) -> None:
    target = tmp_path / "pwned.txt"
    result = _run(hostile, f"write_file({str(target)!r})")
    assert not result.ok and "PermissionError" in result.error and "Permission denied" in result.error
    assert not target.exists()


def test_user_function_cannot_connect(hostile) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.3)
    try:
        result = _run(hostile, f"connect({server.getsockname()[1]})")
        assert not result.ok and "PermissionError" in result.error
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


@pytest.mark.parametrize("func", ["run_cmd", "exec_it", "sh", "with_ctypes"])
def test_user_function_cannot_run_a_program(hostile, tmp_path, func: str) -> None:
    marker = tmp_path / f"{func}.ran"
    result = _run(hostile, f"{func}('touch {marker}')")
    if result.ok:  # os.system / libc system(): the shell could not start, exit status 127
        assert result.text.endswith(str(127 << 8)), result.text
    else:
        assert "PermissionError" in result.error or "Operation not permitted" in result.error
    assert not marker.exists()


def test_user_function_cannot_touch_process_memory_or_others(hostile) -> None:
    assert "Permission denied" in _run(hostile, "poke_memory()").error
    assert "Operation not permitted" in _run(hostile, "spawn()").error
    assert "Operation not permitted" in _run(hostile, "kill_parent()").error
    assert "Permission denied" in _run(hostile, "read_file('/etc/passwd')").error


def test_user_function_sees_no_environment_and_hands_back_no_secret(hostile) -> None:
    assert _run(hostile, "environment()").text.endswith("{}")
    result = _run(hostile, "k = key()\nk[::-1]")  # the child replaced the key before the code ran
    assert result.ok and result.text.endswith(">detcader<"), result
    for code in (
        "everything()['nested'][0]['k'][::-1]",
        "everything()['names']['OPENAI_API_KEY'][::-1]",
        "everything()['names']['cfg']['api_key'][::-1]",
        "[str(v)[::-1] for v in everything()['names'].values()]",
    ):
        _run(hostile, code)  # whatever it returns, no secret (nor its reverse) in it: ``_run`` checks


def test_user_reflection_helper_gets_no_private_name(hostile) -> None:
    for code in (
        "get(1, '__class__')",
        "get(acct, '__dict__')",
        "get(helper, '__globals__')",
        "get(helper, 'f_globals')",
    ):
        result = _run(hostile, code)
        assert not result.ok and "not allowed" in result.error, result


LOCAL_CLASS_ATTACKS = [
    ("reach-globals", "class A:\n    def __init__(self):\n        self.g = self.__init__.__globals__\nA()"),
    (
        "subclasses",
        "class A:\n    def __len__(self):\n        return len(type(self).__subclasses__())\nlen(A())",
    ),
    ("getattribute", "class A:\n    def __getattribute__(self, n):\n        return 1"),
    ("del-hook", "class A:\n    def __del__(self):\n        pass"),
    ("reduce", "class A:\n    def __reduce__(self):\n        return (print, ())"),
    ("init-subclass", "class A:\n    def __init_subclass__(cls):\n        pass"),
    ("class-cell", "class A:\n    def __eq__(self, o):\n        return __class__\nA() == 1"),
    ("super-walk", "class A:\n    def __init__(self):\n        super().__init__.__globals__\nA()"),
    ("frame-via-generator", "class A:\n    def __iter__(self):\n        yield 1\nnext(iter(A())).gi_frame"),
    ("augassign-module", "import math\nmath.pi += 1"),
    ("augassign-function", "helper.x = 0\nhelper.x += 1"),
    ("augassign-user-class", "Point.dims += 1"),
    (
        "write-via-user-function",
        "class A:\n    def __eq__(self, o):\n        return write_file('/tmp/pyaichat-x')\nA() == 1",
    ),
    (
        "parent-memory-via-user-function",
        "class A:\n    def __repr__(self):\n        return str(poke_memory())\nrepr(A())",
    ),
]


@pytest.mark.parametrize("code", [c[1] for c in LOCAL_CLASS_ATTACKS], ids=[c[0] for c in LOCAL_CLASS_ATTACKS])
def test_local_class_cannot_reach_the_parent(hostile, code: str) -> None:
    result = _run(hostile, code)
    assert not result.ok, result.text
    assert not os.path.exists("/tmp/pyaichat-x")


def test_child_changes_stay_in_the_child(hostile) -> None:
    """The child may change its copy-on-write view (a local class updating the user's list, a user method);
    the session's objects do not move."""
    result = _run(hostile, "acct.items.append(9)\nacct.owner = 'eve'\nlst.sort()\n(acct.total(), lst)")
    assert result.ok and "12" in result.text


def test_the_child_environment_is_empty_for_c_code_too(monkeypatch) -> None:
    monkeypatch.setenv("PYAICHAT_TEST_SECRET_ENV", "sk-proj-envvalue1234567890")

    def getenv() -> list[object]:
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        return [libc.getenv(b"PYAICHAT_TEST_SECRET_ENV"), libc.getenv(b"PATH"), len(os.environ)]

    assert confined(getenv) == [None, None, 0]


def test_a_single_underscore_name_is_ordinary_data() -> None:
    """``'_merge'`` (pandas' indicator column) is a name like any other; dunders are what the check is for.

    A merge with an indicator is the heaviest pandas work here: on a loaded 2-core CI machine it once took
    longer than the default 2 s, so this test gives it the time a slow machine needs (time is not its point).
    """
    session = make_session("fork", tool_timeout=15.0)
    assert session.run(HOSTILE).ok
    code = "m = df.merge(df.head(2), how='left', on='city', indicator=True)\nsorted(set(get(m, '_merge')))"
    result = _run(session, code)
    assert result.ok and "both" in result.text, result
