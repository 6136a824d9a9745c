"""The kernel wall around the forked child: Landlock (files, TCP, signals) and a seccomp-BPF filter
(``seccomp``: sockets, exec, new processes, signals to others, ptrace, cross-process and shared memory),
raised after ``fork`` and before any snippet code runs. Once up, no Python code in the child — guarded or not
— can lift them.

Why raw system calls through ``ctypes`` and not the ``landlock`` / ``pyseccomp`` packages: the first is a
development release, the second needs the system's libseccomp (not on every machine) and was last released in
2021; the three Landlock calls and one ``prctl`` with a 160-instruction BPF program are small enough to own,
cost nothing at start-up and have no dependency to go missing. Everything is detected at run time
(``probe``): where the kernel (or the architecture) lacks a feature the child runs without that wall and
``status()`` says so.

What the child can still do: read (only read) the interpreter's own files, site-packages, the system's shared
libraries and time-zone data (a preview of proposed code may read everywhere except devices, ``/proc`` and
``/sys``: ``everywhere``); use memory and CPU up to its resource limits; start threads (numpy/OpenBLAS);
signal itself. What it cannot: write or create any file (nor change one's mode, owner, times or extended
attributes, which Landlock does not cover), read anything else (``/proc/self/mem``, ``$HOME``,
``/etc/passwd``), create a socket of any family, ``execve``, ``fork`` or ``clone`` a process, signal or trace
another process, read or write another process's memory, share memory with one, enter new namespaces, use
io_uring, bpf, userfaultfd or the keyring, read the kernel log, push characters into a terminal.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import platform
import struct
import sys
import sysconfig
from dataclasses import dataclass

from . import seccomp

# -- Landlock (uapi/linux/landlock.h) ------------------------------------------------------------------------
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_ALL_V1 = (1 << 13) - 1  # execute … make_sym
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1
_NR_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on every architecture
_PR_SET_NO_NEW_PRIVS = 38


@dataclass(frozen=True)
class Walls:
    """What the kernel offers here, found once in the parent (``probe``)."""

    landlock_abi: int  # 0: no Landlock
    seccomp: bool
    read_paths: tuple[str, ...]
    why_not: tuple[str, ...] = ()  # one phrase per missing wall
    arch: seccomp.Arch | None = None
    # The seccomp program, assembled once in the parent; the child only writes its own pid into it.
    bpf_template: bytes = b""
    pid_offsets: tuple[int, ...] = ()

    @property
    def complete(self) -> bool:
        """Both walls up: the sandbox may relax the rules that only stood in for them."""
        return self.landlock_abi >= 1 and self.seccomp


# -- detection (parent) --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def libc_handle() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.prctl.restype = ctypes.c_int
        return libc
    except (OSError, AttributeError):
        return None


def _landlock_abi(libc: ctypes.CDLL) -> int:
    abi = libc.syscall(ctypes.c_long(_NR_LANDLOCK[0]), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))  # fmt: skip
    return max(int(abi), 0)


def read_paths() -> tuple[str, ...]:
    """Where the child may read: the interpreter and every library directory on ``sys.path`` (lazy imports,
    package data), the system's shared libraries (C extensions loaded late), time-zone data, and the CPU
    description OpenBLAS and ``os.cpu_count`` read. Not the current directory, not ``$HOME``, not
    ``/proc``."""
    found: list[str] = []
    sc = sysconfig.get_paths()
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable))]  # fmt: skip
    candidates += [sc.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    cwd = os.getcwd()
    for entry in sys.path:
        if entry and os.path.abspath(entry) != cwd:
            candidates.append(entry)
    candidates += ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share/zoneinfo",
                   "/sys/devices/system/cpu", "/proc/cpuinfo"]  # fmt: skip
    home = os.path.expanduser("~")
    for path in candidates:
        if not path or not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if real in ("/", home, "/home", "/root", "/tmp", "/etc", "/proc", "/usr") or real == cwd:
            continue  # a sys.path entry that would open everything
        if real not in found:
            found.append(real)
    return tuple(found)


_NEVER_READ = ("/dev", "/proc", "/sys")
_DEVICES_READ = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/proc/meminfo")


def everywhere(walls: Walls) -> Walls:
    """The walls of a preview: the same, except that files may be read anywhere but in ``/dev`` (terminals,
    shared memory), ``/proc`` and ``/sys`` — what proposed code reads (a CSV in the working directory, a
    config under ``$HOME``) it may read, and writes stay refused. Nothing read leaves the child but the
    preview the user sees."""
    if not walls.landlock_abi:
        return walls
    return dataclasses.replace(walls, read_paths=_everywhere_paths(walls.read_paths))


@functools.lru_cache(maxsize=4)
def _everywhere_paths(library_paths: tuple[str, ...]) -> tuple[str, ...]:
    found = list(library_paths)
    try:
        entries = sorted(os.listdir("/"))
    except OSError:
        entries = []
    for name in entries:
        real = os.path.realpath(os.path.join("/", name))
        if real == "/" or "/" + real.split("/")[1] in _NEVER_READ:
            continue
        if real not in found:
            found.append(real)
    found += [p for p in _DEVICES_READ if os.path.exists(p) and p not in found]
    return tuple(found)


@functools.lru_cache(maxsize=1)
def probe() -> Walls:
    """Which walls this kernel can raise (cached; call in the parent so the child needs no import)."""
    why: list[str] = []
    if not sys.platform.startswith("linux"):
        return Walls(0, False, (), ("the kernel walls need Linux",))
    libc = libc_handle()
    if libc is None:
        return Walls(0, False, (), ("the C library could not be loaded",))
    abi = _landlock_abi(libc)
    if abi < 1:
        why.append("this kernel has no Landlock (Linux 5.13+ with the landlock LSM enabled)")
    arch = seccomp.ARCHES.get(platform.machine().lower())
    filters = False
    if arch is None:
        why.append(f"no seccomp filter for the {platform.machine()} architecture")
    else:
        filters = seccomp.available(libc, arch)
        if not filters:
            why.append("this kernel has no seccomp filters")
    if not filters or arch is None:
        walls = Walls(abi, False, read_paths() if abi else (), tuple(why))
    else:
        program, offsets = seccomp.template(arch)
        walls = Walls(abi, True, read_paths() if abi else (), tuple(why), arch, program, offsets)
    if (walls.landlock_abi or walls.seccomp) and not _trial(walls):
        # Announced but unusable (a container's own seccomp profile refusing prctl, say): run behind the
        # guards instead of failing every run.
        return Walls(0, False, (), (*why, "the walls could not be raised in a trial child"))
    return walls


def _trial(walls: Walls) -> bool:
    """Raise the walls once in a throw-away child; True if they went up."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            raise_walls(walls)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def status() -> list[str]:
    """One line per wall, for ``/tools`` and the README."""
    walls = probe()
    lines = []
    if walls.landlock_abi:
        extra = []
        if walls.landlock_abi >= 4:
            extra.append("no TCP")
        if walls.landlock_abi >= 6:
            extra.append("no signals out of the sandbox")
        tail = f", {', '.join(extra)}" if extra else ""
        lines.append(
            f"Landlock (ABI {walls.landlock_abi}): no file writes, reads only under library paths{tail}"
        )
    else:
        lines.append("Landlock: not available")
    if walls.seccomp:
        lines.append(
            "seccomp: no sockets, exec, new processes, ptrace, signals to other processes or memory shared "
            "with them, no change to a file's mode, owner, times or attributes"
        )
    else:
        lines.append("seccomp: not available")
    lines.extend(f"(down: {w})" for w in walls.why_not)
    return lines


# -- raising the walls (child) -------------------------------------------------------------------------------
class ConfineError(OSError):
    """A wall the parent found available could not be raised in the child."""


def _fail(what: str) -> ConfineError:
    err = ctypes.get_errno()
    return ConfineError(err, f"{what}: {os.strerror(err)}")


def _make_ruleset(libc: ctypes.CDLL, abi: int, paths: tuple[str, ...]) -> int:
    """A Landlock ruleset fd: every right this ABI knows is handled (so denied), read rights are granted under
    ``paths``. Built in the parent, once; each child only calls ``landlock_restrict_self`` with it."""
    fs = _FS_ALL_V1
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
    if abi >= 5:
        fs |= _FS_IOCTL_DEV
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    flags = ctypes.c_uint32(0)
    ruleset = libc.syscall(ctypes.c_long(_NR_LANDLOCK[0]), buf, ctypes.c_size_t(len(attr)), flags)
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    try:
        os.set_inheritable(ruleset, False)
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                access = _FS_READ_FILE | (_FS_READ_DIR if os.path.isdir(path) else 0)
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
                kind = ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH)
                added = libc.syscall(ctypes.c_long(_NR_LANDLOCK[1]), ctypes.c_int(ruleset), kind, rule, flags)
                if added < 0:
                    raise _fail(f"landlock_add_rule({path})")
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return int(ruleset)


_rulesets: dict[tuple[int, tuple[str, ...]], int] = {}  # (pid that made it, read paths) -> fd


def prepared_ruleset(walls: Walls) -> int:
    """The parent's Landlock ruleset fd for ``walls`` (made on first use, kept open, close-on-exec); -1 when
    there is no Landlock. Call before ``fork``; the child passes it to ``raise_walls``."""
    if not walls.landlock_abi:
        return -1
    key = (os.getpid(), walls.read_paths)
    found = _rulesets.get(key)
    if found is not None:
        return found
    libc = libc_handle()
    if libc is None:
        return -1
    for stale in [k for k in _rulesets if k[0] != os.getpid()]:
        del _rulesets[stale]  # inherited from the process this one was forked from: not ours to close
    fd = _rulesets[key] = _make_ruleset(libc, walls.landlock_abi, walls.read_paths)
    return fd


def prepare_in_parent(walls: Walls) -> int:
    """Before ``fork``: the Landlock ruleset (returned, -1 without Landlock) and the seccomp program, so the
    child only has to hand them to the kernel. Raises ``ConfineError``."""
    if walls.seccomp and walls.bpf_template:
        seccomp.prepared(walls.bpf_template)
    return prepared_ruleset(walls)


def raise_walls(walls: Walls, ruleset: int | None = None) -> None:
    """In the child, before any snippet code: no_new_privs, then Landlock, then seccomp (last, so the filter
    does not have to allow the Landlock calls). ``ruleset``: the parent's ``prepared_ruleset`` (made here when
    not given). Raises ``ConfineError`` if an available wall fails."""
    libc = libc_handle()
    if libc is None or not (walls.landlock_abi or walls.seccomp):
        return
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
    if walls.landlock_abi:
        fd = (
            ruleset
            if ruleset is not None and ruleset >= 0
            else _make_ruleset(libc, walls.landlock_abi, walls.read_paths)
        )
        try:
            if libc.syscall(ctypes.c_long(_NR_LANDLOCK[2]), ctypes.c_int(fd), ctypes.c_uint32(0)) < 0:
                raise _fail("landlock_restrict_self")
        finally:
            os.close(fd)
    if walls.seccomp and walls.bpf_template:
        err = seccomp.install(libc, walls.bpf_template, walls.pid_offsets)
        if err:
            raise ConfineError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
