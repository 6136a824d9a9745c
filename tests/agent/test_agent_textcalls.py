"""Tool calls in the formats local models write: each format is recognised, only known tools become calls,
nothing the model wrote is executed, and the prose around a call is kept."""

from __future__ import annotations

import pytest

from pyaichat.agent.stream_gate import StreamGate
from pyaichat.agent.textcalls import pythonic_calls, recover_calls

PARAMS = {
    "get_repr": ["expr"],
    "get_dir": ["expr", "include_private"],
    "list_globals": ["pattern"],
    "run_python": ["code"],
}


def calls(text: str) -> list[tuple[str, dict | None]]:
    return [(c.name, c.args) for c in recover_calls(text, PARAMS).calls]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "get_repr", "arguments": {"expr": "df"}}\n</tool_call>',  # Hermes / Qwen
        '<tool_call>{"name": "get_repr", "arguments": {"expr": "df"}}',  # closing tag never came
        '{"name": "get_repr", "parameters": {"expr": "df"}}',  # Llama 3
        '<|python_tag|>{"name": "get_repr", "parameters": {"expr": "df"}}',  # Llama 3.1 with its tag
        '[TOOL_CALLS][{"name": "get_repr", "arguments": {"expr": "df"}}]',  # Mistral
        '[TOOL_CALLS]get_repr[ARGS]{"expr": "df"}',  # Mistral, newer
        '```tool_code\nget_repr(expr="df")\n```',  # Gemma
        'get_repr(expr="df")',  # pythonic
        "get_repr('df')",  # pythonic, positional
        '[get_repr(expr="df")]',  # Llama 3.2 pythonic list
        '`get_repr(expr="df")`',
    ],
)
def test_each_format_becomes_one_call(text):
    assert calls(text) == [("get_repr", {"expr": "df"})]


def test_prose_around_a_call_is_kept_as_prose():
    found = recover_calls(
        'Let me look at the data first.\n<tool_call>\n{"name": "get_repr", "arguments": {"expr": "sales"}}\n'
        "</tool_call>",
        PARAMS,
    )
    assert [(c.name, c.args) for c in found.calls] == [("get_repr", {"expr": "sales"})]
    assert found.prose == "Let me look at the data first."

    found = recover_calls('I will check `df`.\nget_repr(expr="df")\nThen I answer.', PARAMS)
    assert [c.name for c in found.calls] == ["get_repr"]
    assert found.prose == "I will check `df`.\nThen I answer."


def test_several_calls_in_one_reply():
    text = (
        '<tool_call>{"name": "get_repr", "arguments": {"expr": "a"}}</tool_call>\n'
        '<tool_call>{"name": "list_globals", "arguments": {}}</tool_call>'
    )
    assert calls(text) == [("get_repr", {"expr": "a"}), ("list_globals", {})]
    assert calls('[get_repr(expr="a"), get_dir("b", include_private=True)]') == [
        ("get_repr", {"expr": "a"}),
        ("get_dir", {"expr": "b", "include_private": True}),
    ]


def test_tagged_calls_of_unknown_tools_are_errors_for_the_model():
    (call,) = recover_calls(
        '<tool_call>{"name": "os_system", "arguments": {"cmd": "ls"}}</tool_call>', PARAMS
    ).calls
    assert call.args is None and "no tool named 'os_system'" in call.error
    (call,) = recover_calls("```tool_code\nprint(open('/etc/passwd').read())\n```", PARAMS).calls
    assert call.args is None and "no tool named 'print'" in call.error
    (call,) = recover_calls("<tool_call>{not json</tool_call>", PARAMS).calls
    assert call.args is None and "not valid JSON" in call.error


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Ada", "age": 36}',  # JSON data, not a call
        "print(df.head())",  # code, unknown name
        "get_repr(expr=__import__('os').system('echo hacked'))",  # a known name with a non-literal argument
        "get_repr(df)",  # a bare name is not a literal
        'get_repr(**{"expr": "df"})',
        "Call `get_repr(expr='df')` to see it, or df.head().",  # inline in a sentence
        "```python\nget_repr(expr='df')\n```",  # shown as code, not called
        "x = get_repr(expr='df')",
    ],
)
def test_things_that_merely_look_like_calls_stay_prose(text):
    found = recover_calls(text, PARAMS)
    assert found.calls == [] and found.prose == text


def test_nothing_is_executed_while_parsing(tmp_path):
    marker = tmp_path / "ran"
    line = f"get_repr(expr=open({str(marker)!r}, 'w').write('x'))"
    assert pythonic_calls(line, PARAMS) is None
    assert recover_calls(f"```tool_code\n{line}\n```", PARAMS).calls[0].args is None
    assert not marker.exists()


def feed_all(gate: StreamGate, text: str, size: int = 3) -> str:
    return "".join(gate.feed(text[i : i + size]) for i in range(0, len(text), size))


@pytest.mark.parametrize(
    "call",
    [
        '<tool_call>\n{"name": "get_repr", "arguments": {"expr": "df"}}\n</tool_call>',
        '[TOOL_CALLS][{"name": "get_repr", "arguments": {"expr": "df"}}]',
        '```tool_code\nget_repr(expr="df")\n```',
        'get_repr(expr="df")',
        '{"name": "get_repr", "parameters": {"expr": "df"}}',
    ],
)
def test_the_stream_gate_shows_the_prose_and_holds_back_the_call(call):
    gate = StreamGate(tags=False, tool_params=PARAMS)
    shown = feed_all(gate, "Let me check.\n" + call + "\n")
    assert shown == "Let me check.\n"


def test_the_stream_gate_releases_a_line_that_only_starts_like_a_call():
    gate = StreamGate(tags=False, tool_params=PARAMS)
    shown = feed_all(gate, "ok\nget_repr(df) shows it\nget the data\n")
    assert shown == "ok\nget_repr(df) shows it\nget the data\n"
