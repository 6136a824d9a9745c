"""The seccomp program and the syscall tables behind the kernel wall (``confine``), checked without a kernel:
numbers against the kernel's own headers where installed, jumps inside the program, the arch check first."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from pyaichat.capabilities.sandbox import confine

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}
ARCHES = {"x86_64": confine._X86_64, "aarch64": confine._AARCH64}


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
    for name, nr in spec.deny.items():
        assert table.get(name) == nr, name
    for name in ("clone", "clone3", "kill", "tgkill", "ioctl", "prlimit64", "seccomp"):
        assert table.get(name) == getattr(spec, name), name
    assert table.get("landlock_create_ruleset") in (None, confine._NR_LANDLOCK[0])


def _decode(program: bytes) -> list[tuple[int, int, int, int]]:
    return [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_program_checks_the_architecture_first_and_every_jump_lands_inside(arch: str) -> None:
    spec = ARCHES[arch]
    insns = _decode(confine.bpf_program(spec, 4242))
    assert len(insns) < 4096  # BPF_MAXINSNS
    assert insns[0] == (confine._LD_W_ABS, 0, 0, confine._OFF_ARCH)
    assert insns[1][0] == confine._JEQ_K and insns[1][3] == spec.audit
    assert insns[2] == (confine._RET_K, 0, 0, confine._RET_KILL_PROCESS)
    assert insns[-1] == (confine._RET_K, 0, 0, confine._RET_ALLOW)
    for i, (code, jt, jf, _k) in enumerate(insns):
        if code in (confine._JEQ_K, confine._JGE_K, confine._JSET_K):
            assert i + 1 + max(jt, jf) < len(insns)
    denied = {k for code, _jt, _jf, k in insns if code == confine._JEQ_K}
    assert set(spec.deny.values()) <= denied and spec.clone3 in denied


def test_the_template_is_the_program_with_the_pid_written_in() -> None:
    template, offsets = confine._bpf_template(confine._X86_64)
    assert len(offsets) == 3  # kill, tgkill and prlimit64
    patched = bytearray(template)
    for offset in offsets:
        struct.pack_into("=I", patched, offset, 4242)
    assert bytes(patched) == confine.bpf_program(confine._X86_64, 4242)


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
