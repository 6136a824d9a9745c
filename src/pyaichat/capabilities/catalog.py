"""What a capability is, and where each declares itself: named, schema-described, bounded, read-only
functions over a live session.

A capability is a name, a description written for an LLM, a pydantic argument model (its JSON schema is the
tool schema) and a function ``func(ctx, args) -> str``; ``@capability`` (or ``register``) declares one. The
one way in is ``invoke.call``, which loads the capability modules and the plugins on its first look-up; they
import only this module, so no import runs back to the one that loads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from . import audit
from .toolbox import Tool, clean_description, first_sentence

if TYPE_CHECKING:
    from ..configuration.config import Config
    from ..session import Session
    from .redact import Masker


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
    # the person's decision ("run", "edit", "no") when the call was a proposal (``propose_code``)
    decision: str | None = None


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
    # False: for outside agents only (the session picture: the assistant is sent it with every question)
    assistant: bool = True
    output_floor: int = 0  # characters a result may always hold, whatever ``max_output_chars`` says

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
        return Tool(
            self.name,
            clean_description(self.description),
            params,
            self.source,
            self.executable,
            self.assistant,
        )

    def tool_schema(self) -> dict[str, Any]:
        """OpenAI-style function schema, which litellm translates for other providers."""
        return self.tool().schema()


_REGISTRY: dict[str, Capability] = {}  # by name, as the capability modules declare them (``invoke`` loads)


def register(cap: Capability) -> Capability:
    _REGISTRY[cap.name] = cap
    return cap


def capability(name: str, args_model: type[BaseModel] = NoArgs, **kwargs: Any):
    """Decorator: register ``func(ctx, args) -> str`` as capability ``name``; the docstring is the
    description."""

    def wrap(func: Callable[[CapabilityContext, Any], str]) -> Callable[[CapabilityContext, Any], str]:
        register(Capability(name, func.__doc__ or name, args_model, func, **kwargs))
        return func

    return wrap


def record_call(
    session: Any, masker: Masker | None, name: str, args: Any, result: CapabilityResult, origin: str
) -> None:
    """Append one call to the audit log, its arguments masked (``session`` identifies whose call it was)."""

    try:
        shown = masker.mask_value(dict(args or {})) if masker else {}
    except Exception:
        shown = {"unprintable": True}
    audit.record_result(session, result, shown, origin=origin)


def cap_text(text: str, limit: int, hidden: int = 0) -> tuple[str, bool]:
    """Cut ``text`` to about ``limit`` characters with a marker saying how much was cut (``hidden`` characters
    were already dropped before ``text``)."""
    if len(text) <= limit and not hidden:
        return text, False
    cut = text.rfind("\n", 0, limit) if len(text) > limit else len(text)
    cut = cut if cut > limit // 2 else min(limit, len(text))
    rest = len(text) - cut + hidden
    return text[:cut] + f"\n… {rest:,} more characters cut", True
