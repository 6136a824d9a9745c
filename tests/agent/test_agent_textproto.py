"""Text tool protocol parsing, recovery of tool calls printed as JSON, and the streaming gate."""

from __future__ import annotations

from pyaichat.agent.calls import ToolCall
from pyaichat.agent.stream_gate import StreamGate
from pyaichat.agent.textcalls import recover_calls
from pyaichat.agent.textproto import describe_protocol, parse_blocks

PARAMS = {"get_repr": ["expr"], "list_globals": ["pattern"], "run_python": ["code"]}


def recover_json_call(text: str) -> ToolCall | None:
    """The one call of a reply that is only a JSON tool call (what the loop runs), else ``None``."""
    found = recover_calls(text, PARAMS)
    return found.calls[0] if len(found.calls) == 1 and not found.prose else None


def test_parse_blocks_finds_tools_python_and_prose():
    text = 'Checking.\n<tool name="get_repr">{"expr": "df"}</tool>\n<python>\n    print(len(df))\n</python>'
    calls, prose = parse_blocks(text)
    assert [(c.name, c.args) for c in calls] == [
        ("get_repr", {"expr": "df"}),
        ("run_python", {"code": "print(len(df))"}),
    ]
    assert prose == "Checking."


def test_parse_blocks_reports_bad_json_and_non_objects():
    calls, _ = parse_blocks("<tool name=\"get_repr\">{expr: df}</tool><tool name='get_repr'>[1]</tool>")
    assert calls[0].args is None and "not valid JSON" in calls[0].error
    assert calls[1].args is None and "must be a JSON object" in calls[1].error


def test_parse_blocks_accepts_an_empty_body_and_fenced_json():
    calls, _ = parse_blocks(
        '<tool name="list_globals"></tool><tool name="get_repr">```json\n{"expr": "a"}\n```</tool>'
    )
    assert [c.args for c in calls] == [{}, {"expr": "a"}]


def test_recover_json_call_shapes():
    assert recover_json_call('{"name": "get_repr", "arguments": {"expr": "x"}}').args == {"expr": "x"}
    assert recover_json_call('{"name": "get_repr", "parameters": {"expr": "x"}}').args == {"expr": "x"}
    assert recover_json_call('{"tool": "list_globals", "args": {}}').name == "list_globals"
    fn = '{"type": "function", "function": {"name": "get_repr", "arguments": "{\\"expr\\": \\"y\\"}"}}'
    assert recover_json_call(fn).args == {"expr": "y"}
    assert recover_json_call('```json\n{"name": "list_globals"}\n```').args == {}


def test_recover_json_call_leaves_answers_alone():
    assert recover_json_call('{"name": "Ada", "age": 36}') is None
    assert recover_json_call('Use {"name": "get_repr"} like this.') is None
    assert recover_json_call("[1, 2]") is None
    assert recover_json_call('{"name": "get_repr", "arguments": {') is None


def test_gate_releases_prose_at_once():
    gate = StreamGate(tags=False)
    assert gate.feed("Hello") == "Hello"
    assert gate.feed(" world {x}") == " world {x}"


def test_gate_holds_possible_json_until_the_end():
    gate = StreamGate(tags=False)
    assert gate.feed('  {"name": ') == ""
    assert gate.feed('"get_repr"}') == ""
    assert gate.rest() == '  {"name": "get_repr"}'


def test_gate_lets_a_python_fence_through_but_holds_a_json_fence():
    py = StreamGate(tags=False)
    assert py.feed("``") == ""
    assert py.feed("`python\nx = 1") == "```python\nx = 1"
    js = StreamGate(tags=False)
    assert js.feed('```json\n{"a"') == ""


def test_gate_in_text_mode_holds_a_possible_tag_and_closes_on_a_real_one():
    gate = StreamGate(tags=True)
    assert gate.feed("Let me check <to") == "Let me check "
    assert gate.feed('ol name="x">{}') == ""
    assert gate.closed
    other = StreamGate(tags=True)
    assert other.feed("a <b> tag") == "a <b> tag"


def test_describe_protocol_lists_tools_from_schemas():
    schemas = [
        {
            "type": "function",
            "function": {
                "name": "get_repr",
                "description": "Show a value.",
                "parameters": {"properties": {"expr": {"type": "string"}}, "required": ["expr"]},
            },
        }
    ]
    text = describe_protocol(schemas)
    assert "- get_repr(expr: string): Show a value." in text and "<tool name=" in text


def test_parse_blocks_accepts_a_last_block_without_its_closing_tag():
    calls, prose = parse_blocks('Checking.\n<tool name="get_repr">{"expr": "df"}')
    assert [(c.name, c.args) for c in calls] == [("get_repr", {"expr": "df"})] and prose == "Checking."
    calls, _ = parse_blocks("<python>\nprint(1)\n")
    assert calls[0].args == {"code": "print(1)"}


def test_a_number_past_the_digit_limit_is_a_sentence_for_the_model():
    """``json.loads`` raises a plain ``ValueError`` (no ``msg``) for an integer past Python's digit limit."""
    call = ToolCall("c1", "eval_expr", '{"expr": ' + "9" * 5000 + "}")
    assert call.args is None and "not valid JSON (Exceeds the limit" in (call.error or "")
