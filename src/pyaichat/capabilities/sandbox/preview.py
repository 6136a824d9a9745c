"""A preview of proposed code: what it would do to the session, found by running it where it cannot do it.

``preview`` runs the code the assistant proposes — ordinary Python, not the sandbox's restricted dialect —
in the forked child ``run_python`` uses, against the copy-on-write view of the session, behind the same kernel
walls, resource limits and deadline; only file *reads* are widened (``confine.everywhere``: the CSV the code
loads, not ``/dev``, ``/proc`` or ``/sys``). Writes, the network and other processes stay out of reach, and
memory the session shares with a file or another process is private in the child (``shared_memory``), so a
memmap the code writes changes neither the session nor the file. What comes back is a plain ``Preview``
(JSON-serialisable: a Jupyter kernel's helper can send it over the wire) for the user's eyes: the code's
effects on each name (``effects``), what it printed, how long it took, and its exception if it raised one.
Only what it could not see (``Preview.told``) goes to whoever proposed the code.

Where it cannot run, nothing runs and ``reason`` says why in one sentence: no kernel walls here (the
in-process policy, another OS, an old kernel: ``SandboxPolicy.preview_unavailable``), the session holds GPU
state a forked copy cannot use. Where it ran but could
not finish — it needs the network or a write, it overran the deadline, its process died — ``status`` is
``incomplete`` and ``reason`` says so; effects up to that point are still listed.

What lies outside the session's names is said too (``unseen``, found by ``watch.Watch``): environment
variables, attributes of modules and classes replaced, threads and tasks that outlive the run, what the walls
refused even where the code caught the refusal (then the preview is ``incomplete``: from there on it went
another way than a real run would). Code that tampers with Python itself or with the preview (``json.dumps``,
a built-in, ``sys.modules``) gets one sentence and an ``incomplete`` preview; what it replaced is put back
before the preview reports, so the report still comes.

The code could, on purpose, forge its own preview (it runs in the process that writes the result): a preview
tells what ordinary code does; it is not a verdict on hostile code — the walls are what keeps that harmless.
"""

from __future__ import annotations

import ast
import reprlib
import sys
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import CapabilityTimeout
from . import shared_memory
from .confine import everywhere, probe
from .effects import Effect, Snapshot
from .isolation import CHANNEL_CLOSED, CHANNEL_WRITTEN, run_forked
from .pages import Pages
from .pages import open_in_child as open_proc_files
from .policy import SandboxPolicy, forked
from .stops import PREVIEW_FILENAME, blocked, one_line, overran, settle
from .unseen import TAMPERED, TAMPERED_OURS, Unseen
from .watch import Watch

__all__ = ["PREVIEW_FILENAME", "Preview", "preview", "unavailable_reason"]

MAX_EFFECTS = 500


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
    unseen: Unseen = field(default_factory=Unseen)  # what it did that the comparison of names cannot show

    @property
    def in_place(self) -> list[Effect]:
        """Changes to objects themselves: rebinding the name back would not undo them."""
        return [e for e in self.effects if e.change == "changed"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[tuple[str, str]]:
        """What the proposal panel shows, as ``(kind, text)`` lines: ``head``, ``effect``, ``in_place`` (an
        effect undo cannot take back), ``unseen`` (what the preview could not see), ``tampered`` (the code
        tampers with Python or the preview), ``output`` or ``note``; each front end styles the kinds its own
        way."""
        if self.status == "unavailable":
            return [("note", self.reason or "No preview here; nothing unapproved runs.")]
        if self.duration_ms is not None:
            where = f"ran on a walled copy of your session in {self.duration_ms:,.0f} ms"
        elif self.stopped_after is not None:
            where = f"stopped after {self.stopped_after:.1f} s on a walled copy of your session"
        else:
            where = "on a walled copy of your session"
        title = (
            "Incomplete preview" if self.status == "incomplete" and self.stopped_after is None else "Preview"
        )
        out: list[tuple[str, str]] = [("head", f"{title} ({where}; nothing has changed yet):")]
        tampered = self.unseen.tamper_sentence()
        if tampered:
            out.append(("tampered", f"  {tampered}"))
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
        out += [("unseen", f"  {line}") for line in self.unseen.lines() if line != tampered]
        if self.output.strip():
            cut = " (cut)" if self.output_truncated else ""
            out.append(("output", f"  output{cut}:"))
            out += [("output", f"    {line}") for line in self.output.rstrip().splitlines()[:12]]
        if self.error:
            out.append(("note", f"  it raised {self.error}"))
        if self.reason:
            out.append(("note", f"  {self.reason}"))
        return out

    def told(self, source: str) -> str:
        """What the agent that proposed ``source`` is told of this preview: what it could not see ("" when it
        saw everything). The rest — effects, output — is for the person's eyes."""
        return self.unseen.told(source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preview:
        fields = dict(data)
        fields["effects"] = [Effect(**e) for e in fields.get("effects", ())]
        fields["unseen"] = Unseen.from_dict(fields.get("unseen"))
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
    walls = policy.walls  # type: ignore[attr-defined]  # only a walled forked child gets here
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
    watch = _quietly(lambda: Watch(namespace))
    watch = watch if watch is not _FAILED else Watch.idle()

    def job() -> dict[str, Any]:
        fds = proc_files if len(proc_files) == 2 else [-1, -1]
        return {"ok": True, "preview": _run(namespace, snapshot, watch, body, last, fds, max_output_chars)}

    try:
        outcome = run_forked(job, timeout, everywhere(walls), require_walls=True, open_in_child=open_in_child)
    except CapabilityTimeout:
        return done(Preview("incomplete", overran(timeout), stopped_after=timeout))
    except OSError as exc:  # fork itself failed: no memory for the page tables, a process limit
        return done(Preview("unavailable", f"No preview: the session could not be forked ({exc.strerror})."))
    channel = outcome.get("channel")
    if channel == CHANNEL_CLOSED:
        unseen = Unseen()
        unseen.add(TAMPERED_OURS, "closes the channel the preview reports through")
        return done(Preview("incomplete", unseen=unseen))
    if not outcome.get("ok"):
        return done(Preview("incomplete", f"The preview was stopped: {outcome.get('error')}."))
    found = Preview.from_dict(outcome["preview"])
    if channel == CHANNEL_WRITTEN:
        found.unseen.add(TAMPERED_OURS, "writes into the channel the preview reports through")
    return done(_finish(found))


def _compile(source: str) -> tuple[types.CodeType | None, types.CodeType | None]:
    """Statements and the final expression, compiled apart so the expression's value is shown as the REPL
    would echo it."""
    tree = ast.parse(source, PREVIEW_FILENAME, "exec")
    last = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = compile(ast.Expression(final.value), PREVIEW_FILENAME, "eval")
    return (compile(tree, PREVIEW_FILENAME, "exec") if tree.body else None), last


class _Output:
    """``sys.stdout`` and ``sys.stderr`` of the child: the first ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.limit, self.size, self.truncated = limit, 0, False

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


_FAILED = object()


def _quietly(step: Callable[[], Any]) -> Any:
    """``step()``, or ``_FAILED`` if it raised: the watch must never stop a preview."""
    try:
        return step()
    except Exception:
        return _FAILED


def _finish(found: Preview) -> Preview:
    """In the parent: the reason made a sentence and merged with what the watch saw (``stops.settle``)."""
    found.status, found.reason = settle(found.status, found.reason, found.ok, found.unseen)
    return found


def _run(
    namespace: dict[str, Any],
    snapshot: Snapshot,
    watch: Watch,
    body: types.CodeType | None,
    last: types.CodeType | None,
    proc_files: list[int],
    limit: int,
) -> dict[str, Any]:
    """In the child, behind the walls: run, put back what the code replaced of Python's own (``watch``),
    compare with the snapshot taken before ``fork``."""
    done = shared_memory.last
    pages = Pages(proc_files[0], proc_files[1], [(m.start, m.end) for m in done.copied])
    out = _Output(limit)
    sys.stdout = sys.stderr = out  # this process ends after the preview
    raised: BaseException | None = None
    armed = _quietly(watch.arm) is not _FAILED
    started = time.perf_counter()
    try:
        if body is not None:
            exec(body, namespace)
        if last is not None:
            value = eval(last, namespace)
            if value is not None:
                out.write(_echo(value, limit) + "\n")
    except BaseException as exc:  # the code's own exception, or a wall it met
        raised = exc
    duration = (time.perf_counter() - started) * 1000
    # first of all: what follows runs on Python's own functions again
    unseen = _quietly(watch.collect) if armed else Unseen()
    if unseen is _FAILED:  # the watch itself broke: the code changed more of Python than it puts back
        unseen = Unseen(counts={TAMPERED: 1})
    error = one_line(raised) if raised is not None else None
    reason = blocked(raised, unseen) if raised is not None else None
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
        "unseen": asdict(unseen),
    }
