"""Install llama-cpp-python (the realmodel tests' model server) built for a CPU baseline every machine runs.

Why not a plain ``pip install``: pip compiles llama.cpp with its default ``GGML_NATIVE=ON``
(``-march=native``), so a build on a virtual machine whose CPU *reports* AMX uses llama.cpp's AMX kernels;
when the hypervisor does not grant the AMX tile state, the first matrix product (``tilezero``) kills the
server with a general protection fault. And pip caches the wheel it built keyed by the source archive alone,
so a machine that once built a native wheel reuses it whatever flags come later.

So this script builds the wheel itself with fixed, portable flags (x86-64: AVX2/FMA/F16C, no AVX-512, no AMX;
other machines: llama.cpp's generic baseline), never through pip's cache (``--no-cache-dir``), and keeps the
result in a folder whose name is a hash of everything the build depends on (version, flags, Python tag,
machine): a wheel built with other flags can never be picked up. It then installs that very file, with the
``[server]`` extra, into the interpreter that runs it.

    .venv/bin/python scripts/install_llama_cpp.py            # portable (what the tests use)
    .venv/bin/python scripts/install_llama_cpp.py --native   # -march=native, for comparison (benchmarks)

The version is the one ``pyproject.toml`` pins in the ``test`` extra, so the later
``pip install -e '.[test]'`` finds it satisfied and builds nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bump when the way the wheel is built changes, so older builds are not reused.
RECIPE = "1"

X86_PORTABLE = [
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX512=OFF",
    "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
]
GENERIC_PORTABLE = ["-DGGML_NATIVE=OFF"]
NATIVE = ["-DGGML_NATIVE=ON"]
# Features a portable build must not report (llama_print_system_info), whatever this CPU has.
NOT_PORTABLE = ("AVX512", "AMX")


def pinned_version() -> str:
    """The version the ``test`` extra pins: one source of truth."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'"llama-cpp-python(?:\[[^\]]*\])?==([^"]+)"', text)
    if match is None:
        sys.exit("pyproject.toml pins no llama-cpp-python version (expected llama-cpp-python[server]==X)")
    return match.group(1)


def build_flags(native: bool) -> list[str]:
    if native:
        return NATIVE
    if platform.machine().lower() in ("x86_64", "amd64"):
        return X86_PORTABLE
    return GENERIC_PORTABLE


def cache_root() -> Path:
    if os.environ.get("PYAICHAT_WHEEL_CACHE"):
        return Path(os.environ["PYAICHAT_WHEEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pyaichat" / "wheels"


def cache_key(version: str, flags: list[str]) -> str:
    parts = [
        RECIPE,
        version,
        " ".join(flags),
        sys.implementation.cache_tag or "",
        sysconfig.get_platform(),
        platform.machine(),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def build(version: str, flags: list[str], dest: Path) -> Path:
    """Compile the wheel into ``dest`` (atomically: a half-built folder is never taken for a finished one),
    saying how far the compiler has got while it runs."""
    env = dict(os.environ)
    env["CMAKE_ARGS"] = " ".join(flags)
    env["FORCE_CMAKE"] = "1"
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    print(
        f"building llama-cpp-python {version} ({' '.join(flags)}); about 5 minutes on two cores, once",
        flush=True,
    )
    began = time.monotonic()
    try:
        command = [
            sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-cache-dir",
            "--no-binary", "llama-cpp-python", f"llama-cpp-python=={version}", "-w", str(work),
        ]  # fmt: skip
        run_with_progress(command, env, began)
        wheels = list(work.glob("llama_cpp_python-*.whl"))
        if len(wheels) != 1:
            raise SystemExit(f"expected one llama-cpp-python wheel in {work}, found {len(wheels)}")
        (work / "FLAGS").write_text(" ".join(flags) + "\n", encoding="utf-8")
        work.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"built in {time.monotonic() - began:.0f} s: {dest}", flush=True)
    return next(dest.glob("llama_cpp_python-*.whl"))


_PERCENT = re.compile(r"\[\s*(\d+)%\]")
PROGRESS_EVERY = 20.0  # seconds between two progress lines when the compiler says nothing new


def run_with_progress(command: list[str], env: dict[str, str], began: float) -> None:
    """Run the build, printing a line each time the compiler's progress passes another tenth (and at least
    every ``PROGRESS_EVERY`` seconds) instead of five silent minutes; its whole output only if it fails."""
    tail: list[str] = []
    shown_tenth, last_line, percent = -1, time.monotonic(), 0
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as build:
        assert build.stdout is not None
        for line in build.stdout:
            tail = [*tail[-199:], line.rstrip()]
            found = _PERCENT.search(line)
            if found:
                percent = int(found.group(1))
            now = time.monotonic()
            if percent // 10 > shown_tenth or now - last_line >= PROGRESS_EVERY:
                shown_tenth, last_line = percent // 10, now
                print(f"  {now - began:4.0f} s  compiling llama.cpp: {percent}%", flush=True)
        code = build.wait()
    if code != 0:
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit(
            f"building llama-cpp-python failed (pip wheel exited with {code}); its output is above"
        )


@contextlib.contextmanager
def build_lock(dest: Path) -> Iterator[None]:
    """One build of a wheel at a time: a second run of this script waits for the first, then reuses what it
    built (two builds into the same cache folder collided on its final rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.parent / f"{dest.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another build of the same wheel to finish ({lock.name})", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def wheel_for(version: str, flags: list[str]) -> Path:
    dest = cache_root() / f"llama-cpp-python-{version}-{cache_key(version, flags)}"
    with build_lock(dest):  # a build that was running when this one started has finished here
        found = list(dest.glob("llama_cpp_python-*.whl")) if dest.is_dir() else []
        if found:
            print(f"llama-cpp-python {version}: reusing {found[0]} (built with {' '.join(flags)})")
            return found[0]
        return build(version, flags, dest)


def install(wheel: Path) -> None:
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-cache-dir"]
    # The very file, replacing whatever llama-cpp-python the environment held (perhaps a native build) ...
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(wheel)], check=True)
    # ... then what its server extra needs, from the index as usual.
    subprocess.run([*pip, f"llama-cpp-python[server] @ {wheel.as_uri()}"], check=True)


def system_info() -> str:
    probe = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", action="store_true", help="build with -march=native (not portable)")
    args = parser.parse_args()
    version = pinned_version()
    flags = build_flags(args.native)
    install(wheel_for(version, flags))
    info = system_info()
    print(f"llama.cpp: {info}")
    if not args.native:
        enabled = [f for f in re.findall(r"(\w+) = 1", info) if f.startswith(NOT_PORTABLE)]
        if enabled:
            sys.exit(f"the installed llama.cpp is not portable: it reports {', '.join(enabled)}")


if __name__ == "__main__":
    main()
