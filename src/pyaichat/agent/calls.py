"""A tool call as the loop runs it, and the one reading of its arguments (a leaf: imports nothing of ours).

Whichever way a model called a tool (native function calling, a ``<tool>`` block, a format it was trained on),
its arguments are read here, so the model hears the same sentence about bad arguments every time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"^```[\w-]*\s*\n?(?P<body>.*?)\n?```$", re.S)
_JSON_TYPES = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}


@dataclass(frozen=True)
class ParsedCall:
    """A tool call: ``args`` when they could be read, else ``error`` says what was wrong (for the model)."""

    name: str
    args: dict[str, Any] | None
    error: str | None = None


def read_arguments(name: str, raw: Any) -> ParsedCall:
    """A call of ``name`` with ``raw`` arguments: JSON text (empty means none; a code fence is allowed) or a
    value already decoded. Anything but one JSON object is an error call."""
    if isinstance(raw, str):
        text = raw.strip()
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced["body"].strip()
        if not text:
            return ParsedCall(name, {})
        try:
            raw = json.loads(text)
        except ValueError as exc:
            return ParsedCall(
                name, None, f"the arguments of {name} are not valid JSON ({exc.msg}); send one JSON object"
            )
    if not isinstance(raw, dict):
        kind = "null" if raw is None else _JSON_TYPES.get(type(raw), type(raw).__name__)
        return ParsedCall(name, None, f"the arguments of {name} must be a JSON object, not {kind}")
    return ParsedCall(name, raw)


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


def arguments_json(call: ParsedCall) -> str:
    """The arguments as JSON text, as they go back into the conversation."""
    return json.dumps(call.args if call.args is not None else {}, ensure_ascii=False)


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
