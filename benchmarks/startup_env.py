"""The environment of a new user's pyaichat start-up, shared by the start-up benchmarks."""

from __future__ import annotations

import os


def new_user_env(tmp: str, *, terminal: bool = False) -> dict[str, str]:
    """No user config and no ``PYAICHAT_*`` variable; state, config and IPython directories under ``tmp``.

    ``PYTHONDONTWRITEBYTECODE`` is dropped: it would make pyaichat (an editable install: no .pyc from pip)
    compile every module from source on every run while IPython's .pyc files exist; the warm-up runs write
    pyaichat's instead. ``terminal`` adds what a pexpect pty needs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYAICHAT_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        XDG_CONFIG_HOME=os.path.join(tmp, "config"),
        XDG_STATE_HOME=os.path.join(tmp, "state"),
        IPYTHONDIR=os.path.join(tmp, "ipython"),
    )
    if terminal:
        env.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")  # pexpect never answers cursor-position requests
    return env
