"""The kernel front end: ``pyaichat --existing [FILE]`` / ``pyaichat --kernel [NAME]``.

It connects a ``runtime.kernel.KernelRuntime`` and then runs the ordinary REPL (terminal) or piped mode over
it: Python mode executes in the kernel, the assistant's capabilities run inside it. ``cli`` imports this
module only when one of the two flags is given, so plain start-up loads nothing of Jupyter.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .assemble import assemble
from .config import Config
from .errors import PyAIChatError
from .piped import PlainFrontEnd, run_piped
from .repl.app import run_repl
from .runtime import connect


def run_attached(
    config: Config, *, existing: str | None = None, kernel: str | None = None, first: Sequence[str] = ()
) -> int:
    """Attach to (or start) the kernel, run the REPL or piped mode over it, and detach at the end."""
    try:
        runtime = connect.start(kernel, config) if kernel else connect.attach(existing or None, config)
    except PyAIChatError as exc:
        print(f"pyaichat: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    try:
        if runtime.kernel.helper_problem:
            print(f"pyaichat: {runtime.kernel.helper_problem}", file=sys.stderr)
        if sys.stdin.isatty() and sys.stdout.isatty():
            print(f"pyaichat: {runtime.describe()}.")
            return run_repl(runtime, first=first)
        return run_piped(assemble(runtime, PlainFrontEnd()), first=first)
    except SystemExit as exc:  # exit() in the kernel, or in pyaichat itself
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    finally:
        runtime.close()
