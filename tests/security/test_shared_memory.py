"""Memory the session shares (a file-backed memmap, ``mmap``, ``multiprocessing.shared_memory``, anonymous
``MAP_SHARED`` memory behind ``multiprocessing.Array``) is not copied by ``fork``: a snippet must not be able
to write it, in any isolation mode, by any path — directly, with augmented assignment, through the session's
own functions and methods (allowed behind the kernel wall), or through library calls that write into an
argument.
After every attempt the session's memory and the file on disk hold exactly what they held before.
"""

from __future__ import annotations

import ctypes
import mmap
import multiprocessing
import os
from collections.abc import Iterator
from multiprocessing import shared_memory as mp_shared
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sbx_helpers import make_session

import pyaichat
from pyaichat.capabilities import call
from pyaichat.capabilities.sandbox import confine
from pyaichat.capabilities.sandbox import shared_memory as sm
from pyaichat.capabilities.sandbox.isolation import fork_available, run_forked

WALLS = confine.probe() if fork_available() else None
WALLED = WALLS is not None and WALLS.complete
MODES = (["fork-walled"] if WALLED else []) + (["fork-wall-down"] if fork_available() else []) + ["inprocess"]
SIZE = 4096

USER_CODE = """
def bump(a):
    a[0] += 1
    a[1:3] = 42
    return int(a[0])

class Holder:
    def __init__(self, a):
        self.a = a

    def zero(self):
        self.a[:] = 0
        return True

def poke(buf):
    buf[0] = 7
    return buf[0]

def poke_name(name):
    return poke(globals()[name])

def set_value(v):
    mpv.value = v
    return mpv.value
"""


class Shared:
    """The session of one test: the shared objects, how to read their bytes, and the files behind them."""

    def __init__(self, session: pyaichat.Session, tmp: Path) -> None:
        self.session = session
        self.files: list[Path] = []
        self._closers: list[Any] = []
        ns = session.namespace
        pattern = bytes(range(256)) * (SIZE // 256)

        path = tmp / "memmap.bin"
        path.write_bytes(pattern)
        ns["mm"] = np.memmap(path, dtype=np.uint8, mode="r+", shape=(SIZE,))
        self.files.append(path)

        path = tmp / "mmap.bin"
        path.write_bytes(pattern)
        with open(path, "r+b") as fh:
            ns["mf"] = mmap.mmap(fh.fileno(), SIZE)
        ns["mf_arr"] = np.frombuffer(ns["mf"], dtype=np.uint8)
        self.files.append(path)

        shm = mp_shared.SharedMemory(create=True, size=SIZE)
        shm.buf[:SIZE] = pattern
        ns["shm"], ns["sbuf"] = shm, shm.buf
        ns["sh_arr"] = np.ndarray((SIZE,), dtype=np.uint8, buffer=shm.buf)
        self._closers.append(shm)

        ns["anon"] = mmap.mmap(-1, SIZE)
        ns["anon"][:] = pattern
        ns["an_arr"] = np.frombuffer(ns["anon"], dtype=np.uint8)

        ns["mpa"] = multiprocessing.Array("B", SIZE)
        ns["mp_arr"] = np.frombuffer(ns["mpa"].get_obj(), dtype=np.uint8)
        ns["mp_arr"][:] = np.frombuffer(pattern, dtype=np.uint8)
        ns["mpv"] = multiprocessing.Value("d", 1.5)
        assert session.run(USER_CODE).ok

    ARRAYS = ("mm", "mf_arr", "sh_arr", "an_arr", "mp_arr")

    def state(self) -> dict[str, bytes]:
        ns = self.session.namespace
        out = {name: ns[name].tobytes() for name in self.ARRAYS}
        out["mpv"] = repr(ns["mpv"].value).encode()
        out.update({f"file:{p.name}": p.read_bytes() for p in self.files})  # the file itself, not the mapping
        return out

    def writable(self) -> bool:
        return all(self.session.namespace[name].flags.writeable for name in self.ARRAYS)

    def close(self) -> None:
        ns = self.session.namespace
        for name in ("mm", "mf_arr", "sh_arr", "an_arr", "mp_arr", "sbuf"):
            ns.pop(name, None)
        for shm in self._closers:
            shm.close()
            shm.unlink()


@pytest.fixture(params=MODES)
def shared(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Shared]:
    mode = request.param
    if mode == "fork-wall-down":
        import pyaichat.capabilities.sandbox as sandbox

        monkeypatch.setattr(sandbox, "probe_walls", lambda: confine.Walls(0, False, (), ("no Landlock",)))
    session = make_session("inprocess" if mode == "inprocess" else "fork")
    found = Shared(session, tmp_path)
    found.mode = mode  # type: ignore[attr-defined]
    yield found
    found.close()


VECTORS = [
    ("setitem", "{x}[0] = 99\nint({x}[0])"),
    ("augmented", "{x} += 1\nint({x}[0])"),
    ("augmented-slice", "{x}[:2] += 1"),
    ("fill", "{x}.fill(7)"),
    ("copyto", "import numpy as np\nnp.copyto({x}, 5)"),
    ("copyto-dst", "import numpy as np\nnp.copyto(dst={x}, src=5)"),
    ("out-keyword", "import numpy as np\nnp.add({x}, 1, out={x})"),
    ("out-positional", "import numpy as np\nnp.multiply({x}, 3, {x})"),
    ("method-out", "{x}.cumsum(0, None, {x})"),
    ("view", "v = {x}[:4]\nv[:] = 1"),
    ("user-function", "bump({x})"),
    ("user-method", "Holder({x}).zero()"),
]


@pytest.mark.parametrize("target", Shared.ARRAYS)
@pytest.mark.parametrize("code", [v[1] for v in VECTORS], ids=[v[0] for v in VECTORS])
def test_no_write_reaches_shared_memory(shared: Shared, target: str, code: str) -> None:
    before = shared.state()
    result = call(shared.session, "run_python", {"code": code.format(x=target)})
    assert shared.state() == before, result
    assert shared.writable()  # in-process freezing is undone
    assert "Traceback" not in (result.error or "")
    if shared.mode == "inprocess" and not code.startswith("{x} +="):  # type: ignore[attr-defined]
        assert not result.ok, result.text  # refused (``x += 1`` rebinds a name of the snippet's own instead)


RAW = [
    ("mmap-object", "poke(mf)"),
    ("mmap-object-by-user-code", "poke_name('mf')"),
    ("shared-memory-buffer", "poke(sbuf)"),
    ("shared-memory-buffer-by-user-code", "poke_name('sbuf')"),
    ("shared-memory-object", "poke(shm.buf)"),
    ("anonymous-mmap", "poke_name('anon')"),
    ("multiprocessing-array", "poke_name('mpa')"),
    ("multiprocessing-value", "mpv.value = 9.5"),
    ("multiprocessing-value-by-user-code", "set_value(9.5)"),
    ("memoryview-direct", "sbuf[0] = 1"),
    ("memoryview-numpy", "import numpy as np\nv = np.frombuffer(sbuf, dtype=np.uint8)\nnp.add(v, 1, v)"),
]


@pytest.mark.parametrize("code", [r[1] for r in RAW], ids=[r[0] for r in RAW])
def test_no_write_reaches_shared_memory_through_the_raw_objects(shared: Shared, code: str) -> None:
    before = shared.state()
    result = call(shared.session, "run_python", {"code": code})
    assert shared.state() == before, result
    assert "Traceback" not in (result.error or "")


def test_the_child_may_change_its_private_copy(shared: Shared) -> None:
    """Behind the wall the snippet sees its own writes (a private view); the session does not."""
    if shared.mode != "fork-walled":  # type: ignore[attr-defined]
        pytest.skip("writing a private copy through the session's function needs the kernel wall")
    before = shared.state()
    code = "bump(mm)\n(int(mm[0]), int(mm[1]), poke_name('mf'), poke_name('anon'), set_value(9.5))"
    result = call(shared.session, "run_python", {"code": code})
    assert result.ok and "(1, 42, 7, 7, 9.5)" in result.text, result
    assert shared.state() == before


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_sealed_shared_memory_ends_the_run_with_one_sentence(tmp_path: Path, monkeypatch) -> None:
    """Anonymous shared memory beyond the copy limit is made inaccessible: touching it stops the run, and the
    user reads why."""
    monkeypatch.setattr(sm, "COPY_LIMIT", 0)
    session = make_session("fork")
    anon = mmap.mmap(-1, SIZE)
    anon[:4] = b"abcd"
    session.namespace["big"] = np.frombuffer(anon, dtype=np.uint8)
    result = call(session, "run_python", {"code": "big[0] = 1\nint(big[0])"})
    assert not result.ok
    assert result.error.startswith("the code touched memory the session shares with another process")
    assert "SIGSEGV" in result.error and "Traceback" not in result.error
    assert anon[:4] == b"abcd"
    assert call(session, "run_python", {"code": "len(lst)"}).ok  # nothing else is affected
    del session.namespace["big"]


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_nothing_runs_if_shared_memory_cannot_be_made_private(monkeypatch, tmp_path: Path) -> None:
    def broken(skip: tuple[int, ...] = ()) -> list[Any]:
        raise sm.PrivatizeError(12, "/dev/shm/psm_x (4.0 KB): Cannot allocate memory")

    monkeypatch.setattr(sm, "privatize", broken)
    marker = tmp_path / "ran"
    result = run_forked(lambda: (marker.touch(), {"ok": True})[1], 5.0)
    assert result == {
        "ok": False,
        "error": "memory the session shares with other processes could not be made private in the sandbox "
        "(/dev/shm/psm_x (4.0 KB): Cannot allocate memory); nothing ran",
        "text": "",
    }
    assert not marker.exists()


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_torch_tensor_in_shared_memory(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    session = make_session("fork")
    tensor = torch.arange(16, dtype=torch.float32).share_memory_()
    session.namespace["t"] = tensor
    session.namespace["t_np"] = tensor.numpy()
    before = tensor.clone()
    for code in ("t_np[0] = 99", "t_np += 1", "import numpy as np\nnp.copyto(t_np, 0)"):
        call(session, "run_python", {"code": code})
    assert torch.equal(tensor, before)


# -- guards off: the child itself, walls up or not ----------------------------------------------------------
@pytest.fixture
def memmap_file(tmp_path: Path) -> Iterator[tuple[Path, np.memmap]]:
    path = tmp_path / "raw.bin"
    path.write_bytes(b"\x01" * SIZE)
    mm = np.memmap(path, dtype=np.uint8, mode="r+", shape=(SIZE,))
    yield path, mm
    del mm


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_the_child_keeps_no_shared_mapping_it_could_write(memmap_file, tmp_path: Path) -> None:
    """Every shared mapping left in the child is read-only for good: ``mprotect`` cannot make it writable."""
    readonly = tmp_path / "readonly.bin"
    readonly.write_bytes(b"\x02" * SIZE)
    kept = np.memmap(readonly, dtype=np.uint8, mode="r")  # opened read-only: may stay shared
    assert any(m.path.endswith("raw.bin") for m in sm.shared_mappings())

    def job() -> dict[str, Any]:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        left = {
            m.path: libc.mprotect(m.start, m.size, mmap.PROT_READ | mmap.PROT_WRITE)
            for m in sm.shared_mappings()
        }
        return {"ok": True, "left": left}

    left = run_forked(job, 5.0)["left"]
    assert str(readonly) in left and not any(p.endswith("raw.bin") for p in left)
    assert set(left.values()) == {-1}
    del kept


@pytest.mark.skipif(not WALLED, reason="no Landlock + seccomp here")
def test_raw_memory_writes_and_mprotect_stay_in_the_child(memmap_file) -> None:
    """C-level writes to the memmap's address, even after ``mprotect``, change only the child's copy."""
    path, mm = memmap_file
    address = mm.ctypes.data

    def job() -> dict[str, Any]:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        rc = libc.mprotect(address & ~(mmap.PAGESIZE - 1), mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE)
        ctypes.memset(address, 0x55, SIZE)
        return {"ok": True, "mprotect": rc, "seen": ctypes.string_at(address, 2).hex()}

    assert run_forked(job, 5.0, WALLS, require_walls=True) == {"ok": True, "mprotect": 0, "seen": "5555"}
    assert path.read_bytes() == b"\x01" * SIZE and bytes(mm[:4]) == b"\x01" * 4


@pytest.mark.skipif(not WALLED, reason="no Landlock + seccomp here")
def test_the_child_cannot_make_shared_memory_again(memmap_file) -> None:
    def job() -> dict[str, Any]:
        out: dict[str, Any] = {"ok": True}
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]  # fmt: skip
        fd = os.memfd_create("pyaichat-test")  # the one kind of file the child may write
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        mapped = libc.mmap(None, SIZE, prot, mmap.MAP_SHARED, fd, 0)
        out["memfd"] = ctypes.get_errno() if mapped in (None, ctypes.c_void_p(-1).value) else "mapped"
        out["memfd-private"] = libc.mmap(None, SIZE, prot, mmap.MAP_PRIVATE, fd, 0) not in (None, 2**64 - 1)
        ipc_private, ipc_creat = 0, 0o1000
        out["shmget"] = libc.shmget(ipc_private, SIZE, ipc_creat | 0o600), ctypes.get_errno()
        out["msgget"] = libc.msgget(ipc_private, ipc_creat | 0o600), ctypes.get_errno()
        return out

    result = run_forked(job, 5.0, WALLS, require_walls=True)
    eperm = 1
    assert result["memfd"] == eperm and result["memfd-private"] is True
    assert result["shmget"] == [-1, eperm] and result["msgget"] == [-1, eperm]


@pytest.mark.skipif(not fork_available(), reason="no fork on this platform")
def test_a_system_v_segment_of_the_session_is_copied(monkeypatch) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    segment = libc.shmget(0, SIZE, 0o1000 | 0o600)
    if segment < 0:
        pytest.skip("System V shared memory is not available here")
    address = libc.shmat(segment, None, 0)
    try:
        ctypes.memset(address, 0x11, SIZE)

        def job() -> dict[str, Any]:
            ctypes.memset(address, 0x22, SIZE)
            return {"ok": True, "seen": ctypes.string_at(address, 1).hex()}

        assert run_forked(job, 5.0) == {"ok": True, "seen": "22"}
        assert ctypes.string_at(address, SIZE) == b"\x11" * SIZE
    finally:
        libc.shmdt(ctypes.c_void_p(address))
        libc.shmctl(segment, 0, None)  # IPC_RMID


def test_maps_parsing_matches_the_kernel_query(memmap_file) -> None:
    """The two ways of listing shared mappings (PROCMAP_QUERY, else the text of /proc/self/maps) agree."""
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("no /proc here")

    def read_text() -> list[sm.Shared]:
        with open("/proc/self/maps", "rb") as fh:
            return sm.parse_maps(fh.read())

    # Other threads of the test process (a pool torn down by an earlier test) may map or unmap shared memory
    # meanwhile: compare only a query made while the text stayed the same around it.
    for _ in range(20):
        before = read_text()
        queried = sm.shared_mappings()
        if read_text() == before:
            break
    assert any(m.path.endswith("raw.bin") and m.prot == mmap.PROT_READ | mmap.PROT_WRITE for m in before)
    assert queried == before


@pytest.mark.skipif(not WALLED, reason="no Landlock + seccomp here")
def test_a_read_only_view_of_a_writable_file_cannot_be_made_writable(tmp_path: Path) -> None:
    """``mmap(access=ACCESS_READ)`` over a file opened for writing: the kernel would let ``mprotect`` make it
    writable, so the child must not keep it shared."""
    path = tmp_path / "ro-view.bin"
    path.write_bytes(b"\x03" * SIZE)
    with open(path, "r+b") as fh:
        view = mmap.mmap(fh.fileno(), SIZE, access=mmap.ACCESS_READ)
    address = int(np.frombuffer(view, dtype=np.uint8).ctypes.data)

    def job() -> dict[str, Any]:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        rc = libc.mprotect(address, SIZE, mmap.PROT_READ | mmap.PROT_WRITE)
        if rc == 0:
            ctypes.memset(address, 0x66, SIZE)
        return {"ok": True, "mprotect": rc}

    assert run_forked(job, 5.0, WALLS, require_walls=True) == {"ok": True, "mprotect": 0}
    assert path.read_bytes() == b"\x03" * SIZE and view[:4] == b"\x03" * 4
    view.close()
