"""The text tool protocol, for models without (working) native function calling.

The model writes ``<tool name="get_repr">{"expr": "df"}</tool>`` or ``<python>…code…</python>`` (shorthand for
``run_python``) and gets ``<observation>`` blocks back. This module teaches the protocol (a system-prompt
section built from the tool schemas) and reads the blocks out of a reply.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from typing import Any

from .calls import ToolCall

# A block may lack its closing tag when the model stops right after it (it then runs to the end of the reply).
_TOOL_BLOCK = re.compile(
    r"<tool\s+name\s*=\s*[\"']?(?P<name>[\w.\-]+)[\"']?\s*>(?P<body>.*?)(?:</tool\s*>|\Z)"
    r"|<python>(?P<code>.*?)(?:</python\s*>|\Z)",
    re.S,
)
OPEN_TAGS = ("<tool", "<python")


def describe_protocol(schemas: Iterable[dict[str, Any]]) -> str:
    """The system-prompt section teaching the text protocol; the tool list comes from the registry."""
    lines = [
        "## Tools (text protocol)",
        'To call a tool, write <tool name="TOOL_NAME">{"argument": "value"}</tool> and stop; its result '
        "comes back in an <observation> block. <python>code</python> runs run_python. Answer without "
        "blocks.",
    ]
    for schema in schemas:
        fn = schema.get("function", schema)
        params = fn.get("parameters", {}).get("properties", {})
        required = set(fn.get("parameters", {}).get("required", []))
        args = ", ".join(
            f"{p}{'' if p in required else '?'}: {_type_name(spec)}" for p, spec in params.items()
        )
        lines.append(f"- {fn['name']}({args}): {fn.get('description', '').strip()}")
    return "\n".join(lines)


def _type_name(spec: dict[str, Any]) -> str:
    """``string``, ``string | null`` …: a JSON-schema property's type in a few characters."""
    if "type" in spec:
        return str(spec["type"])
    options = [o.get("type", "any") for o in spec.get("anyOf", []) if isinstance(o, dict)]
    return " | ".join(options) if options else "any"


def parse_blocks(text: str) -> tuple[list[ToolCall], str]:
    """Tool blocks in ``text`` and the prose around them."""
    calls: list[ToolCall] = []
    for m in _TOOL_BLOCK.finditer(text):
        if m["code"] is not None:
            code = textwrap.dedent(m["code"].strip("\n")).strip()
            calls.append(ToolCall("", "run_python", {"code": code}))
        else:
            calls.append(ToolCall("", m["name"], m["body"]))
    prose = _TOOL_BLOCK.sub("", text).strip()
    return calls, prose


def observation(name: str, text: str) -> str:
    """One tool result as the text protocol gives it back."""
    return f'<observation tool="{name}">\n{text}\n</observation>'
