"""``scripts/install_llama_cpp.py``: says how far the five-minute build has got, and two runs at once build
the wheel once (they collided on the cache folder's final rename). The compiler is replaced by a script that
prints what cmake prints and writes a wheel; everything else is the script's own code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install_llama_cpp.py"

FAKE_PIP = """
import pathlib, sys, time
out = pathlib.Path(sys.argv[sys.argv.index("-w") + 1])
for step in (0, 12, 37, 50, 88, 100):
    print(f"[{step:3d}%] Building C object ggml/src/ggml.c.o", flush=True)
    time.sleep(0.05)
time.sleep(0.5)
(out / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl").write_bytes(b"wheel")
"""


@pytest.fixture
def script(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("install_llama_cpp", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("PYAICHAT_WHEEL_CACHE", str(tmp_path / "cache"))
    fake = tmp_path / "fake_pip.py"
    fake.write_text(FAKE_PIP)
    real_popen = subprocess.Popen

    def popen(command, *args, **kwargs):  # "python -m pip wheel …" runs the fake instead
        assert command[1:3] == ["-m", "pip"]
        return real_popen([sys.executable, str(fake), *command[3:]], *args, **kwargs)

    monkeypatch.setattr(module.subprocess, "Popen", popen)

    def run(command, *args, check=False, **kwargs):  # as subprocess.run: its output goes to ours
        code = popen(command, *args, **kwargs).wait()
        if check and code:
            raise subprocess.CalledProcessError(code, command)
        return subprocess.CompletedProcess(command, code)

    monkeypatch.setattr(module.subprocess, "run", run)
    return module


def test_the_build_says_how_far_it_has_got(script, capsys):
    wheel = script.wheel_for("0.3.36", ["-DGGML_NATIVE=OFF"])
    assert wheel.is_file()
    said = capsys.readouterr().out
    assert "compiling llama.cpp: 0%" in said and "compiling llama.cpp: 50%" in said
    assert "compiling llama.cpp: 100%" in said


def test_two_runs_at_once_build_once_and_both_get_the_wheel(script, capsys):
    found: list[Path] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            found.append(script.wheel_for("0.3.36", ["-DGGML_NATIVE=OFF"]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and len(found) == 2 and found[0] == found[1] and found[0].is_file()
    said = capsys.readouterr().out
    assert said.count("building llama-cpp-python") == 1 and "reusing" in said
