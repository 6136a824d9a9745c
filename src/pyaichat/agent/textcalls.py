"""Tool calls that local models write as text, in their own trained formats, recognised and turned into calls.

A model served without working function calling (a chat template that ignores tools, a server that does not
parse them) still tries to call tools, in whatever format it was trained on:

- Hermes / Qwen: ``<tool_call>{"name": "get_repr", "arguments": {"expr": "df"}}</tool_call>``
- Llama 3: ``{"name": "get_repr", "parameters": {"expr": "df"}}`` (maybe after ``<|python_tag|>``)
- Mistral: ``[TOOL_CALLS][{"name": "get_repr", "arguments": {…}}]`` or ``[TOOL_CALLS]get_repr[ARGS]{…}``
- Gemma: a ```` ```tool_code ```` block holding ``get_repr(expr="df")``
- pythonic: ``get_repr(expr="df")`` (or ``[get_repr(expr="df"), …]``) on a line of its own

Only the names of known tools become calls. A pythonic call is read with ``ast`` and its arguments with
``ast.literal_eval``: nothing the model wrote is ever executed, and anything but a plain call of a known tool
with literal arguments stays prose. Explicitly tagged calls (``<tool_call>``, ``[TOOL_CALLS]``) of unknown
tools come back as errors the model is told about; untagged text that merely looks similar stays prose.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .calls import ToolCall, call_arguments


@dataclass
class Found:
    """Calls found in a reply, and the reply's prose with the calls taken out."""

    calls: list[ToolCall]
    prose: str


_HERMES = re.compile(r"<tool_call>\s*(?P<body>.*?)\s*(?:</tool_call>|\Z)", re.S)
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*(?P<body>.*?)\s*(?:</s>|\Z)", re.S)
_MISTRAL_ARGS = re.compile(r"^(?P<name>[A-Za-z_][\w.\-]*)\s*\[ARGS\]\s*(?P<args>.*)$", re.S)
_TOOL_CODE = re.compile(r"```tool_code\s*\n(?P<body>.*?)(?:\n?```|\Z)", re.S)
_PYTHON_TAG = "<|python_tag|>"
_ANY_FENCE = re.compile(r"^```.*?(?:^```|\Z)", re.S | re.M)


def recover_calls(text: str, params: Mapping[str, list[str]]) -> Found:
    """Tool calls written in any of the formats above, and the text around them (the reply's prose)."""
    calls: list[ToolCall] = []
    prose = text

    for pattern, reader in ((_HERMES, _json_calls), (_MISTRAL, _mistral_calls), (_TOOL_CODE, _code_calls)):
        spans = list(pattern.finditer(prose))
        if not spans:
            continue
        for m in spans:
            calls.extend(reader(m["body"], params, tagged=True))
        prose = pattern.sub("", prose)
    if calls:
        return Found(calls, _tidy(prose))

    stripped = text.replace(_PYTHON_TAG, "").strip()
    whole = _json_calls(_unfence(stripped), params, tagged=False)  # a reply that is only a JSON call
    if whole:
        return Found(whole, "")
    return _line_calls(text, params)


# -- JSON bodies ---------------------------------------------------------------------------------------------
def _json_calls(body: str, params: Mapping[str, list[str]], *, tagged: bool) -> list[ToolCall]:
    body = body.strip()
    if not body:
        return []
    try:
        data = json.loads(body)
    except ValueError as exc:  # a decoding error, or a number past int's digit limit
        if not tagged:
            return []
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return [ToolCall("", "?", error=f"the tool call is not valid JSON ({why}); write one JSON object")]
    items = data if isinstance(data, list) else [data]
    out = []
    for item in items:
        call = _json_call(item, params, tagged=tagged)
        if call is None:
            return []  # one item that is not a call: the whole thing is data, not calls
        out.append(call)
    return out


def _json_call(data: Any, params: Mapping[str, list[str]], *, tagged: bool) -> ToolCall | None:
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("function"), dict):
        data = data["function"]
    name = data.get("name") or data.get("tool") or data.get("tool_name")
    if not isinstance(name, str):
        return None
    if name not in params:
        return _unknown(name, params) if tagged else None
    return ToolCall("", name, call_arguments(data))


def _mistral_calls(body: str, params: Mapping[str, list[str]], *, tagged: bool) -> list[ToolCall]:
    m = _MISTRAL_ARGS.match(body.strip())
    if m:  # the newer form: NAME[ARGS]{json}
        name = m["name"]
        if name not in params:
            return [_unknown(name, params)]
        return [ToolCall("", name, m["args"].strip())]
    return _json_calls(body, params, tagged=tagged)


def _unknown(name: str, params: Mapping[str, list[str]]) -> ToolCall:
    known = ", ".join(sorted(params))
    return ToolCall("", name, error=f"there is no tool named {name!r}; the tools are: {known}")


# -- pythonic calls ------------------------------------------------------------------------------------------
def _code_calls(body: str, params: Mapping[str, list[str]], *, tagged: bool) -> list[ToolCall]:
    out: list[ToolCall] = []
    for line in body.strip().splitlines():
        if not line.strip():
            continue
        calls = pythonic_calls(line, params)
        if calls is None:
            name = line.strip().split("(", 1)[0].strip()
            if tagged and name.isidentifier() and name not in params:
                out.append(_unknown(name, params))
            elif tagged:
                out.append(
                    ToolCall(
                        "",
                        name if name in params else "?",
                        error="a tool_code line must be one call of a tool with literal arguments, "
                        'such as get_repr(expr="df")',
                    )
                )
            continue
        out.extend(calls)
    return out


def pythonic_calls(line: str, params: Mapping[str, list[str]]) -> list[ToolCall] | None:
    """``get_repr(expr="df")`` or ``[a(…), b(…)]`` as calls of known tools, else ``None``. Never executes."""
    source = line.strip().strip("`").strip()
    if not source or "(" not in source or len(source) > 4000:
        return None
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError):
        return None
    nodes = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
    out: list[ToolCall] = []
    for node in nodes:
        call = _pythonic_call(node, params)
        if call is None:
            return None
        out.append(call)
    return out or None


def _pythonic_call(node: ast.AST, params: Mapping[str, list[str]]) -> ToolCall | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in params):
        return None
    name = node.func.id
    names = params[name]
    args: dict[str, Any] = {}
    try:
        if len(node.args) > len(names):
            return ToolCall("", name, error=f"{name} takes at most {len(names)} argument(s)")
        for param, value in zip(names, node.args, strict=False):
            args[param] = ast.literal_eval(value)
        for kw in node.keywords:
            if kw.arg is None:
                return None  # **kwargs: not a plain call
            args[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # an argument that is not a literal: code, not a tool call
    return ToolCall("", name, args)


def _line_calls(text: str, params: Mapping[str, list[str]]) -> Found:
    """Pythonic calls and Llama-style JSON calls on lines of their own, outside code fences."""
    fenced = [(m.start(), m.end()) for m in _ANY_FENCE.finditer(text)]
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if any(a <= start < b for a, b in fenced):
            kept.append(line)
            continue
        body = line.replace(_PYTHON_TAG, "").strip()
        found = None
        if body.startswith("{") and body.endswith("}"):
            found = _json_calls(body, params, tagged=False) or None
        elif body.endswith(")") or body.endswith(")]") or body.endswith(")`"):
            found = pythonic_calls(body, params)
        if found:
            calls.extend(found)
        else:
            kept.append(line)
    return Found(calls, _tidy("".join(kept)) if calls else text)


# -- helpers -------------------------------------------------------------------------------------------------
def _unfence(body: str) -> str:
    m = re.match(r"^```[\w-]*\s*\n?(?P<body>.*?)\n?```$", body, re.S)
    return m["body"].strip() if m else body


def _tidy(prose: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", prose.replace(_PYTHON_TAG, "")).strip()
