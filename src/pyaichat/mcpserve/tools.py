"""The tool table an outside agent sees: the session's read-only capabilities as they are (the orienting call,
``get_session_picture``, first), and ``propose_code`` where a person is there to decide.

Plain JSON data (MCP's ``Tool`` fields), built from the runtime's own description of its tools
(``Runtime.tools()``: in a kernel, the kernel's registry and plugins), so the faces need nothing of pyaichat's
internals. Descriptions are each capability's first sentence: an agent pays for
every tool in its context, and the argument schemas say the rest.

The annotations are claims to the client, and here they are true by construction: every capability is
read-only (the registry's contract, tested with fingerprints), and ``propose_code`` changes nothing until the
person approves it at the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..capabilities.toolbox import model_parameters

if TYPE_CHECKING:
    from ..runtime import Runtime

PICTURE = "get_session_picture"
PROPOSE = "propose_code"

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
# query_sql reaches the person's database (read-only there too, and refused before it is sent otherwise)
_OPEN_WORLD = frozenset({"query_sql"})

PROPOSE_TOOL: dict[str, Any] = {
    "name": PROPOSE,
    "description": (
        "Propose Python code to run in the person's session (anything that changes it). They see it with a "
        "preview of its effects and choose run, edit or no; this call waits and returns what happened."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "Python code, exactly as the person would type it"},
            "explanation": {
                "type": "string",
                "description": "one or two sentences: what the code does and why",
                "default": "",
            },
            "wait_seconds": {
                "type": "number",
                "description": "how long to wait for the person's answer (capped by their setting)",
            },
        },
        "required": ["code"],
        "additionalProperties": False,
    },
    "annotations": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    },
}


def input_schema(params: dict[str, Any]) -> dict[str, Any]:
    """A capability's argument schema as MCP wants it: the same lean schema our own model gets
    (``toolbox.model_parameters``: no titles, no ``additionalProperties``, an optional ``X | None`` as plain
    ``X``), as an object schema."""
    schema = model_parameters(params)
    schema["type"] = "object"
    return schema


def capability_tools(runtime: Runtime) -> list[dict[str, Any]]:
    """Every executable tool of ``runtime`` (built-in and plugins), read-only, the session picture first:
    described where the tools run (a kernel's own registry, with its own plugins)."""
    tools = []
    for tool in sorted(runtime.tools().tools, key=lambda tool: tool.name != PICTURE):
        if not tool.executable:
            continue
        annotations = dict(_READ_ONLY, openWorldHint=tool.name in _OPEN_WORLD)
        tools.append(
            {
                "name": tool.name,
                "description": tool.summary,
                "inputSchema": input_schema(tool.parameters),
                "annotations": annotations,
            }
        )
    return tools


def tool_table(runtime: Runtime, *, proposals: bool) -> list[dict[str, Any]]:
    """The whole list: the runtime's tools (the orienting call first), and ``propose_code`` when a person at
    the session can approve it (``proposals``)."""
    return [*capability_tools(runtime), *([PROPOSE_TOOL] if proposals else [])]
