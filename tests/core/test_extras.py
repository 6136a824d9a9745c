"""Install hints name the command that works for this installation: from a clone, the clone; from the index,
the package."""

from __future__ import annotations

import json
import sys

import pytest

from pyaichat import extras


class _Dist:
    def __init__(self, direct_url: dict | None) -> None:
        self._text = None if direct_url is None else json.dumps(direct_url)

    def read_text(self, name: str) -> str | None:
        return self._text if name == "direct_url.json" else None


@pytest.fixture
def installed(monkeypatch):
    def use(direct_url: dict | None) -> None:
        import importlib.metadata

        monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _Dist(direct_url))

    return use


def test_an_editable_clone_is_told_to_install_the_extra_from_the_clone(installed, tmp_path, monkeypatch):
    clone = tmp_path / "pyaichat"
    clone.mkdir()
    monkeypatch.chdir(clone)
    installed({"url": clone.as_uri(), "dir_info": {"editable": True}})
    assert extras.install_command("persist").endswith("-m pip install -e '.[persist]'")


def test_a_folder_install_elsewhere_names_the_folder(installed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = "/opt/src/pyaichat"
    installed({"url": f"file://{folder}", "dir_info": {}})
    assert extras.install_command("kernel").endswith(f"-m pip install '{folder}[kernel]'")


def test_an_index_install_gets_the_package_line_through_this_interpreter(installed):
    installed(None)
    command = extras.install_command("persist")
    assert command.endswith("-m pip install 'pyaichat[persist]'")
    assert command.split(" -m pip")[0] in (sys.executable, __import__("os").path.relpath(sys.executable))


def test_this_checkout_says_the_clone_command():
    # the test venv installs pyaichat with pip install -e from this checkout (the README's test command)
    assert "-e '" in extras.install_command("persist") and "pyaichat[persist]" not in extras.install_command(
        "persist"
    )


def test_pyaichat_itself_for_another_environment(installed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    installed(None)
    assert extras.install_command(python="<kernel python>") == "<kernel python> -m pip install pyaichat"
    installed({"url": "file:///opt/src/pyaichat", "dir_info": {"editable": True}})
    assert extras.install_command(python="<kernel python>") == (
        "<kernel python> -m pip install -e '/opt/src/pyaichat'"
    )


def test_no_hint_in_the_source_names_the_index_package_by_hand():
    """Every install hint goes through install_command: a literal pip install 'pyaichat[…]' is wrong from a
    clone (it fetches another pyaichat from the index, or nothing)."""
    import re
    from pathlib import Path

    src = Path(extras.__file__).parent
    literal = re.compile(r"pip install\s+['\"]?pyaichat\b")
    found = [
        f"{path.relative_to(src)}:{n}"
        for path in sorted(src.rglob("*.py"))
        if path.name != "extras.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line)
    ]
    assert found == []


def test_server_without_zmq_names_the_package_and_the_command_that_installs_it(tmp_path):
    """jupyter_client imports ``zmq``, which the ``pyzmq`` package provides: the sentence names the package
    (not the module) in the pip command of this installation."""
    import os
    import subprocess

    hide_zmq = (
        "import sys, runpy; sys.modules['zmq'] = None; "
        "sys.argv = ['pyaichat', '--server', 'http://127.0.0.1:9/']; "
        "runpy.run_module('pyaichat', run_name='__main__')"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "JUPYTER_TOKEN"))}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run(
        [sys.executable, "-c", hide_zmq],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    said = done.stdout + done.stderr
    assert "--server needs the pyzmq package" in said, said
    assert "-m pip install" in said and "[server]' pyzmq" in said, said
    assert "Traceback" not in said
