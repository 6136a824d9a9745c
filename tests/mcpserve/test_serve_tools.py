"""The tool list an agent pays for: every read-only capability as it is (plugins too), short, truthfully
annotated; the orienting call first; ``propose_code`` only where someone can approve it."""

from __future__ import annotations

import json

from pyaichat.capabilities import all_capabilities
from pyaichat.mcpserve.tools import PICTURE, PROPOSE, tool_table
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

RUNTIME = LocalRuntime(Session())


def test_every_executable_capability_is_a_read_only_tool_with_its_schema() -> None:
    tools = {tool["name"]: tool for tool in tool_table(RUNTIME, proposals=False)}
    executable = [cap for cap in all_capabilities() if cap.executable]
    assert set(tools) == {PICTURE, *(cap.name for cap in executable)}
    assert "demo_count" in tools  # the test plugin (entry point group pyaichat.capabilities)
    for cap in executable:
        tool = tools[cap.name]
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        expected = cap.tool_schema()["function"]["parameters"]
        assert set(schema["properties"]) == set(expected.get("properties", {}))
        assert schema.get("required", []) == expected.get("required", [])
        assert "title" not in schema and "description" not in schema
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False
        assert tool["description"] == cap.summary


def test_propose_code_is_offered_only_where_a_person_can_decide_and_says_it_is_destructive() -> None:
    assert PROPOSE not in {t["name"] for t in tool_table(RUNTIME, proposals=False)}
    tools = tool_table(RUNTIME, proposals=True)
    propose = tools[-1]
    assert propose["name"] == PROPOSE
    assert propose["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert propose["inputSchema"]["required"] == ["code"]


def test_the_orienting_call_comes_first_and_the_list_stays_small() -> None:
    tools = tool_table(RUNTIME, proposals=True)
    assert tools[0]["name"] == PICTURE
    for tool in tools:
        assert len(tool["description"]) <= 220, tool["name"]
    # what an agent carries in its context for the whole list, as JSON (≈ 4 characters a token)
    size = len(json.dumps(tools, separators=(",", ":")))
    assert size < 8000, size  # ≈ 2,000 tokens (6.7k characters with the test plugin)


def test_outside_agents_get_the_same_lean_argument_schemas_as_our_model() -> None:
    """No pydantic ``anyOf``/null for an optional argument, no ``additionalProperties``: what our model is
    sent (``Tool.schema``), as an object schema."""
    tools = {t["name"]: t for t in tool_table(RUNTIME, proposals=False)}
    for tool in RUNTIME.tools().tools:
        if not tool.executable:
            continue
        served = tools[tool.name]["inputSchema"]
        assert served == {**tool.schema()["function"]["parameters"], "type": "object"}, tool.name
        assert "additionalProperties" not in served
        for prop in served["properties"].values():
            assert {"type": "null"} not in prop.get("anyOf", []), tool.name
