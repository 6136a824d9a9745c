"""Long output through the user's pager, the way ``git`` does it.

``$PAGER`` when it is set (``PAGER=cat`` turns paging off), else ``less``. ``LESS`` defaults to ``FRXK``
unless the user set it: quit at once if it fits (F), keep colours (R), leave the text on the screen after
quitting (X), and let Ctrl-C quit (K). Our ``less`` also says on its last line how to get back (``q``): the
pager opens only when the person asked for it (``/more``), and the way out is on the screen.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

__all__ = ["page"]


def pager_command() -> list[str] | None:
    """The pager to run, or ``None`` when there is none."""
    configured = os.environ.get("PAGER", "").strip()
    if configured:
        try:
            words = shlex.split(configured)
        except ValueError:
            return None
        if not words or not shutil.which(words[0]):
            return None
    else:
        found = shutil.which("less")
        if not found:
            return None
        words = [found]
    own_prompt = any(w.startswith("-P") for w in [*words[1:], *os.environ.get("LESS", "").split()])
    if os.path.basename(words[0]) == "less" and not own_prompt:
        words.append(BACK_PROMPT)
    return words


# less's prompt (its specials ``? : . % \`` escaped): where the way back to the prompt is said.
BACK_PROMPT = "-Pspyaichat\\: q comes back to the prompt, space shows more, / searches"


def page(text: str) -> bool:
    """Show ``text`` (with its ANSI colours) through the pager; ``False`` when there is no pager to run or it
    failed to start, so that the caller prints the text itself."""
    command = pager_command()
    if command is None:
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRXK")
    try:
        subprocess.run(command, input=text.encode("utf-8", "replace"), env=env, check=False)
    except OSError:
        return False
    except KeyboardInterrupt:  # Ctrl-C in the pager: the page is closed, nothing else stops
        pass
    return True
