"""The seccomp program and the syscall tables behind the kernel wall (``seccomp``, ``confine``), checked
without a kernel: numbers against the kernel's own headers where installed, jumps inside the program, the arch
check first, and the mmap rule run through a small BPF interpreter."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from pyaichat.capabilities.sandbox import confine, seccomp

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}
ARCHES = {"x86_64": seccomp.X86_64, "aarch64": seccomp.AARCH64}


def _numbers(path: Path) -> dict[str, int]:
    found = {}
    for line in path.read_text().splitlines():
        m = re.match(r"#define\s+__NR(?:3264)?_(\w+)\s+(\d+)\b", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_syscall_numbers_match_the_kernel_headers(arch: str) -> None:
    header = HEADERS[arch]
    if not header.exists():
        pytest.skip(f"{header} is not installed")
    table = _numbers(header)
    spec = ARCHES[arch]
    for name, nr in spec.deny.items():  # a call newer than the installed headers is checked where it is there
        assert table.get(name, nr if name in seccomp._NEW_FILE_CHANGES else None) == nr, name
    for name in ("clone", "clone3", "kill", "tgkill", "ioctl", "prlimit64", "seccomp", "mmap"):
        assert table.get(name) == getattr(spec, name), name
    assert table.get("landlock_create_ruleset") in (None, confine._NR_LANDLOCK[0])


def _decode(program: bytes) -> list[tuple[int, int, int, int]]:
    return [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_program_checks_the_architecture_first_and_every_jump_lands_inside(arch: str) -> None:
    spec = ARCHES[arch]
    insns = _decode(seccomp.bpf_program(spec, 4242))
    assert len(insns) < 4096  # BPF_MAXINSNS
    assert insns[0] == (seccomp.LD_W_ABS, 0, 0, seccomp.OFF_ARCH)
    assert insns[1][0] == seccomp.JEQ_K and insns[1][3] == spec.audit
    assert insns[2] == (seccomp.RET_K, 0, 0, seccomp.RET_KILL_PROCESS)
    assert insns[-1] == (seccomp.RET_K, 0, 0, seccomp.RET_ALLOW)
    for i, (code, jt, jf, _k) in enumerate(insns):
        if code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            assert i + 1 + max(jt, jf) < len(insns)
    denied = {k for code, _jt, _jf, k in insns if code == seccomp.JEQ_K}
    assert set(spec.deny.values()) <= denied and spec.clone3 in denied


def test_the_template_is_the_program_with_the_pid_written_in() -> None:
    template, offsets = seccomp.template(seccomp.X86_64)
    assert len(offsets) == 3  # kill, tgkill and prlimit64
    patched = bytearray(template)
    for offset in offsets:
        struct.pack_into("=I", patched, offset, 4242)
    assert bytes(patched) == seccomp.bpf_program(seccomp.X86_64, 4242)


def test_read_paths_leave_out_home_cwd_and_proc(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = confine.read_paths()
    assert str(tmp_path) not in paths
    for banned in ("/", "/home", "/root", "/tmp", "/etc", "/proc", "/usr"):
        assert banned not in paths
    assert not any(p.startswith("/proc/") and p != "/proc/cpuinfo" for p in paths)


def test_walls_that_cannot_be_raised_are_reported_down(monkeypatch) -> None:
    """A kernel that announces Landlock/seccomp but refuses them (a container's own seccomp profile): the
    sandbox runs behind the guards instead of failing every run."""
    monkeypatch.setattr(confine, "_trial", lambda walls: False)
    confine.probe.cache_clear()
    try:
        walls = confine.probe()
        assert not walls.complete and not walls.landlock_abi and not walls.seccomp
        if confine.sys.platform.startswith("linux"):
            assert "the walls could not be raised in a trial child" in walls.why_not
    finally:
        confine.probe.cache_clear()


def _run_filter(program: bytes, arch: seccomp.Arch, nr: int, *args: int) -> int:
    """Classic BPF over ``struct seccomp_data``, as much of it as the filter uses: the returned action."""
    data = struct.pack("=iIQ6Q", nr, arch.audit, 0, *(list(args) + [0] * (6 - len(args))))
    insns = _decode(program)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == seccomp.ALU_AND_K:
            acc &= k
        elif code == seccomp.RET_K:
            return k
        elif code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            taken = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


EPERM = 0x00050000 | 1
ALLOW = 0x7FFF0000
PROT_READ, PROT_WRITE = 1, 2
MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE, MAP_ANONYMOUS, MAP_FIXED = 1, 2, 3, 0x20, 0x10


@pytest.mark.parametrize("arch", sorted(ARCHES))
@pytest.mark.parametrize(
    ("prot", "flags", "fd", "expected"),
    [
        (PROT_READ | PROT_WRITE, MAP_SHARED, 3, EPERM),  # a writable shared mapping of a file
        (PROT_WRITE, MAP_SHARED_VALIDATE | MAP_FIXED, 3, EPERM),
        (PROT_READ, MAP_SHARED, 3, ALLOW),  # read-only: the kernel refuses mprotect(PROT_WRITE) later
        (PROT_READ | PROT_WRITE, MAP_PRIVATE, 3, ALLOW),  # private: writes stay in the child
        (PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, ALLOW),  # nobody else can see it
        (PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, ALLOW),  # malloc, numpy
    ],
)
def test_mmap_rule(arch: str, prot: int, flags: int, fd: int, expected: int) -> None:
    spec = ARCHES[arch]
    program = seccomp.bpf_program(spec, 4242)
    assert _run_filter(program, spec, spec.mmap, 0, 4096, prot, flags, fd & 0xFFFFFFFF, 0) == expected


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_shared_memory_and_queues_by_key_are_refused(arch: str) -> None:
    spec = ARCHES[arch]
    program = seccomp.bpf_program(spec, 4242)
    for name in ("shmget", "shmat", "semop", "msgsnd", "mq_open", "remap_file_pages"):
        assert _run_filter(program, spec, spec.deny[name]) == EPERM, name
    assert _run_filter(program, spec, spec.clone, 0x00010000) == ALLOW  # a thread
    assert _run_filter(program, spec, spec.kill, 4242, 9) == ALLOW  # itself
    assert _run_filter(program, spec, spec.kill, 1, 9) == EPERM


def test_preview_walls_read_everywhere_but_devices_proc_and_sys() -> None:
    walls = confine.Walls(7, True, ("/usr/lib",))
    paths = confine.everywhere(walls).read_paths
    assert "/usr/lib" in paths and "/tmp" in paths and "/dev/null" in paths
    assert not any(p in ("/dev", "/proc", "/sys", "/") or p.startswith("/dev/shm") for p in paths)
    assert confine.everywhere(confine.Walls(0, True, ())).read_paths == ()


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_a_files_mode_owner_times_attributes_and_flags_are_refused(arch: str) -> None:
    """Landlock has no right for these, and none needs a descriptor opened for writing."""
    spec = ARCHES[arch]
    program = seccomp.bpf_program(spec, 4242)
    names = ("fchmodat", "fchmodat2", "fchownat", "utimensat", "setxattr", "fremovexattr", "file_setattr")
    for name in names:
        assert _run_filter(program, spec, spec.deny[name]) == EPERM, name
    for cmd in (0x40086602, 0x401C5820, 0x5412):  # FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, TIOCSTI
        assert _run_filter(program, spec, spec.ioctl, 3, cmd) == EPERM, hex(cmd)
    assert _run_filter(program, spec, spec.ioctl, 3, 0x5401) == ALLOW  # TCGETS: reading a terminal's settings
