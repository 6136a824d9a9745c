"""The capability registry: named, schema-described, bounded, read-only functions over a live session.

A capability is a name, a description written for an LLM, a pydantic argument model (its JSON schema is the
tool schema) and a function ``func(ctx, args) -> str``. ``call`` is the only way in: it validates arguments,
enforces the time and size limits, masks secrets, records the call, and always returns a ``CapabilityResult``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import CapabilityError, CapabilityTimeout
from ..registry import Registry
from ..workers import Abandoned, within
from . import audit
from .redact import Masker, masker_for
from .secret_values import refresh as refresh_secret_values
from .toolbox import Tool, first_sentence

if TYPE_CHECKING:
    from ..config import Config
    from ..session import Session


class CapabilityResult(BaseModel):
    """The structured outcome of one capability call (part of the public Python API)."""

    model_config = ConfigDict(frozen=True)

    name: str
    ok: bool
    text: str = ""
    truncated: bool = False
    error: str | None = None
    duration_ms: float = 0.0
    images: tuple[str, ...] = ()  # PNG data URLs (get_figure), only when the call asked for images


class NoArgs(BaseModel):
    """The arguments of a capability that takes none (any argument given is an error)."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class CapabilityContext:
    """What a capability function may use: the session (read-only by contract) and the effective settings."""

    session: Session
    config: Config
    images: bool = False  # the caller can send images to the model: a capability may attach PNGs
    attached: list[str] = field(default_factory=list)  # data URLs a capability attached

    @property
    def namespace(self) -> Mapping[str, Any]:
        return self.session.namespace

    @property
    def privacy(self) -> str:
        return self.config.privacy


@dataclass
class Capability:
    name: str
    description: str
    args_model: type[BaseModel]
    func: Callable[[CapabilityContext, Any], str]
    # False for the approval gate (propose_code): handled by the agent, never run by ``call``.
    executable: bool = True
    source: str = "builtin"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """The first sentence of the description, on one line (for ``/tools``)."""
        return first_sentence(self.description)

    def tool(self) -> Tool:
        """The capability as a plain record (``toolbox.Tool``): what a runtime tells about its tools."""
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        params.setdefault("properties", {})
        return Tool(self.name, self.description.strip(), params, self.source, self.executable)

    def tool_schema(self) -> dict[str, Any]:
        """OpenAI-style function schema, which litellm translates for other providers."""
        return self.tool().schema()


# The built-in capabilities register themselves when ``builtin`` imports their modules; then the plugins load.
CAPABILITIES: Registry[Capability] = Registry(
    ("pyaichat.capabilities.builtin", "pyaichat.capabilities.plugins:load_all")
)
_REGISTRY = CAPABILITIES.entries  # the entries themselves: ``plugins`` restores them when a plugin fails


def register(cap: Capability) -> Capability:
    return CAPABILITIES.add(cap.name, cap)


def capability(name: str, args_model: type[BaseModel] = NoArgs, **kwargs: Any):
    """Decorator: register ``func(ctx, args) -> str`` as capability ``name``; the docstring is the
    description."""

    def wrap(func: Callable[[CapabilityContext, Any], str]) -> Callable[[CapabilityContext, Any], str]:
        register(Capability(name, func.__doc__ or name, args_model, func, **kwargs))
        return func

    return wrap


def get(name: str) -> Capability | None:
    return CAPABILITIES.get(name)


def all_capabilities() -> list[Capability]:
    return CAPABILITIES.all()


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
    attach PNGs (``get_figure``) for a model that takes images.
    """
    started = time.perf_counter()
    masker: Masker | None = None
    ctx: CapabilityContext | None = None

    def done(ok: bool, text: str = "", error: str | None = None, truncated: bool = False) -> CapabilityResult:
        limit = ctx.config.max_output_chars if ctx else 4000
        unseen = max(len(text) - limit * 4, 0)  # never mask megabytes only to cut them away
        if masker is not None:
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
            images=tuple(ctx.attached) if ctx is not None and ok else (),
        )
        if ctx is not None and ctx.config.audit:
            record_call(session, masker, name, args, result, origin)
        return result

    try:
        ctx = CapabilityContext(session=session, config=config or session.config, images=images)
        refresh_secret_values(session, ctx.config)  # what the masker masks by value, for this session now
        masker = masker_for(ctx.config)
        cap = get(name)
        if cap is None or not cap.executable:
            known = ", ".join(c.name for c in all_capabilities() if c.executable)
            return done(False, error=f"There is no capability named {name!r}. Known: {known}.")
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


def record_call(
    session: Any, masker: Masker | None, name: str, args: Any, result: CapabilityResult, origin: str
) -> None:
    """Append one call to the audit log, its arguments masked (``session`` identifies whose call it was)."""

    try:
        shown = masker.mask_value(dict(args or {})) if masker else {}
    except Exception:
        shown = {"unprintable": True}
    audit.record(
        session,
        name,
        shown,
        ok=result.ok,
        error=result.error,
        duration_ms=result.duration_ms,
        output_chars=len(result.text),
        truncated=result.truncated,
        origin=origin,
    )


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
    try:
        return within(func, timeout)
    except Abandoned:
        raise CapabilityTimeout(f"Stopped after {timeout:g} s: the object took too long to answer.") from None


def cap_text(text: str, limit: int, hidden: int = 0) -> tuple[str, bool]:
    """Cut ``text`` to about ``limit`` characters with a marker saying how much was cut (``hidden`` characters
    were already dropped before ``text``)."""
    if len(text) <= limit and not hidden:
        return text, False
    cut = text.rfind("\n", 0, limit) if len(text) > limit else len(text)
    cut = cut if cut > limit // 2 else min(limit, len(text))
    rest = len(text) - cut + hidden
    return text[:cut] + f"\n… {rest:,} more characters cut", True
