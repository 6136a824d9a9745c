"""Keys typed while an input is handled (an answer streaming, a command printing): held for the next prompt.

Between two prompts the terminal is in its ordinary mode: it echoes each key where the cursor happens to be
(inside the live answer, which then no longer knows how many lines it covers and leaves a stale copy behind),
and Ctrl-C, which the kernel turns into SIGINT, also throws away every key waiting in its input queue. So
while the front end draws output it puts the terminal in a quiet mode: no echo, no line editing (the keys
stay as typed, Enter included), Ctrl-C still a signal but one that flushes nothing (``NOFLSH``). The next
prompt reads the keys and shows them in its line, as a shell does with type-ahead.

Whatever needs the ordinary terminal gets it back first: the person's own code (``input()`` must echo) and
every question asked with another prompt (they save and restore the mode they find). A question takes the
held keys out of the way first (``take``): a key typed before "Run it?" was on the screen never answers it.
"""

from __future__ import annotations

import sys
from typing import Any


class TypeAhead:
    """``hold()`` the keys typed from now on, unechoed; ``release()`` gives the terminal back as it was.
    Both are cheap when nothing changes and never raise: a stdin that is not a terminal is left alone."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = fd
        self._saved: list[Any] | None = None

    @property
    def held(self) -> bool:
        return self._saved is not None

    def hold(self) -> None:
        if self._saved is not None:
            return
        try:
            import termios  # POSIX only; loaded with the first output, long after start-up

            fd = sys.stdin.fileno() if self._fd is None else self._fd
            saved = termios.tcgetattr(fd)
            quiet = termios.tcgetattr(fd)
            quiet[0] &= ~termios.ICRNL  # Enter stays the key prompt_toolkit knows as Enter
            quiet[3] &= ~(termios.ECHO | termios.ICANON)
            quiet[3] |= termios.NOFLSH  # Ctrl-C interrupts, and the keys typed before it stay queued
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        except Exception:  # not POSIX, not a terminal (termios.error), a closed stdin
            return
        self._fd, self._saved = fd, saved

    def take(self) -> str:
        """The keys held so far, out of the input queue, as text (printable characters only: an arrow key's
        escape sequence is no text for a prompt)."""
        if self._saved is None or self._fd is None:
            return ""
        import os  # only when an answer streams
        import select

        data = b""
        try:
            while select.select([self._fd], [], [], 0)[0]:
                chunk = os.read(self._fd, 4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        text = data.decode("utf-8", "replace")
        return "".join(ch for ch in text if ch.isprintable() or ch == "\t")

    def release(self) -> None:
        saved, self._saved = self._saved, None
        if saved is None or self._fd is None:
            return
        try:
            import termios  # as above (POSIX)

            # TCSANOW, not TCSAFLUSH: the held keys stay queued for the next prompt.
            termios.tcsetattr(self._fd, termios.TCSANOW, saved)
        except Exception:  # the terminal went away
            pass
