"""The seccomp-BPF half of the kernel wall: a deny-list over an allow-everything default, assembled once in
the parent, installed by the forked child after Landlock. Landlock covers the file system; this closes the
rest of the kernel's ways out of a process: sockets, exec, new processes, signals to and memory of other
processes, namespaces, io_uring, bpf, the keyring, faked terminal input — and memory shared with other
processes (System V shared memory, semaphores and message queues, POSIX message queues, writable shared file
mappings) — and the changes to a file that Landlock has no right for: its mode, owner, times, extended
attributes and inode flags (``chmod``, ``chown``, ``utimensat``, ``setxattr``, ``FS_IOC_SETFLAGS`` …), which
need no descriptor opened for writing.

Why shared file mappings are refused although Landlock already refuses opening a file for writing: the child
may still hold a descriptor the kernel counts as writable (a ``memfd``, or one a library opened before the
wall), and a writable shared mapping of it would reach whoever else maps that file. Anonymous shared memory is
allowed (nobody else can see it: the child cannot start processes), so is every private mapping. ``mprotect``
needs no rule: ``shared_memory.privatize`` leaves the child no shared mapping of the session to re-enable, and
the kernel refuses write permission on a shared mapping of a file opened read-only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from dataclasses import dataclass

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_GET_ACTION_AVAIL = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
_CLONE_THREAD = 0x00010000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
# inode flags (chattr) and the extended fs attributes, set through a descriptor opened only for reading
_FS_IOC_SETFLAGS, _FS_IOC32_SETFLAGS, _FS_IOC_FSSETXATTR = 0x40086602, 0x40046602, 0x401C5820
_REFUSED_IOCTLS = (_TIOCSTI, _TIOCLINUX, _FS_IOC_SETFLAGS, _FS_IOC32_SETFLAGS, _FS_IOC_FSSETXATTR)
# newer than some kernel headers; the same number on every architecture
_NEW_FILE_CHANGES = {"fchmodat2": 452, "setxattrat": 463, "removexattrat": 466, "file_setattr": 469}
_X32_BIT = 0x40000000
_PROT_WRITE = 0x2
_MAP_TYPE = 0x0F
_MAP_SHARED = 0x01
_MAP_SHARED_VALIDATE = 0x03
_MAP_ANONYMOUS = 0x20  # the same value on x86_64 and aarch64
# BPF opcodes
LD_W_ABS = 0x20
ALU_AND_K = 0x54
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06
# offsets in struct seccomp_data
OFF_NR = 0
OFF_ARCH = 4


def arg_low(i: int) -> int:
    """Offset of the low 32 bits of syscall argument ``i`` (little-endian: x86_64 and aarch64)."""
    return 16 + 8 * i


@dataclass(frozen=True)
class Arch:
    audit: int
    seccomp: int
    deny: dict[str, int]  # refused outright (EPERM)
    clone: int
    clone3: int
    kill: int
    tgkill: int
    ioctl: int
    prlimit64: int  # allowed on itself only: another process's limits (the parent's CPU time) are not its own
    mmap: int  # refused for a writable shared mapping of a file
    x32: bool = False


# Syscalls refused outright. Numbers: arch/x86/entry/syscalls/syscall_64.tbl and
# include/uapi/asm-generic/unistd.h.
X86_64 = Arch(
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
        # memory and messages shared with other processes by key, outside the file system Landlock sees
        "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220,
        "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_open": 240, "mq_unlink": 241,
        "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
        "remap_file_pages": 216,
        # a file's mode, owner, times and extended attributes: Landlock has no right for them
        "chmod": 90, "fchmod": 91, "fchmodat": 268, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
        "utime": 132, "utimes": 235, "utimensat": 280, "futimesat": 261, "setxattr": 188, "lsetxattr": 189,
        "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, **_NEW_FILE_CHANGES,
    },
    clone=56, clone3=435, kill=62, tgkill=234, ioctl=16, prlimit64=302, mmap=9, x32=True,
)  # fmt: skip
AARCH64 = Arch(
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
        "shmget": 194, "shmat": 196, "shmctl": 195, "semget": 190, "semop": 193, "semctl": 191,
        "semtimedop": 192, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_open": 180,
        "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
        "remap_file_pages": 234,
        "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "utimensat": 88, "setxattr": 5,
        "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
        **_NEW_FILE_CHANGES,
    },
    clone=220, clone3=435, kill=129, tgkill=131, ioctl=29, prlimit64=261, mmap=222,
)  # fmt: skip
ARCHES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def available(libc: ctypes.CDLL, arch: Arch) -> bool:
    """Does this kernel take seccomp filters (and return errnos from them)?"""
    action = ctypes.c_uint32(RET_ERRNO)
    return libc.syscall(ctypes.c_long(arch.seccomp), ctypes.c_uint(_SECCOMP_GET_ACTION_AVAIL),
                        ctypes.c_uint(0), ctypes.byref(action)) == 0  # fmt: skip


def insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def template(arch: Arch) -> tuple[bytes, tuple[int, ...]]:
    """The program with pid 0 and the byte offsets where the child writes its pid."""
    program = bpf_program(arch, 0)
    marker = insn(JEQ_K, 0, 0, 1)
    loads = insn(LD_W_ABS, arg_low(0))
    offsets = tuple(
        i + 4
        for i in range(8, len(program), 8)
        if program[i : i + 8] == marker and program[i - 8 : i] == loads
    )
    return program, offsets


def bpf_program(arch: Arch, pid: int) -> bytes:
    """The filter: a deny-list over an allow-everything default."""
    deny = insn(RET_K, RET_ERRNO | errno.EPERM)
    allow = insn(RET_K, RET_ALLOW)
    prog = [
        insn(LD_W_ABS, OFF_ARCH),
        insn(JEQ_K, arch.audit, 1, 0),
        insn(RET_K, RET_KILL_PROCESS),  # another ABI's numbering (i386 on x86_64): nothing matches
        insn(LD_W_ABS, OFF_NR),
    ]
    if arch.x32:
        prog += [insn(JGE_K, _X32_BIT, 0, 1), deny]
    for nr in sorted(arch.deny.values()):
        prog += [insn(JEQ_K, nr, 0, 1), deny]
    # clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes glibc fall back to clone.
    prog += [insn(JEQ_K, arch.clone3, 0, 1), insn(RET_K, RET_ERRNO | errno.ENOSYS)]
    # clone: threads only (CLONE_THREAD); the first argument is the flags on x86_64 and aarch64.
    prog += [insn(JEQ_K, arch.clone, 0, 4), insn(LD_W_ABS, arg_low(0)),
             insn(JSET_K, _CLONE_THREAD, 0, 1), allow, deny]  # fmt: skip
    # kill / tgkill: only this process itself (raise(), os.abort(), pthread_kill of its own threads).
    for nr in (arch.kill, arch.tgkill):
        prog += [
            insn(JEQ_K, nr, 0, 4),
            insn(LD_W_ABS, arg_low(0)),
            insn(JEQ_K, pid, 0, 1),
            allow,
            deny,
        ]
    # prlimit64: its own limits only (pid 0 means itself: glibc getrlimit/setrlimit), never the parent's.
    prog += [
        insn(JEQ_K, arch.prlimit64, 0, 6),
        insn(LD_W_ABS, arg_low(0)),
        insn(JEQ_K, pid, 0, 1),
        allow,
        insn(JEQ_K, 0, 0, 1),
        allow,
        deny,
    ]
    # mmap(addr, len, prot, flags, fd, off): no writable shared mapping of a file (anonymous ones are the
    # child's alone). flags & MAP_TYPE is MAP_SHARED or MAP_SHARED_VALIDATE, and prot has PROT_WRITE.
    prog += [
        insn(JEQ_K, arch.mmap, 0, 9),
        insn(LD_W_ABS, arg_low(3)),
        insn(JSET_K, _MAP_ANONYMOUS, 6, 0),
        insn(ALU_AND_K, _MAP_TYPE),
        insn(JEQ_K, _MAP_SHARED, 1, 0),
        insn(JEQ_K, _MAP_SHARED_VALIDATE, 0, 3),
        insn(LD_W_ABS, arg_low(2)),
        insn(JSET_K, _PROT_WRITE, 0, 1),
        deny,
        allow,
    ]
    # ioctl: no faked terminal input, no inode flags or extended fs attributes set on a file.
    refused = len(_REFUSED_IOCTLS)
    prog += [insn(JEQ_K, arch.ioctl, 0, refused + 3), insn(LD_W_ABS, arg_low(1))]
    prog += [insn(JEQ_K, cmd, refused - i, 0) for i, cmd in enumerate(_REFUSED_IOCTLS)]
    prog += [allow, deny]
    prog.append(allow)
    return b"".join(prog)


# (template, program, fprog), built in the parent before the first fork; a child patches its own copy.
_filter: tuple[bytes, ctypes.Array[ctypes.c_char], _SockFprog] | None = None


def prepared(bpf_template: bytes) -> tuple[ctypes.Array[ctypes.c_char], _SockFprog]:
    """The program as the kernel takes it, built once: assembling the ctypes objects in a fresh child costs
    about 200 µs of page faults, patching two words does not."""
    global _filter
    found = _filter
    if found is None or found[0] is not bpf_template:
        program = ctypes.create_string_buffer(bpf_template, len(bpf_template))
        fprog = _SockFprog(len(bpf_template) // 8, ctypes.cast(program, ctypes.c_void_p))
        found = _filter = (bpf_template, program, fprog)
    return found[1], found[2]


def install(libc: ctypes.CDLL, bpf_template: bytes, pid_offsets: tuple[int, ...]) -> int:
    """In the child: write its pid into the prepared program and install it. Returns 0, or the errno."""
    program, fprog = prepared(bpf_template)
    pid = os.getpid()
    for offset in pid_offsets:
        struct.pack_into("=I", program, offset, pid)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return ctypes.get_errno() or errno.EINVAL
    return 0
