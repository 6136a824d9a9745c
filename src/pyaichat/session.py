"""The user's persistent Python session: namespace, REPL-style execution, numbered history and the last error.

Both front ends and the read-only capabilities share one ``Session``; nothing here knows about terminals,
LLMs or rendering, so the same object serves the REPL, piped input, the IPython extension and tests.
"""

from __future__ import annotations

import ast
import codeop
import io
import linecache
import os
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .configuration.config import Config, Settings

if TYPE_CHECKING:
    from .records import ExecResult, FrameInfo, HistoryEntry, LastError

INPUT_FILENAME = "<input-{n}>"
_SUMMARY_CHARS = 200
OUTPUT_CHARS = 20_000  # characters of one input's text output kept in its history entry (for notebooks)


class Tee(io.TextIOBase):
    """Writes through to the real stream; keeps the first ``keep`` characters (the history entry's output)
    and counts the rest, so a cut can say how much is missing."""

    def __init__(self, target: Any, keep: int = OUTPUT_CHARS) -> None:
        self._target = target
        self._keep = keep
        self.captured: list[str] = []
        self._size = 0
        self.total = 0

    def write(self, text: str) -> int:
        self.total += len(text)
        if self._size < self._keep:
            self.captured.append(text[: self._keep - self._size])
            self._size += len(self.captured[-1])
        return self._target.write(text)

    def text(self) -> str:
        return "".join(self.captured)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return bool(getattr(self._target, "isatty", lambda: False)())

    @property
    def encoding(self) -> str:  # type: ignore[override]  # a str where TextIO's is a property
        return getattr(self._target, "encoding", "utf-8")

    @property
    def target(self) -> Any:
        return self._target

    def fileno(self) -> int:
        return self._target.fileno()

    def __getattr__(self, name: str) -> Any:  # ``buffer``, ``reconfigure``…: the real stream's, not captured
        return getattr(self._target, name)


def short(text: str, limit: int = _SUMMARY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _after_echoed_ctrl_c(stream: Any) -> str:
    """A newline when the terminal echoed the Ctrl-C as ``^C`` (its ``ECHOCTL`` mode), which leaves the cursor
    after it: ``KeyboardInterrupt`` then starts its own line instead of reading ``^CKeyboardInterrupt``."""
    try:
        fd = stream.fileno()
        if not os.isatty(fd):
            return ""
        import termios  # only after a Ctrl-C in a terminal

        return "\n" if termios.tcgetattr(fd)[3] & termios.ECHOCTL else ""
    except (AttributeError, OSError, ValueError, ImportError):
        return ""


def needs_more_input(source: str) -> bool:
    """True while ``source`` is an unfinished input, with the interactive interpreter's rules: an open
    bracket or string, or a compound statement not yet ended by a blank line. A syntax error is "complete"
    (running reports it)."""
    try:
        return codeop.compile_command(source, "<input>", "single") is None
    except (SyntaxError, ValueError, OverflowError):
        return False


def is_blank_tail(text: str) -> bool:
    """True when the last line of a multi-line input is empty: the blank line that ends a block."""
    return "\n" in text and not text.rsplit("\n", 1)[1].strip()


def input_is_complete(text: str) -> bool:
    """Would Enter at the end of ``text`` run it at an interactive prompt? Python's rules: a blank last line
    ends a compound statement."""
    if not text.strip():
        return True
    if is_blank_tail(text):
        return not needs_more_input(text.rstrip(" \t") if text.rstrip(" \t").endswith("\n") else text + "\n")
    return not needs_more_input(text)


class Session:
    """A persistent namespace with REPL semantics.

    ``run`` executes statements, echoes the value of a final expression (stored in ``_``), records numbered
    history and the last error, and sets ``sys.last_*`` as the standard REPL does.
    """

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        *,
        config: Config | None = None,
        settings: Settings | None = None,
        echo: Callable[[Any], None] | None = None,
    ) -> None:
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.namespace.setdefault("__name__", "__main__")
        self.namespace.setdefault("__builtins__", __builtins__)
        # what capabilities over it may reveal: the session's settings (``config``: a holder of its own)
        self.settings = settings if settings is not None else Settings(config)
        self.history: list[HistoryEntry] = []
        self.last_error: LastError | None = None
        self._echo = echo or self._default_echo
        self._counter = 0
        self.numbered_here = True  # False where IPython numbers the inputs (``runtime.cells``)

    @property
    def config(self) -> Config:
        """The current configuration (``settings.current()``)."""
        return self.settings.current()

    def adopt_history(self, entries: list[HistoryEntry]) -> bool:
        """Take a resumed session's inputs as this one's first, numbering on after them; only before any
        input ran here, and only where this session numbers its inputs (IPython numbers its own)."""
        if not self.numbered_here or self._counter or self.history or not entries:
            return False
        self.history.extend(entries)
        self._counter = max(entry.number for entry in entries)
        return True

    # -- execution -------------------------------------------------------------------------------------------
    @property
    def next_number(self) -> int:
        return self._counter + 1

    def run(self, source: str) -> ExecResult:
        """Run one input like a REPL. ``SystemExit`` propagates (the front end exits); all else is caught."""
        from .records import ExecResult, HistoryEntry  # loaded with the first run, not at start-up

        self._counter += 1
        number = self._counter
        filename = INPUT_FILENAME.format(n=number)
        _register_source(filename, source)
        tee_out, tee_err = Tee(sys.stdout), Tee(sys.stderr)
        result = ExecResult(ok=True, number=number)
        started = time.perf_counter()
        real_out, real_err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = tee_out, tee_err
        try:
            body, last = _compile(source, filename)
            if body is not None:
                exec(body, self.namespace)
            if last is not None:
                value = eval(last, self.namespace)
                if value is not None:
                    result.value, result.has_value = value, True
                    self._store_underscore(value)
        except SystemExit:
            raise
        except KeyboardInterrupt:
            # The user stopped their own code: report it, but it is not an error to explain.
            result.ok, result.interrupted = False, True
            print(_after_echoed_ctrl_c(real_err) + "KeyboardInterrupt", file=sys.stderr)
        except BaseException as exc:
            result.ok = False
            result.error = self._record_error(exc, source, number)
            sys.stderr.write(result.error.formatted)
        finally:
            sys.stdout, sys.stderr = real_out, real_err
            result.duration_ms = (time.perf_counter() - started) * 1000
        out, err = tee_out.text(), tee_err.text()
        result.output = out[:_SUMMARY_CHARS] + err[:_SUMMARY_CHARS]
        value_repr = safe_repr(result.value) if result.has_value else None
        if result.has_value:  # echoed outside the tee: the summary shows the value once, not twice
            self._echo(result.value)
        stdout, stderr, shown = bounded_outputs(
            (out, tee_out.total), (err, tee_err.total), (value_repr, len(value_repr or ""))
        )
        self.history.append(
            HistoryEntry(
                number,
                source,
                result.ok,
                self._summarise(result, value_repr),
                round(result.duration_ms, 2),
                stdout=stdout or "",
                stderr=stderr or "",
                result=shown,
            )
        )
        return result

    def _store_underscore(self, value: Any) -> None:
        ns = self.namespace
        ns["___"], ns["__"] = ns.get("__"), ns.get("_")
        ns["_"] = value

    @staticmethod
    def _default_echo(value: Any) -> None:
        try:
            text = repr(value)
        except Exception as exc:  # a broken __repr__ must not look like the user's code failed
            text = f"<repr of {type(value).__name__} failed: {type(exc).__name__}: {exc}>"
        print(text)

    def _summarise(self, result: ExecResult, value_repr: str | None) -> str:
        if result.error is not None:
            return short(result.error.headline())
        parts = []
        if result.output.strip():
            parts.append(short(result.output, 120))
        if result.has_value:
            parts.append(
                short(value_repr, 120) if value_repr is not None else f"<{type(result.value).__name__}>"
            )
        return " | ".join(parts)

    # -- errors ----------------------------------------------------------------------------------------------
    def _record_error(self, exc: BaseException, source: str, number: int) -> LastError:
        tb = _strip_own_frames(exc.__traceback__)
        exc.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = exc
        frames = _frames(tb)
        segment = lineno = None
        for frame in reversed(frames):  # innermost frame that is code typed at the prompt
            if frame.filename == INPUT_FILENAME.format(n=number):
                segment, lineno = frame.segment or frame.line, frame.lineno
                break
        if segment is None and isinstance(exc, SyntaxError) and exc.text:
            segment, lineno = exc.text.strip(), exc.lineno
        return self._keep_error(exc, frames, source, number, segment, lineno)

    def record_exception(self, exc: BaseException, source: str | None = None) -> LastError:
        """Record an exception raised elsewhere (e.g. IPython's own run_cell) as the session's last error."""
        frames = _frames(exc.__traceback__)
        inner = frames[-1] if frames else None
        segment = (inner.segment or inner.line) if inner else None
        return self._keep_error(exc, frames, source, None, segment, inner.lineno if inner else None)

    def _keep_error(
        self,
        exc: BaseException,
        frames: list[FrameInfo],
        source: str | None,
        number: int | None,
        segment: str | None,
        lineno: int | None,
    ) -> LastError:
        """``exc`` as the session's last error (``number``: the input it came from, when typed here)."""
        from .records import LastError  # not at start-up (as above)

        self.last_error = LastError(
            type_name=type(exc).__qualname__,
            message=str(exc),
            frames=frames,
            source=source,
            input_number=number,
            segment=segment,
            lineno=lineno,
            formatted="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            exception=exc,
        )
        return self.last_error


def safe_repr(value: Any) -> str | None:
    """``repr(value)``, or ``None`` when its ``__repr__`` fails (the summary then names the type)."""
    try:
        return repr(value)
    except Exception:
        return None


def bounded_outputs(*parts: tuple[str | None, int], limit: int = OUTPUT_CHARS) -> list[str | None]:
    """Each (kept text, full length) cut so that together they hold at most ``limit`` characters; a cut
    part ends with a line saying how many characters were not kept."""
    out: list[str | None] = []
    left = limit
    for text, total in parts:
        if text is None:
            out.append(None)
            continue
        kept = text[: max(left, 0)]
        left -= len(kept)
        if total > len(kept):
            kept += f"\n… [{total - len(kept):,} more characters not kept]\n"
        out.append(kept)
    return out


def _compile(source: str, filename: str) -> tuple[types.CodeType | None, types.CodeType | None]:
    """Compile ``source`` into (statements, final expression) so the last expression can be echoed."""
    tree = ast.parse(source, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body[-1].value)
        tree.body.pop()
        last = compile(expr, filename, "eval")
    body = compile(tree, filename, "exec") if tree.body else None
    return body, last


def _register_source(filename: str, source: str) -> None:
    """Make typed input visible to ``traceback``/``linecache`` like a real file."""
    lines = [line + "\n" for line in source.splitlines()]
    linecache.cache[filename] = (len(source), None, lines, filename)


def _strip_own_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """Drop the leading frames that belong to pyaichat itself (and ``ast.parse``, which it calls to compile
    the input), so a traceback starts at the user's code; a syntax error then shows no frames, as in
    ``python``."""
    own = (__file__, ast.__file__)
    while tb is not None and tb.tb_frame.f_code.co_filename in own:
        tb = tb.tb_next
    return tb


def _frames(tb: types.TracebackType | None) -> list[FrameInfo]:
    from .records import FrameInfo  # not at start-up

    frames: list[FrameInfo] = []
    for frame, summary in zip(_walk(tb), traceback.extract_tb(tb), strict=False):
        line = (summary.line or "").strip()
        frames.append(
            FrameInfo(
                filename=summary.filename,
                lineno=summary.lineno,
                name=summary.name,
                line=line,
                segment=_segment(summary),
                local_names=sorted(n for n in frame.f_locals if not n.startswith("__"))[:50]
                if frame.f_code.co_name != "<module>"
                else [],
            )
        )
    return frames


def _walk(tb: types.TracebackType | None):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def _segment(summary: traceback.FrameSummary) -> str | None:
    """The exact failing source segment, from the positions Python ≥ 3.11 records."""
    lineno, end = summary.lineno, getattr(summary, "end_lineno", None)
    col, end_col = getattr(summary, "colno", None), getattr(summary, "end_colno", None)
    if lineno is None or end is None or col is None or end_col is None:
        return None
    lines = linecache.getlines(summary.filename)
    if not lines or end > len(lines):
        return None
    if lineno == end:
        text = lines[lineno - 1][col:end_col]
    else:
        chunk = [lines[lineno - 1][col:], *lines[lineno : end - 1], lines[end - 1][:end_col]]
        text = "".join(chunk)
    return text.strip() or None
