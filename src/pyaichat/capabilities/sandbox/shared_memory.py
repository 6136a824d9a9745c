"""Memory the forked child shares with the session, made private before any code runs.

``fork`` copies the session's memory copy-on-write — except shared mappings (``MAP_SHARED``), which stay one
memory for both processes: a file-backed ``np.memmap`` or ``mmap.mmap``, ``multiprocessing.shared_memory`` and
``Array``/``Value``, anonymous shared memory, System V segments, tensors in shared memory, a device's buffers.
A write there in the child would change the session's object — and, for a file, the file on disk: Landlock
checks a file when it is opened, not a mapping that already exists.

``privatize`` runs first thing in the child, while it still holds the session's descriptors, and leaves it no
shared mapping it could write (found in ``/proc/self/maps``: every line with ``s`` in its permissions; a
read-only one whose file was opened read-only stays, since the kernel refuses to make it writable):

* a file (memmap, shared memory under ``/dev/shm``, a ``memfd``): mapped again ``MAP_PRIVATE`` at the same
  address, from a descriptor the child already holds for it (matched by device and inode) or opened read-only
  by its path. The child then sees the same bytes, and its writes stay in its own copy-on-write pages — which
  also lets a preview show their effect. Nothing is copied;
* anonymous shared memory with no descriptor (``mmap(-1, …)``, ``multiprocessing`` heaps, System V): copied
  into private memory moved to the same address (``mremap``), up to ``COPY_LIMIT`` bytes per mapping;
* larger ones, unreadable ones and devices (whose mappings have side effects): replaced by inaccessible
  private memory; touching them ends the run with a plain sentence (``crash_reason``).

The seccomp filter (``seccomp``) then refuses new writable shared file mappings and System V / POSIX shared
memory and queues, so the code cannot create what was removed; ``mprotect`` has nothing left to re-enable.
Everything here is plain system calls through ``ctypes``, prepared in the parent (``prepare``), so the child
allocates little and imports nothing.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import struct
from dataclasses import dataclass, field

try:
    import fcntl
except ImportError:  # Windows: no fork, so nothing here runs there
    fcntl = None  # type: ignore[assignment]  # no fcntl on this platform

COPY_LIMIT = 64 << 20  # bytes of descriptor-less shared memory copied per mapping; larger ones are sealed

_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS, _MAP_NORESERVE = 0x02, 0x10, 0x20, 0x4000
_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2
_MAP_FAILED = ctypes.c_void_p(-1).value
# PROCMAP_QUERY (Linux 6.11+): the next VMA at or after an address with given properties, without formatting
# the whole of /proc/self/maps (about 2 µs a line: a millisecond or more for a process with numpy and pandas).
_PROCMAP_QUERY = 0xC0686611  # _IOWR('f', 17, struct procmap_query), 104 bytes
_QUERY = struct.Struct("=9Q4I2Q")
_Q_SHARED, _Q_COVERING_OR_NEXT = 0x08, 0x10
_NAME_MAX = 4096
_ANONYMOUS = ("/dev/zero", "/SYSV", "[anon_shmem")  # shared memory with no file anyone can open
_DEVICE = ("/dev/", "anon_inode:", "/dmabuf", "/drm")  # mapping them again, or reading them, has side effects


@dataclass(frozen=True)
class Shared:
    """One shared mapping, as ``/proc/self/maps`` lists it."""

    start: int
    end: int
    prot: int
    offset: int
    device: tuple[int, int]  # major, minor
    inode: int
    path: str  # may end in " (deleted)"

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def kind(self) -> str:
        """``file``, ``anonymous`` or ``device``."""
        path = self.path
        if not path or path.startswith(_ANONYMOUS):
            return "anonymous"
        if path.startswith(_DEVICE) and not path.startswith("/dev/shm/"):
            return "device"
        return "file"

    def label(self) -> str:
        name = self.path.removesuffix(" (deleted)") or "anonymous shared memory"
        return f"{name} ({_size(self.size)})"


class PrivatizeError(OSError):
    """A shared mapping could not be made private: the child must not run the code."""


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]  # a size in bytes becomes a float of units
    return f"{n} bytes"  # pragma: no cover


def listable() -> bool:
    """Can this process list its mappings (Linux's ``/proc``)? Elsewhere (macOS) shared memory stays shared
    in the child, and ``/tools`` says so."""
    return os.path.exists("/proc/self/maps")


def shared_mappings() -> list[Shared]:
    """Every shared mapping of this process."""
    try:
        fd = os.open("/proc/self/maps", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []  # no /proc (another OS): nothing found, nothing to do
    try:
        found = _query(fd)
        return found if found is not None else parse_maps(_read_all(fd))
    finally:
        os.close(fd)


def _query(fd: int) -> list[Shared] | None:
    """The shared mappings by PROCMAP_QUERY; None where the kernel does not have it."""
    if fcntl is None:
        return None
    name = _name_buffer()
    found: list[Shared] = []
    address = 0
    while True:
        buf = bytearray(_QUERY.pack(_QUERY.size, _Q_SHARED | _Q_COVERING_OR_NEXT, address, 0, 0, 0, 0, 0, 0,
                                    0, 0, _NAME_MAX, 0, ctypes.addressof(name), 0))  # fmt: skip
        try:
            fcntl.ioctl(fd, _PROCMAP_QUERY, buf)
        except OSError as exc:
            return found if exc.errno == errno.ENOENT else None  # ENOENT: no further shared mapping
        (_, _, _, start, end, flags, _, offset, inode, major, minor, size, _, _, _) = _QUERY.unpack(buf)
        path = os.fsdecode(name.raw[: max(size - 1, 0)]) if size else ""
        found.append(Shared(start, end, flags & 0x7, offset, (major, minor), inode, path))
        address = end


def vma_page_size(fd: int, address: int) -> int | None:
    """The page size of the mapping that holds ``address`` (larger than a page for hugetlbfs), by
    PROCMAP_QUERY on an open ``/proc/self/maps``; None where the kernel cannot say."""
    if fcntl is None or fd < 0:
        return None
    buf = bytearray(_QUERY.pack(_QUERY.size, 0, address, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    try:
        fcntl.ioctl(fd, _PROCMAP_QUERY, buf)
    except OSError:
        return None
    return int(_QUERY.unpack(buf)[6])


@functools.lru_cache(maxsize=1)
def _name_buffer() -> ctypes.Array[ctypes.c_char]:
    return ctypes.create_string_buffer(_NAME_MAX)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def parse_maps(maps: bytes) -> list[Shared]:
    """The shared mappings in the text of ``/proc/<pid>/maps`` (older kernels: no PROCMAP_QUERY)."""
    found = []
    for line in maps.splitlines():
        space = line.find(b" ")
        if space < 0 or line[space + 4 : space + 5] != b"s":
            continue
        fields = line.split(None, 5)
        start, end = (int(x, 16) for x in fields[0].split(b"-"))
        perms = fields[1]
        prot = (_PROT_READ if perms[0:1] == b"r" else 0) | (_PROT_WRITE if perms[1:2] == b"w" else 0)
        prot |= _PROT_EXEC if perms[2:3] == b"x" else 0
        major, minor = (int(x, 16) for x in fields[3].split(b":"))
        path = os.fsdecode(fields[5].strip()) if len(fields) > 5 else ""
        found.append(Shared(start, end, prot, int(fields[2], 16), (major, minor), int(fields[4]), path))
    return found


class _Libc:
    """``mmap``, ``mremap``, ``mprotect`` and ``munmap`` with their C types."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap, self.mremap = libc.mmap, libc.mremap
        self.mprotect, self.munmap = libc.mprotect, libc.munmap
        self.mmap.restype = ctypes.c_void_p
        self.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]  # fmt: skip
        self.mremap.restype = ctypes.c_void_p
        self.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                                ctypes.c_void_p]  # fmt: skip
        self.mprotect.restype = self.munmap.restype = ctypes.c_int
        self.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


@functools.lru_cache(maxsize=1)
def _libc() -> _Libc | None:
    try:
        return _Libc()
    except (OSError, AttributeError, TypeError):  # no C library by that name (another OS)
        return None


def prepare() -> None:
    """In the parent, before ``fork``: the ctypes call objects and the buffer the child will use."""
    _libc()
    _name_buffer()


def _descriptors(skip: tuple[int, ...]) -> dict[tuple[int, int, int], int]:
    """The open descriptors of this process by (major, minor, inode) of the file they refer to."""
    found: dict[tuple[int, int, int], int] = {}
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        fd = int(name)
        if fd in skip:
            continue
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        found.setdefault((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino), fd)
    return found


class _Held:
    """The descriptors this process holds, by (major, minor, inode) of their file: listed on first need (only
    a deleted file — a ``memfd``, unlinked shared memory — is found this way, not by its path)."""

    def __init__(self, skip: tuple[int, ...]) -> None:
        self._skip = skip
        self._found: dict[tuple[int, int, int], int] | None = None

    def get(self, m: Shared) -> int:
        if self._found is None:
            self._found = _descriptors(self._skip)
        return self._found.get((*m.device, m.inode), -1)


def _file_descriptor(m: Shared, held: _Held) -> tuple[int, bool]:
    """A descriptor of ``m``'s regular file: the file opened read-only by its path (never a device), else one
    the process holds. Returns (fd, opened here) or (-1, False)."""
    path = m.path
    if path.startswith("/") and not path.endswith(" (deleted)"):
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
                st = os.fstat(fd)
                if (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) == (*m.device, m.inode):
                    return fd, True
                os.close(fd)  # another file has that name now
        except OSError:
            pass
    fd = held.get(m)
    try:
        return (fd, False) if fd >= 0 and stat.S_ISREG(os.fstat(fd).st_mode) else (-1, False)
    except OSError:
        return -1, False


def _action(m: Shared) -> str:
    """What ``privatize`` tries first: ``file`` (mapped again privately), ``copy`` or ``seal``."""
    if m.kind == "device":
        return "seal"
    if m.kind == "file":
        return "file"
    return "copy" if m.prot & _PROT_READ and m.size <= COPY_LIMIT else "seal"


@dataclass
class Privatized:
    """What ``privatize`` did, for a preview in the same child: which memory was a file's (the session's
    writes there reach the file), which it copied (so its pages are the child's own before any code runs),
    which it sealed (reading it would crash)."""

    files: list[Shared] = field(default_factory=list)
    copied: list[Shared] = field(default_factory=list)
    sealed: list[Shared] = field(default_factory=list)


last = Privatized()  # in a child: what ``privatize`` did there


def privatize(skip: tuple[int, ...] = ()) -> Privatized:
    """Leave this process no shared mapping (see the module's docstring). ``skip``: descriptors that are not
    the session's (the result pipe). Raises ``PrivatizeError`` if a mapping could not be replaced, so that
    nothing runs then."""
    global last
    done = last = Privatized()
    mappings = shared_mappings()
    if not mappings:
        return done
    libc = _libc()
    if libc is None:
        raise PrivatizeError(0, "the C library could not be loaded")
    held = _Held(skip)
    for m in mappings:
        if not m.prot & _PROT_WRITE and not _may_write(libc, m):
            continue  # a file opened read-only: the kernel refuses write access to it, now and later
        action = _action(m)
        if action == "file" and _map_file(libc, m, held):
            done.files.append(m)
            continue
        if action != "seal" and m.prot & _PROT_READ and m.size <= COPY_LIMIT and _copy(libc, m):
            done.copied.append(m)
            continue
        _seal(libc, m)
        done.sealed.append(m)
    return done


def _may_write(libc: _Libc, m: Shared) -> bool:
    """Could this read-only mapping be made writable (``mprotect``)? Not when its file was opened read-only —
    ``np.memmap(mode="r")``, glibc's iconv cache: then it may stay shared. Asked by trying, and undone."""
    if libc.mprotect(m.start, m.size, m.prot | _PROT_WRITE) != 0:
        return False
    libc.mprotect(m.start, m.size, m.prot)
    return True


def _map_file(libc: _Libc, m: Shared, held: _Held) -> bool:
    fd, opened = _file_descriptor(m, held)
    if fd < 0:
        return False
    try:
        return libc.mmap(m.start, m.size, m.prot, _MAP_PRIVATE | _MAP_FIXED, fd, m.offset) == m.start
    finally:
        if opened:
            os.close(fd)


def _copy(libc: _Libc, m: Shared) -> bool:
    """The bytes copied into new private memory, which then replaces the mapping at its address."""
    fresh = libc.mmap(None, m.size, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
    if fresh in (None, _MAP_FAILED):
        return False
    ctypes.memmove(fresh, m.start, m.size)
    moved = (
        libc.mprotect(fresh, m.size, m.prot) == 0
        and libc.mremap(fresh, m.size, m.size, _MREMAP_MAYMOVE | _MREMAP_FIXED, m.start) == m.start
    )
    if not moved:
        libc.munmap(fresh, m.size)
    return moved


def _seal(libc: _Libc, m: Shared) -> None:
    flags = _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_FIXED | _MAP_NORESERVE
    if libc.mmap(m.start, m.size, 0, flags, -1, 0) != m.start:
        err = ctypes.get_errno()
        raise PrivatizeError(err, f"{m.label()}: {os.strerror(err)}")


def crash_reason(signal_name: str) -> str | None:
    """In the parent, after a child died of SIGSEGV or SIGBUS: a plain sentence if the session holds shared
    memory the child could not keep (so the crash was most likely the code touching it), else None."""
    held = _Held(())
    sealed = [m for m in shared_mappings() if _would_seal(m, held)]
    if not sealed:
        return None
    names = ", ".join(m.label() for m in sealed[:3])
    if len(sealed) > 3:
        names += f" and {len(sealed) - 3} more"
    return (
        f"the code touched memory the session shares with another process or a device ({names}), which the "
        f"sandbox keeps out of reach; its process was stopped ({signal_name})"
    )


def _would_seal(m: Shared, held: _Held) -> bool:
    action = _action(m)
    if action == "file":
        fd, opened = _file_descriptor(m, held)
        if opened:
            os.close(fd)
        return fd < 0 and not (m.prot & _PROT_READ and m.size <= COPY_LIMIT)
    return action == "seal"
