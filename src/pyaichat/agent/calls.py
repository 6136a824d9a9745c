"""A tool call, from the model's reply to the turn's record, and the one reading of its arguments (a leaf:
imports nothing of ours).

Whichever way a model called a tool (native function calling, a ``<tool>`` block, a format it was trained on),
its arguments are read here, so the model hears the same sentence about bad arguments every time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

_FENCE = re.compile(r"^```[\w-]*\s*\n?(?P<body>.*?)\n?```$", re.S)
_JSON_TYPES = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call, the same object from the model's reply to the turn's record (``/trace``): ``arguments``
    as the model wrote them (JSON text, which may be broken, or a value already decoded), read once into
    ``args``. When they cannot be read, or the call itself is wrong (``error`` given), ``args`` is ``None``
    and ``error`` says why, for the model. ``id`` is "" until the protocol numbers a call found in text."""

    id: str
    name: str
    arguments: Any = ""
    error: str | None = None
    args: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.error is None:
            args, error = _read(self.name, self.arguments)
            object.__setattr__(self, "args", args)  # frozen: set once, here
            object.__setattr__(self, "error", error)

    def numbered(self, call_id: str) -> ToolCall:
        """The same call under ``call_id``."""
        return replace(self, id=call_id)

    def arguments_json(self) -> str:
        """The arguments as JSON text, as they go back into the conversation."""
        return json.dumps(self.args if self.args is not None else {}, ensure_ascii=False)


def _read(name: str, raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``raw`` arguments of ``name``: JSON text (empty means none; a code fence is allowed) or a value already
    decoded. Anything but one JSON object is an error."""
    if isinstance(raw, str):
        text = raw.strip()
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced["body"].strip()
        if not text:
            return {}, None
        try:
            raw = json.loads(text)
        except ValueError as exc:  # a decoding error, or a number past int's digit limit
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            return None, f"the arguments of {name} are not valid JSON ({why}); send one JSON object"
    if not isinstance(raw, dict):
        kind = "null" if raw is None else _JSON_TYPES.get(type(raw), type(raw).__name__)
        return None, f"the arguments of {name} must be a JSON object, not {kind}"
    return raw, None


def call_arguments(data: Mapping[str, Any]) -> Any:
    """The arguments of a JSON tool call, under whichever key the model's format uses."""
    return next((data[k] for k in ("arguments", "parameters", "args", "input") if k in data), {})


def tool_params(schemas: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Tool name -> its parameter names in order (for positional arguments of pythonic calls)."""
    out: dict[str, list[str]] = {}
    for schema in schemas:
        fn = schema.get("function", schema)
        name = fn.get("name")
        if isinstance(name, str):
            out[name] = list((fn.get("parameters") or {}).get("properties", {}) or {})
    return out


def arg_summary(args: Mapping[str, Any], limit: int = 60) -> str:
    """The arguments in a few words, for progress lines, ``/trace`` and findings."""
    if not args:
        return ""
    if len(args) == 1:
        value = next(iter(args.values()))
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    else:
        text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
