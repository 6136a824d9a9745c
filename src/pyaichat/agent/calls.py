"""A tool call read from a model's reply, and its arguments: a leaf shared by the text protocol
(``textproto``) and the recognisers of calls written as text (``textcalls``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass
class ParsedCall:
    """A tool call found in text: ``args`` when the JSON parsed, else ``error`` says what was wrong."""

    name: str
    args: dict[str, Any] | None
    error: str | None = None


def call_arguments(data: dict[str, Any]) -> Any:
    """The arguments of a JSON tool call, under whichever key the model's format uses."""
    return next((data[k] for k in ("arguments", "parameters", "args", "input") if k in data), {})


def checked_args(name: str, args: Any) -> ParsedCall:
    """A call of ``name`` whose arguments are a JSON object (or a string holding one), else an error call."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return ParsedCall(name, None, f"the arguments of {name} are not valid JSON")
    if not isinstance(args, dict):
        return ParsedCall(name, None, f"the arguments of {name} must be a JSON object")
    return ParsedCall(name, args)
