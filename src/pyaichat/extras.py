"""How to install one of pyaichat's optional extras, said the way that works for this installation.

``pip install 'pyaichat[persist]'`` fetches pyaichat from the package index; for someone who installed from a
clone that is the wrong command (it replaces their checkout, or finds nothing). The installed distribution's
``direct_url.json`` (PEP 610) says where it came from: a local folder gets ``pip install -e
'<folder>[extra]'`` (or without ``-e``), the index gets the usual line. Either way through this very
interpreter (``python -m pip``), so the extra lands in the environment that runs pyaichat.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import unquote, urlsplit

__all__ = ["install_command", "package_of"]

# Modules whose package (what pip installs) has another name: an ImportError names the module.
_PACKAGES = {
    "zmq": "pyzmq",
    "websocket": "websocket-client",
    "jupyter_client": "jupyter-client",
    "yaml": "PyYAML",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
}


def install_command(
    extra: str | None = None, *, python: str | None = None, also: tuple[str, ...] = ()
) -> str:
    """The shell command that installs ``pyaichat[extra]`` here (pyaichat itself without ``extra``), with
    ``python`` (default: this interpreter; e.g. ``<kernel python>`` for another environment), and the
    packages ``also`` (a dependency of a dependency that went missing, which pip would not add back for an
    extra whose direct requirements are there)."""
    pip = f"{python or _shown(sys.executable)} -m pip install"
    wanted = f"[{extra}]" if extra else ""
    more = "".join(f" {name}" for name in also)
    source = _local_source()
    if source is None:
        return f"{pip} 'pyaichat{wanted}'{more}" if extra else f"{pip} pyaichat{more}"
    folder, editable = source
    return f"{pip} {'-e ' if editable else ''}'{_shown(folder)}{wanted}'{more}"


def package_of(exc: ImportError, default: str) -> str:
    """The package that provides the module ``exc`` could not import (``zmq`` → ``pyzmq``)."""
    module = (exc.name or "").split(".")[0] or default
    return _PACKAGES.get(module, module)


def this_python() -> str:
    """This interpreter as a person would type it (``.venv/bin/python`` inside the working directory): the one
    that has what the session used, where a bare ``python`` may lack pandas or be another Python."""
    return _shown(sys.executable)


def this_script(name: str) -> str:
    """A command of this environment (``.venv/bin/jupyter``), as ``this_python`` names the interpreter: a bare
    ``jupyter`` may be another environment's, or none when the environment is not activated."""
    import sysconfig  # with the first such hint only

    folder = sysconfig.get_path("scripts") or os.path.dirname(sys.executable)
    return _shown(os.path.join(folder, name))


def _local_source() -> tuple[str, bool] | None:
    """(folder, editable) when pyaichat was installed from a local folder; ``None`` otherwise."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution  # with the first hint only

        text = distribution("pyaichat").read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        info = json.loads(text or "")
    except ValueError:
        return None
    url = info.get("url", "") if isinstance(info, dict) else ""
    if not url.startswith("file:") or "dir_info" not in info:
        return None
    folder = unquote(urlsplit(url).path)
    return folder, bool(info["dir_info"].get("editable"))


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it lies inside it (``.venv/bin/python``, ``.``)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    if relative == ".":
        return "."
    return relative if not relative.startswith("..") else path
