"""A preview of proposed code: what it would do to the session, found by running it where it cannot do it.

``preview`` runs the code the assistant proposes — ordinary Python, not the sandbox's restricted dialect —
in the forked child ``run_python`` uses, against the copy-on-write view of the session, behind the same kernel
walls, resource limits and deadline; only file *reads* are widened (``confine.everywhere``: the CSV the code
loads, not ``/dev``, ``/proc`` or ``/sys``). Writes, the network and other processes stay out of reach, and
memory the session shares with a file or another process is private in the child (``shared_memory``), so a
memmap the code writes changes neither the session nor the file. What comes back is a plain ``Preview``
(JSON-serialisable: a Jupyter kernel's helper can send it over the wire) for the user's eyes only — nothing
of it is meant for the model: the code's effects on each name (``effects``), what it printed, how long it
took, and its exception if it raised one.

Where it cannot run, nothing runs and ``reason`` says why in one sentence: no kernel walls here (the
in-process policy, another OS, an old kernel: ``SandboxPolicy.preview_unavailable``), the session holds GPU
state a forked copy cannot use. Where it ran but could
not finish — it needs the network or a write, it overran the deadline, its process died — ``status`` is
``incomplete`` and ``reason`` says so; effects up to that point are still listed.

The code could, on purpose, forge its own preview (it runs in the process that writes the result): a preview
tells what ordinary code does; it is not a verdict on hostile code — the walls are what keeps that harmless.
"""

from __future__ import annotations

import ast
import errno
import os
import reprlib
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import CapabilityTimeout
from ..deadline import is_user_code
from . import shared_memory
from .confine import everywhere, probe
from .effects import Effect, Snapshot
from .isolation import run_forked
from .pages import Pages
from .pages import open_in_child as open_proc_files
from .policy import SandboxPolicy, forked

PREVIEW_FILENAME = "<proposal>"
MAX_EFFECTS = 500
_NEVER_READ = ("/dev/", "/proc/", "/sys/")


@dataclass
class Preview:
    """What running the proposed code would do. ``status``: ``previewed`` (it ran to its end, or to its own
    exception), ``incomplete`` (it ran but was stopped: see ``reason``) or ``unavailable`` (nothing ran:
    see ``reason``)."""

    status: str
    reason: str | None = None
    ok: bool = False  # the code ran without raising
    error: str | None = None  # its exception, one line
    effects: list[Effect] = field(default_factory=list)
    effects_omitted: int = 0
    output: str = ""
    output_truncated: bool = False
    duration_ms: float | None = None  # the code's own run time in the child
    total_ms: float = 0.0  # what the user waited for the preview
    stopped_after: float | None = None  # seconds: the deadline the code ran into (``incomplete``)

    @property
    def in_place(self) -> list[Effect]:
        """Changes to objects themselves: rebinding the name back would not undo them."""
        return [e for e in self.effects if e.change == "changed"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[tuple[str, str]]:
        """What the proposal panel shows, as ``(kind, text)`` lines: ``head``, ``effect``, ``in_place`` (an
        effect undo cannot take back), ``output`` or ``note``; each front end styles the kinds its own way."""
        if self.status == "unavailable":
            return [("note", self.reason or "No preview here; nothing unapproved runs.")]
        if self.duration_ms is not None:
            where = f"ran on a walled copy of your session in {self.duration_ms:,.0f} ms"
        elif self.stopped_after is not None:
            where = f"stopped after {self.stopped_after:.1f} s on a walled copy of your session"
        else:
            where = "on a walled copy of your session"
        out: list[tuple[str, str]] = [("head", f"Preview ({where}; nothing has changed yet):")]
        verbs = {"created": "new", "rebound": "rebinds", "deleted": "deletes", "changed": "changes"}
        for e in self.effects:
            before, after = e.before or "", e.after or ""
            shape = f"{before} → {after}" if before and after else (before or after)
            detail = f" ({e.detail})" if e.detail and e.detail != "changed in place" else ""
            if e.change == "changed":
                line = f"  changes {e.name} in place: {shape}{detail} — /undo cannot take this back"
                out.append(("in_place", line))
            else:
                out.append(("effect", f"  {verbs.get(e.change, e.change)} {e.name}: {shape}{detail}"))
        if self.effects_omitted:
            out.append(("effect", f"  … and {self.effects_omitted:,} more"))
        if not self.effects and self.duration_ms is not None:  # else the code never got to its end
            out.append(("effect", "  no variable created, rebound, deleted or changed"))
        if self.output.strip():
            cut = " (cut)" if self.output_truncated else ""
            out.append(("output", f"  output{cut}:"))
            out += [("output", f"    {line}") for line in self.output.rstrip().splitlines()[:12]]
        if self.error:
            out.append(("note", f"  it raised {self.error}"))
        if self.reason:
            out.append(("note", f"  {self.reason}"))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preview:
        fields = dict(data)
        fields["effects"] = [Effect(**e) for e in fields.get("effects", ())]
        return cls(**fields)


def unavailable_reason(policy: SandboxPolicy) -> str | None:
    """Why no preview can run here (None: it can), without running anything."""
    reason = policy.preview_unavailable()
    if reason:
        return reason
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is not None and cuda.is_initialized():
            return "No preview: the session holds GPU (CUDA) state, which a forked copy cannot use."
    except Exception:
        pass
    return None


def preview(
    namespace: dict[str, Any],
    source: str,
    *,
    timeout: float,
    policy: SandboxPolicy | None = None,
    max_output_chars: int = 4000,
    transform: Callable[[str], str] | None = None,
) -> Preview:
    """Run ``source`` in a walled, forked child against ``namespace`` and say what it would do. ``policy``:
    the sandbox's (``sandbox.policy_for``; by default the forked child behind this kernel's walls; the
    in-process policy previews nothing); ``transform`` turns front-end syntax (IPython's ``%magic``) into
    Python first. Never raises for a problem of the code or the platform."""
    started = time.monotonic()
    policy = policy if policy is not None else forked(probe())

    def done(result: Preview) -> Preview:
        result.total_ms = round((time.monotonic() - started) * 1000, 1)
        return result

    reason = unavailable_reason(policy)
    if reason:
        return done(Preview("unavailable", reason))
    walls = policy.walls  # type: ignore[attr-defined]  (only a walled forked child gets here)
    try:
        body, last = _compile(transform(source) if transform else source)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return done(Preview("previewed", error=f"SyntaxError: {exc.msg}{where}"))
    except Exception as exc:  # a front end's transformer that failed
        return done(Preview("unavailable", f"No preview: the code could not be read ({type(exc).__name__})."))
    proc_files: list[int] = []  # the child's pagemap and maps, opened there before the walls

    def open_in_child() -> tuple[int, ...]:
        proc_files.extend(open_proc_files())
        return tuple(fd for fd in proc_files if fd >= 0)

    snapshot = Snapshot(namespace)  # here, where the objects are warm (see ``Snapshot``)

    def job() -> dict[str, Any]:
        fds = proc_files if len(proc_files) == 2 else [-1, -1]
        return {"ok": True, "preview": _run(namespace, snapshot, body, last, fds, max_output_chars)}

    try:
        outcome = run_forked(job, timeout, everywhere(walls), require_walls=True, open_in_child=open_in_child)
    except CapabilityTimeout:
        return done(Preview("incomplete", _overran(timeout), stopped_after=timeout))
    except OSError as exc:  # fork itself failed: no memory for the page tables, a process limit
        return done(Preview("unavailable", f"No preview: the session could not be forked ({exc.strerror})."))
    if not outcome.get("ok"):
        return done(Preview("incomplete", f"The preview was stopped: {outcome.get('error')}."))
    return done(_finish(Preview.from_dict(outcome["preview"])))


def _compile(source: str) -> tuple[types.CodeType | None, types.CodeType | None]:
    """Statements and the final expression, compiled apart so the expression's value is shown as the REPL
    would echo it."""
    tree = ast.parse(source, PREVIEW_FILENAME, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), PREVIEW_FILENAME, "eval")
    return (compile(tree, PREVIEW_FILENAME, "exec") if tree.body else None), last


def _overran(timeout: float) -> str:
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


class _Output:
    """``sys.stdout`` and ``sys.stderr`` of the child: the first ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit, self.parts, self.size, self.truncated = limit, [], 0, False

    def write(self, text: str) -> int:
        room = self.limit - self.size
        if len(text) > room:
            self.truncated = True
            text = text[: max(room, 0)]
        self.parts.append(text)
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _echo(value: Any, limit: int) -> str:
    shown = reprlib.Repr()
    shown.maxlevel, shown.maxother, shown.maxstring, shown.maxlong = 4, limit, limit, 400
    shown.maxlist = shown.maxtuple = shown.maxdict = shown.maxset = shown.maxfrozenset = shown.maxdeque = 100
    return shown.repr(value)


def _run(
    namespace: dict[str, Any],
    snapshot: Snapshot,
    body: types.CodeType | None,
    last: types.CodeType | None,
    proc_files: list[int],
    limit: int,
) -> dict[str, Any]:
    """In the child, behind the walls: run, compare with the snapshot taken before ``fork``."""
    done = shared_memory.last
    pages = Pages(proc_files[0], proc_files[1], [(m.start, m.end) for m in done.copied])
    out = _Output(limit)
    sys.stdout = sys.stderr = out  # type: ignore[assignment]  (this process ends after the preview)
    error = reason = None
    started = time.perf_counter()
    try:
        if body is not None:
            exec(body, namespace)
        if last is not None:
            value = eval(last, namespace)
            if value is not None:
                out.write(_echo(value, limit) + "\n")
    except BaseException as exc:  # the code's own exception, or a wall it met
        error, reason = _one_line(exc), _blocked(exc)
    duration = (time.perf_counter() - started) * 1000
    effects = snapshot.effects(
        namespace,
        pages,
        sealed=[(m.start, m.end) for m in done.sealed],
        files=[(m.start, m.end, m.path.removesuffix(" (deleted)")) for m in done.files],
    )
    return {
        "status": "incomplete" if reason else "previewed",
        "reason": reason,
        "ok": error is None,
        "error": error,
        "effects": [asdict(e) for e in effects[:MAX_EFFECTS]],
        "effects_omitted": max(len(effects) - MAX_EFFECTS, 0),
        "output": "".join(out.parts),
        "output_truncated": out.truncated,
        "duration_ms": round(duration, 2),
    }


def _one_line(exc: BaseException) -> str:
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


def _blocked(exc: BaseException) -> str | None:
    """Why the code stopped at a wall, one sentence, or None if the failure is the code's own."""
    chain = _chain(exc)
    text = " ".join(str(e) for e in chain).lower()
    for e in chain:
        if not isinstance(e, OSError):
            continue
        frames = _frames(e)
        if e.errno == errno.EPERM and any(f.endswith(("socket.py", "ssl.py")) for f in frames):
            return "the code needs the network, which a preview never uses"
        path = e.filename
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and isinstance(path, str):
            if os.path.abspath(path).startswith(_NEVER_READ):
                return f"the code opens {path}, which a preview does not read"
            return f"the code writes {path}, which a preview never does"
    if "operation not permitted" in text and any(
        w in text for w in ("connect", "socket", "http", "host", "url")
    ):
        return "the code needs the network, which a preview never uses"
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


def _finish(found: Preview) -> Preview:
    """In the parent: the child's phrase made a sentence. A refusal on a file the user could not read either
    is the code's own permission error, not the wall's."""
    reason = found.reason
    if not reason:
        return found
    if reason.startswith("the code writes "):
        path = reason[len("the code writes ") :].split(", which")[0]
        if os.path.exists(path) and not os.access(path, os.R_OK):
            found.status, found.reason = "previewed", None
            return found
    found.reason = f"{reason[0].upper()}{reason[1:]}; the preview stopped there."
    return found
