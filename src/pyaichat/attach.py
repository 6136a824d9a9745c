"""The kernel front end: ``pyaichat --existing [FILE]`` / ``pyaichat --kernel [NAME]`` (and, with a runtime
``runtime.jupyter_server.access`` opened, ``pyaichat --server URL``).

It connects a ``runtime.kernel.KernelRuntime`` and then runs the ordinary REPL (terminal) or piped mode over
it: Python mode executes in the kernel, the assistant's capabilities run inside it. ``cli`` imports this
module only when one of the two flags is given, so plain start-up loads nothing of Jupyter.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .assemble import assemble
from .configuration.config import Config
from .errors import PyAIChatError
from .piped import PlainFrontEnd, run_piped
from .printable import show
from .repl.app import run_repl
from .runtime import connect

if TYPE_CHECKING:
    from .runtime.kernel import KernelRuntime


KERNEL_NO_CHECKPOINTS = (
    "No checkpoints here: the session lives in a Jupyter kernel, a process pyaichat does not run and cannot "
    "fork, so /undo takes back the last approved proposal only."
)


def run_attached(
    config: Config,
    *,
    existing: str | None = None,
    kernel: str | None = None,
    first: Sequence[str] = (),
    runtime: KernelRuntime | None = None,
) -> int:
    """Attach to (or start) the kernel — or take ``runtime``, already connected — run the REPL or piped mode
    over it, and detach at the end."""
    if runtime is None:
        try:
            runtime = connect.start(kernel, config) if kernel else connect.attach(existing or None, config)
        except PyAIChatError as exc:
            show(f"pyaichat: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
    try:
        if runtime.kernel.helper_problem:
            show(f"pyaichat: {runtime.kernel.helper_problem}", file=sys.stderr)
        if sys.stdin.isatty() and sys.stdout.isatty():
            show(f"pyaichat: {runtime.describe()}.")
            return run_repl(runtime, first=first, supervised=KERNEL_NO_CHECKPOINTS)
        return run_piped(assemble(runtime, PlainFrontEnd()), first=first, supervised=KERNEL_NO_CHECKPOINTS)
    except SystemExit as exc:  # exit() in the kernel, or in pyaichat itself
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    finally:
        runtime.close()


def run_server(config: Config, flags: Mapping[str, Any], first: Sequence[str] = ()) -> int:
    """``pyaichat --server URL``: open the kernel the flags choose (asking for the token and in a menu when a
    person is at the terminal), then run as over any kernel."""
    from .runtime.jupyter_server.access import open_server  # Jupyter Server: only with --server
    from .runtime.jupyter_server.rest import ServerError

    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        runtime = open_server(flags, config, interactive=interactive)
    except ServerError as exc:
        show(f"pyaichat: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, EOFError):
        return 130
    if runtime is None:  # --list
        return 0
    return run_attached(config, runtime=runtime, first=first)
