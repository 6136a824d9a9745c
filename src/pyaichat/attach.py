"""The kernel front end: ``pyaichat --existing [FILE]`` / ``pyaichat --kernel [NAME]``.

It connects a ``runtime.kernel.KernelRuntime`` and then runs the ordinary REPL (terminal) or piped mode over
it: Python mode executes in the kernel, the assistant's capabilities run inside it. ``cli`` imports this
module only when one of the two flags is given, so plain start-up loads nothing of Jupyter.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .config import Config
from .controller import Controller
from .deferred_assistant import DeferredAssistant
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
        assistant = DeferredAssistant(config, runtime)
        if sys.stdin.isatty() and sys.stdout.isatty():
            print(f"pyaichat: {runtime.describe()}.")
            return run_repl(config, runtime, assistant=assistant, first=first)
        return run_piped(Controller(config, runtime, PlainFrontEnd(), assistant=assistant), first=first)
    except SystemExit as exc:  # exit() in the kernel, or in pyaichat itself
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    finally:
        runtime.close()
