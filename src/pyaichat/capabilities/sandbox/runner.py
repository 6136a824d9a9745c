"""Run one compiled snippet against the user's variables and turn the outcome into bounded text.

``execute`` is the same under every policy; under ``ForkedChild`` it runs inside the child (see ``isolation``)
and its dict result crosses the pipe as JSON. What differs — the compiler's dialect, what the run must leave
as it found it (``Watch``) — is asked of the request's policy (``policy``).
"""

from __future__ import annotations

import time
import types
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import CapabilityError, CapabilityTimeout, SandboxViolation
from ..summary import describe  # imported here, in the parent: a forked child must not import anything
from . import limits
from .compiler import RESULT_NAME, Compiled
from .guards import SANDBOX_FILENAME, Guards
from .policy_base import Request, Secrets

if TYPE_CHECKING:
    from .policy_base import Watch


def execute(req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> dict[str, Any]:
    """Run ``req.source``; return ``{"ok", "text", "error", "truncated"}``. Never raises."""
    return prepare(req, namespace, secrets)()


class Job:
    """A prepared run: calling it runs the snippet and returns ``execute``'s dict, and never raises. ``view``:
    the user's variables it is handed (as the guards admitted them: some are copies), which the forked
    child's ``scrub`` looks through too."""

    def __init__(self, state: _Prepared | None, failure: dict[str, Any] | None = None) -> None:
        self.state, self.failure = state, failure
        self.view: dict[str, Any] = state.view if state is not None else {}

    def __call__(self) -> dict[str, Any]:
        if self.state is None:
            return self.failure or _failure("the code could not be prepared")
        try:
            return _run(self.state)
        except BaseException as exc:
            return _caught(exc)


def prepare(req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> Job:
    """Everything before the snippet runs (compile, guards, the view of the user's variables, the globals),
    done now; the returned job runs it.

    In fork mode the parent prepares and the child only runs the job: the parent is warm, while in a fresh
    child every object it touches first costs a copy-on-write page fault (assembling the builtins there took
    about 1 ms of a 5 ms round trip)."""
    try:
        return Job(_prepare(req, namespace, secrets))
    except BaseException as exc:
        return Job(None, _caught(exc))


def _caught(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, (SandboxViolation, CapabilityTimeout)):
        return _failure(str(exc))
    # a bug of ours must not take the REPL (or the child) down
    return _failure(f"the sandbox failed: {type(exc).__name__}: {exc}")


def _failure(message: str, output: str = "") -> dict[str, Any]:
    return {"ok": False, "text": output, "error": message, "truncated": False}


@dataclass
class _Prepared:
    req: Request
    compiled: Compiled
    guards: Guards
    env: dict[str, Any]
    watch: Watch  # what the run must leave as it found it
    view: dict[str, Any]  # the user's variables, as admitted


def _prepare(req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> _Prepared:
    policy = req.policy
    compiled = policy.compile(req.source, req.mode, req.secret_names)
    guards = Guards(
        policy=policy,
        is_secret_name=secrets.is_secret_name,
        looks_secret=secrets.looks_secret,
        deadline=time.monotonic() + req.timeout,
        print_limit=max(req.limit * 2, 2000),
    )
    view = guards.view(namespace, compiled.names)
    watch = policy.watch(namespace, view, reading=req.mode == "eval")
    guards.user = watch.owns
    env = guards.globals(view)
    return _Prepared(req, compiled, guards, env, watch, view)


def _run(state: _Prepared) -> dict[str, Any]:
    req, compiled, guards, env, watch = state.req, state.compiled, state.guards, state.env, state.watch
    error: str | None = None
    caught: list[warnings.WarningMessage] = []
    try:
        # Library warnings become part of the output instead of reaching the user's terminal.
        with watch.running(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            exec(compiled.code, env)  # compiled by the policy's dialect: restricted and guarded
    except limits.Deadline:
        error = str(limits.timeout_error(req.timeout))
    except MemoryError:
        error = "the code ran out of memory in the sandbox"
    except SandboxViolation as exc:
        error = _locate(exc, req.source, str(exc))
    except RecursionError:
        error = _locate(None, req.source, "RecursionError: maximum recursion depth exceeded")
    except BaseException as exc:  # the snippet's own error, reported like the REPL would
        message = watch.explain(exc) or f"{type(exc).__name__}: {exc}"
        error = _locate(exc, req.source, message)
    changed = watch.changed()
    if changed:
        return _failure(watch.refusal(changed))
    output = "".join(guards.printed)
    for w in caught[:5]:
        output += f"{w.category.__name__}: {str(w.message)[:300]}\n"
    if guards.print_truncated:
        output += "\n… printed output cut"
    if error is not None:
        return _failure(error, _shown_output(output, req.privacy))
    value = env.get(RESULT_NAME) if compiled.has_result else None
    if req.render is not None:
        try:
            return {"ok": True, "text": req.render(value), "error": None, "truncated": False}
        except CapabilityError as exc:
            return _failure(str(exc))
    return {"ok": True, "text": _text(output, value, req), "error": None, "truncated": guards.print_truncated}


def _shown_output(output: str, privacy: str) -> str:
    if not output or privacy in ("sample", "full"):
        return output
    lines = output.count("\n") + (not output.endswith("\n"))
    return f"({lines} line(s) of printed output withheld at privacy level {privacy!r})\n"


def _text(output: str, value: Any, req: Request) -> str:
    parts = []
    shown = _shown_output(output, req.privacy)
    if shown:
        parts.append(shown.rstrip("\n"))
    if value is not None:
        if parts:  # what the snippet printed and its last value, told apart
            parts.append("--- value of the last line ---")
        if isinstance(value, str) and req.mode == "exec" and req.privacy in ("sample", "full"):
            parts.append(_as_text(value, req.limit))
        else:
            parts.append(_describe(value, req.privacy, req.limit))
    if not parts:
        return "(the code ran; it printed nothing and its last line is not an expression)"
    return "\n".join(parts)


def _as_text(value: str, limit: int) -> str:
    """A string result reads as the text it is (``df.to_string()``, a report), not as its repr; bounded here
    and masked by ``capabilities.call`` like every result."""
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… (text cut at {limit:,} of {len(value):,} characters)"


def _describe(value: Any, privacy: str, limit: int) -> str:
    return describe(value, privacy, limit)


def _locate(exc: BaseException | None, source: str, message: str) -> str:
    """Prefix ``message`` with the innermost sandboxed line and the exact source segment (Python ≥ 3.11
    records columns; 3.10 gets the whole line)."""
    if message.startswith("line "):
        return message
    tb = exc.__traceback__ if exc is not None else None
    found: tuple[types.CodeType, int, int] | None = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == SANDBOX_FILENAME:
            found = (code, tb.tb_lineno, tb.tb_lasti)
        tb = tb.tb_next
    if found is None:
        return message[:1] + message[1:] if message else "the code failed"
    code, line, lasti = found
    lines = source.splitlines()
    seg = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    positions = getattr(code, "co_positions", None)
    if positions is not None and lasti >= 0:
        try:
            pos = list(positions())[lasti // 2]
            if pos[0] == pos[1] == line and pos[2] is not None and pos[3] is not None:
                seg = lines[line - 1][pos[2] : pos[3]].strip() or seg
        except (IndexError, TypeError):
            pass
    seg = " ".join(seg.split())
    if len(seg) > 80:
        seg = seg[:77] + "..."
    return f"line {line}, `{seg}`: {message}" if seg else f"line {line}: {message}"
