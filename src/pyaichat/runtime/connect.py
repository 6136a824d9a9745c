"""Find or start the kernel and connect a ``KernelRuntime`` to it (``--existing`` / ``--kernel``).

``--existing`` follows ``jupyter console --existing``: no argument means the most recent ``kernel-*.json`` in
Jupyter's runtime directory; a bare name is looked up there (and in the current directory); a path is used as
is. ``--kernel NAME`` starts a kernel of that kernelspec, which pyaichat shuts down when it exits.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from ..configuration.config import Config
from ..extras import install_command
from . import KernelUnavailable

if TYPE_CHECKING:
    from .kernel import KernelRuntime  # Jupyter: only with --existing/--kernel


def no_jupyter_client() -> str:
    return f"Attaching to a Jupyter kernel needs jupyter_client: {install_command('kernel')}."


def find_connection_file(name: str | None) -> str:
    """The connection file for ``--existing [name]``, with ``jupyter console``'s rules."""
    try:
        from jupyter_client.connect import find_connection_file as find  # optional dependency
    except ImportError:
        raise KernelUnavailable(no_jupyter_client())
    try:
        return find(name) if name else find()
    except OSError:
        if name:
            raise KernelUnavailable(
                f"No kernel connection file matches {name!r} (looked in the current directory and Jupyter's "
                "runtime directory; `jupyter --runtime-dir` shows it)."
            )
        raise KernelUnavailable(
            "No running kernel found: there is no kernel-*.json in Jupyter's runtime directory "
            "(start one with `jupyter kernel`, or pass its connection file)."
        )


def attach(connection_file: str | None, config: Config, *, timeout: float = 10.0) -> KernelRuntime:
    """Connect to a running kernel through its connection file and load pyaichat's helper into it."""
    path = find_connection_file(connection_file)
    from .kernel import KernelRuntime  # Jupyter: only with --existing/--kernel
    from .kernel_connection import KernelConnection  # Jupyter: only with --existing/--kernel

    return KernelRuntime(KernelConnection.open(path, color=config.color, timeout=timeout), config)


def start(kernel_name: str, config: Config, *, timeout: float = 60.0) -> KernelRuntime:
    """Start a local kernel of kernelspec ``kernel_name``; the runtime shuts it down on ``close()``."""
    try:  # optional dependency
        from jupyter_client.kernelspec import NoSuchKernel  # only with --kernel
        from jupyter_client.manager import KernelManager  # only with --kernel
    except ImportError:
        raise KernelUnavailable(no_jupyter_client())
    from .kernel import KernelRuntime  # Jupyter: only with --existing/--kernel
    from .kernel_connection import KernelConnection  # optional: once jupyter_client is known to be there

    manager = KernelManager(kernel_name=kernel_name)
    try:
        manager.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except NoSuchKernel:
        raise KernelUnavailable(
            f"There is no kernel named {kernel_name!r}; `jupyter kernelspec list` shows the installed ones."
        )
    except (OSError, RuntimeError) as exc:
        raise KernelUnavailable(f"The kernel {kernel_name!r} could not start: {exc}.")
    client = manager.client()
    client.start_channels()
    kernel = KernelConnection(client, manager, color=config.color)
    try:
        kernel.connect(timeout)
    except BaseException:
        kernel.close()
        raise
    return KernelRuntime(kernel, config)
