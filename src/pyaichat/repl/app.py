"""Entry point of the interactive REPL, kept free of heavy imports so the first prompt appears at once.

Importing prompt_toolkit costs ~150 ms, half the start-up budget. ``run_repl`` therefore draws the first
``>>> `` itself, with plain ANSI codes, before it imports the real front end (``frontend.py``); keys typed in
the meantime wait in the terminal's input queue (echo, line editing and signal keys are off for that moment,
so nothing is drawn twice and Ctrl-C/Ctrl-D mean what they mean at the prompt) and are read by prompt_toolkit,
which then draws the same prompt in the same place.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime import Runtime

_EARLY_PROMPT = {True: "\x1b[0;32;1m>>> \x1b[0m", False: ">>> "}


def early_prompt(color: bool) -> Callable[[], None]:
    """Draw ``>>> `` now and hold typed keys unechoed; the returned function undoes that (call it once)."""
    try:
        import termios  # POSIX only
    except ImportError:  # not POSIX: no early prompt
        return lambda: None
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        # Raw enough that every key (Ctrl-D, Ctrl-C, Backspace) reaches prompt_toolkit as typed, unechoed.
        quiet[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG)
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (termios.error, OSError, ValueError, AttributeError):  # not a terminal after all
        return lambda: None
    color = color and os.environ.get("TERM", "") != "dumb"
    try:
        os.write(sys.stdout.fileno(), _EARLY_PROMPT[color].encode())
    except (OSError, ValueError, AttributeError):
        pass

    def restore() -> None:
        try:
            # TCSANOW, not TCSAFLUSH: keys typed meanwhile stay queued for prompt_toolkit.
            termios.tcsetattr(fd, termios.TCSANOW, saved)
            os.write(sys.stdout.fileno(), b"\r")  # prompt_toolkit redraws the prompt from column 0
        except (termios.error, OSError, ValueError):
            pass

    return restore


def run_repl(runtime: Runtime, *, first: Sequence[str] = (), supervised: Any = None, **kwargs: Any) -> int:
    """Run the interactive REPL (``cli.main`` calls this when stdin and stdout are terminals) over the
    entry point's ``runtime``. ``first``: inputs handled before the first prompt (``--resume`` is
    ``/resume``), which then has no early prompt. ``supervised``: the supervisor's link that keeps
    checkpoints, or why there is none (``cli``). ``kwargs``: ``make_repl``'s (a test's input and output)."""
    restore = early_prompt(runtime.config.color) if not kwargs and not first else (lambda: None)
    try:
        from .frontend import make_repl  # prompt_toolkit: after the early prompt is on screen

        repl = make_repl(runtime, supervised=supervised, **kwargs)
    finally:
        restore()
    code = 1
    try:
        for text in first:
            repl.execute(text)
        code = repl.run()
        return code
    except SystemExit as exc:  # the person's code left: the supervisor leaves with the same status
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        raise
    except KeyboardInterrupt:
        code = 130
        raise
    finally:
        repl.ctrl.close()  # the last input's state for --resume is written before leaving
        if repl.checkpoints is not None:
            repl.checkpoints.bye(code)
