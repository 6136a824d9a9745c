"""The one door to the capabilities: ``call`` runs one by name over a local session — it validates the
arguments, enforces the time and size limits, masks secrets, records the call, and always returns a
``CapabilityResult``. The registry of capabilities loads here, on its first look-up: the built-in modules
(which declare themselves in ``registry``), then the plugins.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..errors import CapabilityError, CapabilityTimeout
from ..registry import Registry
from ..workers import Abandoned, within
from .catalog import _REGISTRY, Capability, CapabilityContext, CapabilityResult, cap_text, record_call
from .redact import masker_for
from .secret_values import refresh as refresh_secret_values

if TYPE_CHECKING:
    from ..configuration.config import Config
    from ..session import Session

# The built-in capabilities declare themselves when ``builtin`` imports their modules; then the plugins load.
CAPABILITIES: Registry[Capability] = Registry(
    ("pyaichat.capabilities.builtin", "pyaichat.capabilities.plugins:load_all"), _REGISTRY
)


def get(name: str) -> Capability | None:
    return CAPABILITIES.get(name)


# The order tools are listed in, the same in every process whatever imported what first: the built-in ones
# least power first, then plugins by name. The tool list is part of every request's stable prefix, which a
# provider's prompt cache reuses only when it is byte for byte the same.
ORDER = (
    "list_globals",
    "get_type",
    "get_repr",
    "get_dir",
    "get_doc",
    "get_last_exception",
    "eval_expr",
    "run_python",
    "query_sql",
    "get_figure",
    "propose_code",
)


def all_capabilities() -> list[Capability]:
    """Every capability, in ``ORDER``."""
    return sorted(CAPABILITIES.all(), key=_place)


def _place(cap: Capability) -> tuple[int, str]:
    return (ORDER.index(cap.name), "") if cap.name in ORDER else (len(ORDER), cap.name)


def tool_schemas() -> list[dict[str, Any]]:
    return [cap.tool_schema() for cap in all_capabilities()]


def call(
    session: Session,
    name: str,
    args: Mapping[str, Any] | None = None,
    *,
    config: Config | None = None,
    origin: str = "assistant",
    images: bool = False,
) -> CapabilityResult:
    """Run capability ``name`` with ``args`` over a local ``session``; never raises (a denial or failure is
    ``ok=False``).

    ``config`` overrides ``session.config`` (front ends pass their own); ``origin`` is recorded in the audit
    log (``assistant`` for tool calls, ``user`` for ``/inspect`` and friends); ``images`` lets a capability
    attach PNGs (``get_figure``) for a model that takes images. A trace or profile function the session set
    on this thread is put aside for the call (it would see every frame, the unmasked text in its locals) and
    put back after it.
    """
    trace, profile = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    try:
        return _call(session, name, args, config=config, origin=origin, images=images)
    finally:
        sys.settrace(trace)
        sys.setprofile(profile)


_MODULES_REPLACED = (
    "sys.modules was replaced by an object of the session's, whose code would run on every look-up of a "
    "module, so the assistant reads nothing in this process until it is a plain dict again."
)


def _call(
    session: Session,
    name: str,
    args: Mapping[str, Any] | None,
    *,
    config: Config | None,
    origin: str,
    images: bool,
) -> CapabilityResult:
    started = time.perf_counter()
    ctx: CapabilityContext | None = None
    floor = 0

    def done(ok: bool, text: str = "", error: str | None = None, truncated: bool = False) -> CapabilityResult:
        if ctx is None:  # no settings to go by: nothing masked, nothing recorded
            text, cut = cap_text(text, 4000)
            ms = round((time.perf_counter() - started) * 1000, 3)
            return CapabilityResult(name=name, ok=ok, text=text, error=error, truncated=cut, duration_ms=ms)
        images = tuple(ctx.attached) if ok else ()
        return finish(
            session, ctx.config, name, args, origin, started, ok, text, error, truncated, images, floor
        )

    if type(sys.modules) is not dict:  # every look-up of a module would run the session's own .get
        return done(False, error=_MODULES_REPLACED)
    try:
        ctx = CapabilityContext(session=session, config=config or session.config, images=images)
        refresh_secret_values(
            session, ctx.config
        )  # what ``finish``'s masker masks by value, for this session now
        cap = get(name)
        if cap is None or not cap.executable:
            known = ", ".join(c.name for c in all_capabilities() if c.executable)
            return done(False, error=f"There is no capability named {name!r}. Known: {known}.")
        floor = cap.output_floor
        if args is not None and not isinstance(args, Mapping):
            return done(False, error=f"Arguments for {name} must be a JSON object.")
        try:
            parsed = cap.args_model.model_validate(dict(args or {}))
        except ValidationError as exc:
            return done(False, error=_explain_validation(name, exc))
        text = run_with_deadline(lambda: cap.func(ctx, parsed), ctx.config.tool_timeout)
        return done(True, text=text if isinstance(text, str) else str(text))
    except CapabilityError as exc:
        return done(False, error=str(exc))
    except Exception as exc:  # nothing raised inside a capability escapes call()
        return done(False, error=f"{name} failed: {type(exc).__name__}: {exc}")
    except BaseException as exc:  # e.g. SystemExit raised by a plugin or a user's __repr__
        if isinstance(exc, KeyboardInterrupt):
            raise
        return done(False, error=f"{name} failed: {type(exc).__name__}")


def finish(
    session: Any,
    config: Config,
    name: str,
    args: Any,
    origin: str,
    started: float,
    ok: bool,
    text: str = "",
    error: str | None = None,
    truncated: bool = False,
    images: tuple[str, ...] = (),
    floor: int = 0,
) -> CapabilityResult:
    """The one way out of a call: its text and error masked, the text cut to the output bound (at least
    ``floor``), timed from ``started``, and recorded in the audit log for ``session`` (whose call it was).
    ``call`` ends here, and so does a gate its caller runs itself (an outside agent's ``propose_code``)."""
    masker = masker_for(config)
    limit = max(config.max_output_chars, floor)
    unseen = max(len(text) - limit * 4, 0)  # never mask megabytes only to cut them away
    text = masker.mask_text(text[: limit * 4])
    error = masker.mask_text(error) if error else error
    text, cut = cap_text(text, limit, hidden=unseen)
    result = CapabilityResult(
        name=name,
        ok=ok,
        text=text,
        error=error,
        truncated=truncated or cut,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        images=images,
    )
    if config.audit:
        record_call(session, masker, name, args, result, origin)
    return result


def _explain_validation(name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return f"Invalid arguments for {name}: " + "; ".join(parts) + "."


def run_with_deadline(func: Callable[[], str], timeout: float) -> str:
    """Run ``func`` in a worker thread and give up after ``timeout`` seconds (the thread is abandoned).

    A thread cannot be killed, so this is the last resort: the places where a capability runs an object's own
    code (``__dir__``, ``__repr__``, ``__len__``, ``_repr_llm_`` in the session picture; ``expression`` sends
    any other to the walled child) ask it through ``deadline.ask``, which abandons the ask at a budget well
    inside this deadline and does not ask that object again in the session; library code runs under
    ``deadline.guarded``, and what is stuck in C is left to finish on its own in the abandoned daemon thread.
    (Neither a trace function over the whole call, which made every capability 2-3x slower, nor an
    asynchronous exception, which while pending on a thread blocked in C breaks line tracing in every other
    thread, was acceptable.)
    """

    def untraced() -> str:
        # a trace or profile function the session set for new threads (``threading.settrace``) would be
        # called on every frame of the read — its locals too (a password on its way to the database)
        sys.settrace(None)
        sys.setprofile(None)
        return func()

    try:
        return within(untraced, timeout)
    except Abandoned:
        raise CapabilityTimeout(f"Stopped after {timeout:g} s: the object took too long to answer.") from None
