"""The text tool protocol for models without native function calling; recovery of tool calls printed as text.

Text protocol (design.md): the model writes ``<tool name="get_repr">{"expr": "df"}</tool>`` or
``<python>…code…</python>`` (shorthand for ``run_python``) and gets ``<observation>`` blocks back. Separately,
local models often *print* a native tool call as JSON instead of making it; a reply that is nothing but such a
call is recognised and run. ``StreamGate`` decides which streamed text can be shown at once and which must be
held back because it may turn out to be a tool call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .calls import ParsedCall

# A block may lack its closing tag when the model stops right after it (it then runs to the end of the reply).
_TOOL_BLOCK = re.compile(
    r"<tool\s+name\s*=\s*[\"']?(?P<name>[\w.\-]+)[\"']?\s*>(?P<body>.*?)(?:</tool\s*>|\Z)"
    r"|<python>(?P<code>.*?)(?:</python\s*>|\Z)",
    re.S,
)
_OPEN_TAGS = ("<tool", "<python")
_FENCE = re.compile(r"^```[\w-]*\s*\n?(?P<body>.*?)\n?```$", re.S)


def describe_protocol(schemas: Iterable[dict[str, Any]]) -> str:
    """The system-prompt section teaching the text protocol; the tool list comes from the registry."""
    lines = [
        "## Tools (text protocol)",
        "To use a tool, write a block exactly like this and stop; "
        "the result comes back in an <observation> block:",
        '<tool name="TOOL_NAME">{"argument": "value"}</tool>',
        "The body is one JSON object with the arguments. For run_python you may write <python>code</python>.",
        "You may write several blocks in one reply. "
        "When you have the answer, reply in plain Markdown without blocks.",
        "",
        "Available tools:",
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


def parse_blocks(text: str) -> tuple[list[ParsedCall], str]:
    """Tool blocks in ``text`` and the prose around them."""
    calls: list[ParsedCall] = []
    for m in _TOOL_BLOCK.finditer(text):
        if m["code"] is not None:
            calls.append(ParsedCall("run_python", {"code": _dedent_code(m["code"])}))
        else:
            calls.append(_parse_args(m["name"], m["body"].strip()))
    prose = _TOOL_BLOCK.sub("", text).strip()
    return calls, prose


def _parse_args(name: str, body: str) -> ParsedCall:
    if not body:
        return ParsedCall(name, {})
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced["body"].strip()
    try:
        args = json.loads(body)
    except ValueError as exc:
        return ParsedCall(
            name, None, f"the arguments of {name} are not valid JSON ({exc.msg}); send one JSON object"
        )
    if not isinstance(args, dict):
        return ParsedCall(
            name, None, f"the arguments of {name} must be a JSON object, not {type(args).__name__}"
        )
    return ParsedCall(name, args)


def _dedent_code(code: str) -> str:
    import textwrap

    return textwrap.dedent(code.strip("\n")).strip()


class StreamGate:
    """Lets streamed text through as soon as it cannot be (part of) a tool call.

    A reply whose first characters could open a JSON tool call (``{`` or a code fence) is held until it is
    clearly prose or the reply ends. Each new line is looked at as it starts: a line that opens a call in one
    of the formats local models write (``<tool_call>``, ``[TOOL_CALLS]``, ```` ```tool_code ````, a known
    tool's name followed by ``(``, a JSON object) is held until it is complete, and once it is known to be
    a call nothing more of this reply is shown. With ``tags=True`` (text protocol) text from a possible
    ``<tool``/``<python`` opening on is held too, wherever it starts.
    """

    def __init__(self, tags: bool, tool_params: dict[str, list[str]] | None = None) -> None:
        self.tags = tags
        self.params = tool_params or {}
        self.buffer = ""
        self.shown = 0  # characters of ``buffer`` already released
        self.decided_prose = False
        self.closed = False  # a tool call has started: nothing more of this reply is shown

    def feed(self, piece: str) -> str:
        self.buffer += piece
        if self.closed:
            return ""
        if not self.decided_prose:
            head = self.buffer.lstrip()
            if not head or _maybe_json_call(head):
                return ""
            self.decided_prose = True
        limit = self._line_limit()
        if self.tags and not self.closed:
            tag_at = _first_tag(self.buffer, self.shown)
            if tag_at is not None and tag_at < limit:
                self.closed = True
                limit = tag_at
            elif tag_at is None:
                limit = min(limit, _safe_end(self.buffer, self.shown))
        out = self.buffer[self.shown : limit]
        self.shown = max(self.shown, limit)
        return out

    def _line_limit(self) -> int:
        """How far the text can be released: up to the first line that is (or may become) a tool call."""
        buf, pos = self.buffer, self.shown
        while pos < len(buf):
            line_start = buf.rfind("\n", 0, pos) + 1
            newline = buf.find("\n", pos)
            if line_start < pos:  # inside a line already judged prose
                if newline < 0:
                    return len(buf)
                pos = newline + 1
                continue
            line = buf[pos : newline if newline >= 0 else len(buf)]
            verdict = self._judge(line, complete=newline >= 0)
            if verdict == "call":
                self.closed = True
                return pos
            if verdict == "hold":
                return pos
            pos = newline + 1 if newline >= 0 else len(buf)
        return pos

    def _judge(self, line: str, *, complete: bool) -> str:
        """ "call", "hold" (cannot tell yet) or "prose" for a line of the reply."""
        s = line.lstrip()
        if any(s.startswith(m) for m in _CALL_MARKERS):
            return "call"
        if not complete and any(m.startswith(s) for m in _CALL_MARKERS):
            return "hold"
        for name in self.params:
            for opening in (name + "(", "[" + name + "(", "`" + name + "("):
                if s.startswith(opening):
                    if not complete:
                        return "hold"
                    from .textcalls import pythonic_calls

                    return "call" if pythonic_calls(s, self.params) else "prose"
                if not complete and opening.startswith(s):
                    return "hold"
        if s.startswith("{") and self.params:
            if not complete:
                return "hold"
            from .textcalls import recover_calls

            return "call" if recover_calls(s, self.params).calls else "prose"
        return "prose"

    def rest(self) -> str:
        """Text not yet released (call when the reply has ended and is known to be an answer)."""
        out = self.buffer[self.shown :]
        self.shown = len(self.buffer)
        return out


_CALL_MARKERS = ("<tool_call>", "[TOOL_CALLS]", "```tool_code", "<|python_tag|>")


def _maybe_json_call(head: str) -> bool:
    if head.startswith("{"):
        return True
    if head.startswith("`"):
        if len(head) < 3 or ("\n" not in head and len(head) < 12):
            return True  # too early to know the fence's language
        first_line = head.split("\n", 1)[0].strip("`").strip().lower()
        if first_line not in ("", "json", "tool", "tool_call"):
            return False
        after = head.split("\n", 1)[1].lstrip() if "\n" in head else ""
        return not after or after.startswith("{")
    return False


def _first_tag(text: str, start: int) -> int | None:
    hits = [i for i in (text.find(tag, start) for tag in _OPEN_TAGS) if i >= 0]
    return min(hits) if hits else None


def _safe_end(text: str, start: int) -> int:
    """Release up to a trailing ``<…`` that could still grow into ``<tool`` or ``<python``."""
    cut = text.rfind("<", start)
    if cut < 0:
        return len(text)
    tail = text[cut:]
    if any(tag.startswith(tail) for tag in _OPEN_TAGS):
        return cut
    return len(text)
