"""The kernel front end: ``pyaichat --existing [FILE]`` / ``pyaichat --kernel [NAME]``.

It connects a ``runtime.kernel.KernelSession`` and then runs the ordinary REPL (terminal) or piped mode
over it: Python mode executes in the kernel, the assistant's capabilities run inside it. Everything here is
imported only when one of the two flags is given, so plain start-up loads nothing of Jupyter.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .errors import PyAIChatError

if TYPE_CHECKING:
    from .config import Config


def run_attached(config: Config, *, existing: str | None = None, kernel: str | None = None) -> int:
    """Attach to (or start) the kernel, run the REPL or piped mode over it, and detach at the end."""
    from .runtime import connect

    try:
        if kernel:
            session = connect.start(kernel, color=config.color)
        else:
            session = connect.attach(existing or None, color=config.color)
    except PyAIChatError as exc:
        print(f"pyaichat: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    session.config = config
    try:
        if session.helper_problem:
            print(f"pyaichat: {session.helper_problem}", file=sys.stderr)
        if sys.stdin.isatty() and sys.stdout.isatty():
            from .repl.app import run_repl

            print(f"pyaichat: {session.describe()}.")

            return run_repl(config, session)
        from .controller import Controller
        from .piped import PlainFrontEnd, run_piped

        return run_piped(Controller(config, session, PlainFrontEnd()))
    except SystemExit as exc:  # exit() in the kernel, or in pyaichat itself
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()
