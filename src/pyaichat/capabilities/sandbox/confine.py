"""The kernel wall around the forked child: Landlock (files, TCP, signals) and a seccomp-BPF filter (sockets,
exec, new processes, signals to others, ptrace, cross-process memory), raised after ``fork`` and before any
snippet code runs. Once up, no Python code in the child — guarded or not — can lift them.

Why raw system calls through ``ctypes`` and not the ``landlock`` / ``pyseccomp`` packages: the first is a
development release, the second needs the system's libseccomp (not on every machine) and was last released in
2021; the three Landlock calls and one ``prctl`` with a 60-instruction BPF program are small enough to own,
cost nothing at start-up and have no dependency to go missing. Everything is detected at run time
(``probe``): where the kernel (or the architecture) lacks a feature the child runs without that wall and
``status()`` says so.

What the child can still do: read (only read) the interpreter's own files, site-packages, the system's shared
libraries and time-zone data; use memory and CPU up to its resource limits; start threads (numpy/OpenBLAS);
signal itself. What it cannot: write or create any file, read anything else (``/proc/self/mem``, ``$HOME``,
``/etc/passwd``), create a socket of any family, ``execve``, ``fork`` or ``clone`` a process, signal or trace
another process, read or write another process's memory, enter new namespaces, use io_uring, bpf, userfaultfd
or the keyring, read the kernel log, push characters into a terminal.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import struct
import sys
import sysconfig
from dataclasses import dataclass

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

# -- seccomp (uapi/linux/seccomp.h, filter.h, audit.h) -------------------------------------------------------
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_GET_ACTION_AVAIL = 2
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_CLONE_THREAD = 0x00010000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_X32_BIT = 0x40000000
# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
# offsets in struct seccomp_data
_OFF_NR = 0
_OFF_ARCH = 4


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of syscall argument ``i`` (little-endian: x86_64 and aarch64)."""
    return 16 + 8 * i


@dataclass(frozen=True)
class _Arch:
    audit: int
    seccomp: int
    deny: dict[str, int]  # refused outright (EPERM)
    clone: int
    clone3: int
    kill: int
    tgkill: int
    ioctl: int
    prlimit64: int  # allowed on itself only: another process's limits (the parent's CPU time) are not its own
    x32: bool = False


# Syscalls refused outright. Numbers: arch/x86/entry/syscalls/syscall_64.tbl and
# include/uapi/asm-generic/unistd.h.
_X86_64 = _Arch(
    audit=0xC000003E,
    seccomp=317,
    deny={
        "socket": 41, "socketpair": 53, "execve": 59, "execveat": 322, "fork": 57, "vfork": 58, "tkill": 200,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_open": 434,
        "pidfd_getfd": 438, "pidfd_send_signal": 424, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
        "unshare": 272, "setns": 308, "mount": 165, "bpf": 321, "userfaultfd": 323, "perf_event_open": 298,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 250, "add_key": 248,
        "request_key": 249, "process_madvise": 440, "kcmp": 312, "syslog": 103,
        # another process's priority, scheduling class, CPU set or memory placement (the parent's too)
        "setpriority": 141, "ioprio_set": 251, "sched_setparam": 142, "sched_setscheduler": 144,
        "sched_setaffinity": 203, "sched_setattr": 314, "migrate_pages": 256, "move_pages": 279,
    },
    clone=56, clone3=435, kill=62, tgkill=234, ioctl=16, prlimit64=302, x32=True,
)  # fmt: skip
_AARCH64 = _Arch(
    audit=0xC00000B7,
    seccomp=277,
    deny={
        "socket": 198, "socketpair": 199, "execve": 221, "execveat": 281, "tkill": 130, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_open": 434, "pidfd_getfd": 438,
        "pidfd_send_signal": 424, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "unshare": 97,
        "setns": 268, "mount": 40, "bpf": 280, "userfaultfd": 282, "perf_event_open": 241,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 219, "add_key": 217,
        "request_key": 218, "process_madvise": 440, "kcmp": 272, "syslog": 116,
        "setpriority": 140, "ioprio_set": 30, "sched_setparam": 118, "sched_setscheduler": 119,
        "sched_setaffinity": 122, "sched_setattr": 274, "migrate_pages": 238, "move_pages": 239,
    },
    clone=220, clone3=435, kill=129, tgkill=131, ioctl=29, prlimit64=261,
)  # fmt: skip
_ARCHES = {"x86_64": _X86_64, "amd64": _X86_64, "aarch64": _AARCH64, "arm64": _AARCH64}


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@dataclass(frozen=True)
class Walls:
    """What the kernel offers here, found once in the parent (``probe``)."""

    landlock_abi: int  # 0: no Landlock
    seccomp: bool
    read_paths: tuple[str, ...]
    why_not: tuple[str, ...] = ()  # one phrase per missing wall
    arch: _Arch | None = None
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


def _seccomp_available(libc: ctypes.CDLL, arch: _Arch) -> bool:
    action = ctypes.c_uint32(_RET_ERRNO)
    return libc.syscall(ctypes.c_long(arch.seccomp), ctypes.c_uint(_SECCOMP_GET_ACTION_AVAIL),
                        ctypes.c_uint(0), ctypes.byref(action)) == 0  # fmt: skip


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
    arch = _ARCHES.get(platform.machine().lower())
    seccomp = False
    if arch is None:
        why.append(f"no seccomp filter for the {platform.machine()} architecture")
    else:
        seccomp = _seccomp_available(libc, arch)
        if not seccomp:
            why.append("this kernel has no seccomp filters")
    if not seccomp or arch is None:
        walls = Walls(abi, False, read_paths() if abi else (), tuple(why))
    else:
        template, offsets = _bpf_template(arch)
        walls = Walls(abi, True, read_paths() if abi else (), tuple(why), arch, template, offsets)
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
        lines.append("seccomp: no sockets, exec, new processes, ptrace or signals to other processes")
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
                access = _FS_READ_FILE | (0 if os.path.isfile(path) else _FS_READ_DIR)
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


_ruleset: tuple[int, int, Walls] | None = None  # (pid that made it, fd, for which walls)


def prepared_ruleset(walls: Walls) -> int:
    """The parent's Landlock ruleset fd for ``walls`` (made on first use, kept open, close-on-exec); -1 when
    there is no Landlock. Call before ``fork``; the child passes it to ``raise_walls``."""
    global _ruleset
    if not walls.landlock_abi:
        return -1
    found = _ruleset
    if found is not None and found[0] == os.getpid() and found[2] is walls:
        return found[1]
    libc = libc_handle()
    if libc is None:
        return -1
    fd = _make_ruleset(libc, walls.landlock_abi, walls.read_paths)
    if found is not None and found[0] == os.getpid():
        os.close(found[1])
    _ruleset = (os.getpid(), fd, walls)
    return fd


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _bpf_template(arch: _Arch) -> tuple[bytes, tuple[int, ...]]:
    """The program with pid 0 and the byte offsets where the child writes its pid."""
    program = bpf_program(arch, 0)
    marker = _insn(_JEQ_K, 0, 0, 1)
    loads = _insn(_LD_W_ABS, _arg_low(0))
    offsets = tuple(
        i + 4
        for i in range(8, len(program), 8)
        if program[i : i + 8] == marker and program[i - 8 : i] == loads
    )
    return program, offsets


def bpf_program(arch: _Arch, pid: int) -> bytes:
    """The filter: a deny-list over an allow-everything default. Landlock covers the file system, so this only
    has to close what Landlock does not: the rest of the kernel's ways out of a process."""
    deny = _insn(_RET_K, _RET_ERRNO | errno.EPERM)
    allow = _insn(_RET_K, _RET_ALLOW)
    prog = [
        _insn(_LD_W_ABS, _OFF_ARCH),
        _insn(_JEQ_K, arch.audit, 1, 0),
        _insn(_RET_K, _RET_KILL_PROCESS),  # another ABI's numbering (i386 on x86_64): nothing matches
        _insn(_LD_W_ABS, _OFF_NR),
    ]
    if arch.x32:
        prog += [_insn(_JGE_K, _X32_BIT, 0, 1), deny]
    for nr in sorted(arch.deny.values()):
        prog += [_insn(_JEQ_K, nr, 0, 1), deny]
    # clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes glibc fall back to clone.
    prog += [_insn(_JEQ_K, arch.clone3, 0, 1), _insn(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    # clone: threads only (CLONE_THREAD); the first argument is the flags on x86_64 and aarch64.
    prog += [_insn(_JEQ_K, arch.clone, 0, 4), _insn(_LD_W_ABS, _arg_low(0)),
             _insn(_JSET_K, _CLONE_THREAD, 0, 1), allow, deny]  # fmt: skip
    # kill / tgkill: only this process itself (raise(), os.abort(), pthread_kill of its own threads).
    for nr in (arch.kill, arch.tgkill):
        prog += [
            _insn(_JEQ_K, nr, 0, 4),
            _insn(_LD_W_ABS, _arg_low(0)),
            _insn(_JEQ_K, pid, 0, 1),
            allow,
            deny,
        ]
    # prlimit64: its own limits only (pid 0 means itself: glibc getrlimit/setrlimit), never the parent's.
    prog += [
        _insn(_JEQ_K, arch.prlimit64, 0, 6),
        _insn(_LD_W_ABS, _arg_low(0)),
        _insn(_JEQ_K, pid, 0, 1),
        allow,
        _insn(_JEQ_K, 0, 0, 1),
        allow,
        deny,
    ]
    # ioctl: no faked terminal input.
    prog += [_insn(_JEQ_K, arch.ioctl, 0, 5), _insn(_LD_W_ABS, _arg_low(1)), _insn(_JEQ_K, _TIOCSTI, 2, 0),
             _insn(_JEQ_K, _TIOCLINUX, 1, 0), allow, deny]  # fmt: skip
    prog.append(allow)
    return b"".join(prog)


# (walls, program, fprog), built in the parent before the first fork; a child patches its copy-on-write copy.
_filter: tuple[Walls, ctypes.Array[ctypes.c_char], _SockFprog] | None = None


def _prepared_filter(walls: Walls) -> tuple[ctypes.Array[ctypes.c_char], _SockFprog]:
    """The seccomp program as the kernel takes it, built once: assembling the ctypes objects in a fresh child
    costs about 200 µs of page faults, patching two words does not."""
    global _filter
    found = _filter
    if found is None or found[0] is not walls:
        program = ctypes.create_string_buffer(walls.bpf_template, len(walls.bpf_template))
        fprog = _SockFprog(len(walls.bpf_template) // 8, ctypes.cast(program, ctypes.c_void_p))
        found = _filter = (walls, program, fprog)
    return found[1], found[2]


def _seccomp(libc: ctypes.CDLL, walls: Walls) -> None:
    program, fprog = _prepared_filter(walls)
    pid = os.getpid()
    for offset in walls.pid_offsets:
        struct.pack_into("=I", program, offset, pid)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise _fail("prctl(PR_SET_SECCOMP)")


def prepare_in_parent(walls: Walls) -> int:
    """Before ``fork``: the Landlock ruleset (returned, -1 without Landlock) and the seccomp program, so the
    child only has to hand them to the kernel. Raises ``ConfineError``."""
    if walls.seccomp and walls.bpf_template:
        _prepared_filter(walls)
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
        _seccomp(libc, walls)
