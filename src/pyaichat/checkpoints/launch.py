"""The fork at start-up: the process the shell started becomes the supervisor, its child the session.

Kept apart from ``supervisor`` so that the session's process imports next to nothing for it before its first
prompt (the supervisor's own modules load in the supervisor, after the fork).
"""

from __future__ import annotations

import os
import select
from typing import NoReturn

from .link import Link

SET_UP_AFTER = 1.0  # seconds: the supervisor sets itself up once the first prompt is on screen


def start(budget_gb: float | None) -> tuple[Link, int]:
    """Fork the session. In the child (the session) return its link to the supervisor and the terminal
    group's id; the parent becomes the supervisor and never returns: it leaves as the session does."""
    ours, theirs = Link.fds()
    pgid = os.getpgrp()
    pid = os.fork()
    if pid == 0:
        os.close(ours)
        return Link(theirs), pgid
    os.close(theirs)
    _supervise(Link(ours), pid, pgid, budget_gb)


def _supervise(link: Link, pid: int, pgid: int, budget_gb: float | None) -> NoReturn:
    _until_needed(link)
    try:
        from .supervisor import Supervisor  # the supervisor's own modules: after the fork, here only

        Supervisor(link, pid, pgid, budget_gb).run()  # never returns
    finally:  # it could not supervise: it waits for the session, and leaves with its exit code
        while True:
            try:
                status = os.waitpid(pid, 0)[1]
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                status = 0
                break
        os._exit(os.waitstatus_to_exitcode(status) % 256)


def _until_needed(link: Link) -> None:
    """Wait, idle, until the session first says something (or ends), or ``SET_UP_AFTER``: the supervisor's
    imports and set-up would otherwise take a core from the session while it draws its first prompt (on two
    busy cores, a sixth of it). The person's keys are the session's from the start."""
    import signal  # here, in the supervisor only

    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    try:
        select.select([link.fileno()], [], [], SET_UP_AFTER)
    except (OSError, ValueError):
        pass
