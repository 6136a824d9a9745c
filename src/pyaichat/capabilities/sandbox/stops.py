"""Why a preview stopped or went another way than a real run, in one sentence: the code overran the deadline,
met a wall (a write, the network, a process, a device), asked for input — and, merged with what the watch saw
(``unseen``), whether the walls changed its course even where the code caught the refusal.

Used by ``preview``: ``one_line`` and ``blocked`` in the child, right after the code; ``settle`` and
``overran`` in the parent.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import threading
import types

from ..deadline import is_user_code
from .unseen import ENV_READ, NETWORK, PROCESSES, WRITES, Unseen

PREVIEW_FILENAME = "<proposal>"
_NEVER_READ = ("/dev/", "/proc/", "/sys/")
_QUOTED_PATH = re.compile(r"'(/[^'\n]+)'")  # a path a library quotes in its error: "… open local file '/x'"


def overran(timeout: float) -> str:
    """What happened, in plain words; threads are named only when the session runs threads of the user's
    own code (a forked copy has none of them, and code waiting on one waits for ever) — not for the threads
    libraries keep (litellm's logging, IPython's history, a kernel's sockets), which ordinary code never
    waits on."""
    text = (
        f"The code was still running when the preview's {timeout:.1f} s ran out, so it was stopped there and "
        "what it would change is not known; running it for real has no such limit."
    )
    names = users_threads()
    if names:
        which = f"thread {names[0]}" if len(names) == 1 else "threads " + ", ".join(names[:3])
        text += f" It may be waiting for your session's {which}, which the walled copy does not have."
    return text


def users_threads() -> list[str]:
    """The names of the live threads (other than this one and pyaichat's own) that run the user's code: their
    target or ``run`` is the user's, or their stack is in it now (a pool thread running the user's task)."""
    frames = sys._current_frames()
    found = []
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.name.startswith("pyaichat-"):
            continue
        if not thread.is_alive():
            continue
        if _started_by_user(thread) or _in_users_code(frames.get(thread.ident or -1)):
            found.append(thread.name)
    return found


def _started_by_user(thread: threading.Thread) -> bool:
    run = type(thread).run
    target = thread.__dict__.get("_target") if run is threading.Thread.run else run
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    return isinstance(code, types.CodeType) and is_user_code(code.co_filename)


def _in_users_code(frame: types.FrameType | None) -> bool:
    for _ in range(64):
        if frame is None:
            return False
        if is_user_code(frame.f_code.co_filename):
            return True
        frame = frame.f_back
    return False


def one_line(exc: BaseException) -> str:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == PREVIEW_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, SystemExit):
        text = "SystemExit: running the code would end the session"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = " ".join(text.split())
    text = text if len(text) <= 300 else text[:297] + "..."
    return text + (f" (line {line})" if line else "")


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during, and the ones libraries wrap in ``args`` or
    ``reason`` (urllib's ``URLError``)."""
    found: list[BaseException] = []
    todo = [exc]
    while todo and len(found) < 20:
        e = todo.pop()
        if e in found:
            continue
        found.append(e)
        todo += [
            x
            for x in (e.__cause__, e.__context__, getattr(e, "reason", None))
            if isinstance(x, BaseException)
        ]
        todo += [x for x in getattr(e, "args", ())[:3] if isinstance(x, BaseException)]
    return found


def blocked(exc: BaseException, unseen: Unseen) -> str | None:
    """Why the code stopped at a wall, one sentence, or None if the failure is the code's own. ``unseen``:
    what the watch saw it try (a process refused raises a bare "Operation not permitted")."""
    chain = _chain(exc)
    text = " ".join(str(e) for e in chain).lower()
    for e in chain:
        if not isinstance(e, OSError):
            continue
        frames = _frames(e)
        if e.errno == errno.EPERM and any(f.endswith(("socket.py", "ssl.py")) for f in frames):
            return "the code needs the network, which a preview never uses"
        if e.errno == errno.EPERM and e.filename is None and unseen.count(PROCESSES):
            return "the code starts a process, which a preview never does"
        if e.errno in (errno.EPERM, errno.EACCES) and e.filename is None and unseen.found.get(WRITES):
            return f"the code writes {unseen.found[WRITES][-1]}, which a preview never does"  # os.utime
        quoted = _QUOTED_PATH.search(str(e)) if e.filename is None else None
        if e.errno in (errno.EPERM, errno.EACCES, errno.EROFS) and quoted:  # a C library's own open (Arrow)
            path = quoted.group(1)
            if not os.path.abspath(path).startswith(_NEVER_READ) and os.path.exists(os.path.dirname(path)):
                return f"the code writes {path}, which a preview never does"
        path = e.filename
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and isinstance(path, str):
            if os.path.abspath(path).startswith(_NEVER_READ):
                return f"the code opens {path}, which a preview does not read"
            return f"the code writes {path}, which a preview never does"
    if "operation not permitted" in text and any(
        w in text for w in ("connect", "socket", "http", "host", "url")
    ):
        return "the code needs the network, which a preview never uses"
    if unseen.count(NETWORK) and any(isinstance(e, OSError) for e in chain):
        return "the code needs the network, which a preview never uses"  # e.g. a name it could not resolve
    if isinstance(exc, EOFError) and "reading a line" in text:
        return "the code asks for input, which a preview cannot give"
    return None


def _frames(exc: BaseException) -> list[str]:
    names = []
    tb = exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return names


def _could_write(path: str) -> bool:
    """Whether the person could write ``path`` (or create it in its folder)."""
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return os.access(path or "/", os.W_OK)


def settle(status: str, reason: str | None, ok: bool, unseen: Unseen) -> tuple[str, str | None]:
    """In the parent: the child's ``(status, reason)`` as the person reads them. The child's phrase is made a
    sentence and merged with what the watch saw; a refusal on a file the person could not read or write
    either is the code's own permission error, not the wall's. The preview is ``incomplete`` when a wall
    refused something, even if the code caught it, when the environment it ran without made it fail, or
    when the code tampers with Python or the preview."""
    for path in list(unseen.found.get(WRITES, ())):
        if not _could_write(path):
            unseen.discard(WRITES, path)  # a real run fails there too: the preview showed what happens
    if reason and reason.startswith("the code writes "):
        path = reason[len("the code writes ") :].split(", which")[0]
        tried = os.path.abspath(path) in unseen.found.get(WRITES, ()) or not _could_write(path)
        own = not _could_write(path) if tried else os.path.exists(path) and not os.access(path, os.R_OK)
        if own:
            status, reason = "previewed", None
        unseen.discard(WRITES, os.path.abspath(path))  # the reason names it
    if reason and reason.startswith("the code needs the network") and unseen.found.get(NETWORK):
        where = unseen.found[NETWORK][:3]
        reason = f"the code needs the network ({', '.join(where)}), which a preview never uses"
        unseen.found.pop(NETWORK)
        unseen.counts.pop(NETWORK, None)
    if reason and reason.startswith("the code starts a process") and unseen.found.get(PROCESSES):
        reason = f"the code starts a process ({unseen.found[PROCESSES][0]}), which a preview never does"
        unseen.discard(PROCESSES, unseen.found[PROCESSES][0])
    if unseen.tampered or unseen.refused or (unseen.count(ENV_READ) and not ok):
        status = "incomplete"  # a wall, or the environment it ran without, took it another way
    return status, (f"{reason[0].upper()}{reason[1:]}; the preview stopped there." if reason else None)
