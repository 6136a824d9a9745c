"""Lean requests (issue 39): short tool descriptions and schemas, a stable prefix (system prompt and tools
in a fixed order, byte-identical from request to request, the MCP servers' part after our own), Anthropic's
cache mark on it, and ``/sent`` and ``/cost`` telling the prefix's tokens from the rest."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fakes.fake_llm import FakeLLM
from fakes.openai_server import Reply, ScriptedServer
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.budget import Budget, Limits
from pyaichat.agent.llm import LiteLLMClient, Usage
from pyaichat.agent.protocol import NATIVE, TEXT, OutsideSchemas, Prompt
from pyaichat.assemble import assemble
from pyaichat.capabilities import call
from pyaichat.capabilities.invoke import tool_schemas
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

# the built-in tools, least power first: the order every request lists them in
ORDER = (
    "list_globals",
    "get_type",
    "get_repr",
    "get_dir",
    "get_doc",
    "get_last_exception",
    "eval_expr",
    "run_python",
    "query_sql",
    "get_figure",
    "propose_code",
)
BUILTIN = set(ORDER)


def builtin_functions() -> dict[str, dict]:
    return {s["function"]["name"]: s["function"] for s in tool_schemas() if s["function"]["name"] in BUILTIN}


# -- what each tool costs ------------------------------------------------------------------------------------
def test_tool_descriptions_are_a_sentence_or_two_without_docstring_whitespace():
    functions = builtin_functions()
    assert set(functions) == BUILTIN
    for name, fn in functions.items():
        description = fn["description"]
        assert "\n" not in description and "  " not in description, (name, description)
        assert len(re.findall(r"[.!?](?:\s|$)", description)) <= 2, (name, description)
        assert len(description) <= 200, (name, description)
        assert "Use it" in description or "use it" in description or "Use get_repr" in description, name


def test_argument_schemas_carry_only_what_helps_the_model_call():
    functions = builtin_functions()
    assert functions["get_last_exception"]["parameters"] == {"properties": {}, "type": "object"}
    pattern = functions["list_globals"]["parameters"]["properties"]["pattern"]
    assert pattern == {"description": pattern["description"], "type": "string"}  # not anyOf [string, null]
    assert "required" not in functions["list_globals"]["parameters"]
    assert "default" not in functions["get_dir"]["parameters"]["properties"]["include_private"]
    assert functions["query_sql"]["parameters"]["properties"]["limit"]["default"] == 20
    for fn in functions.values():
        text = json.dumps(fn)
        assert '"title"' not in text and "additionalProperties" not in text


def test_a_plugins_docstring_is_sent_without_its_indentation():
    (demo,) = [s["function"] for s in tool_schemas() if s["function"]["name"] == "demo_count"]
    assert "\n" not in demo["description"] and "  " not in demo["description"]


def test_the_tool_list_has_one_order_whatever_was_imported_first():
    """The order was the order of registration: whatever a process happened to import first came first, so
    two sessions sent two different prefixes to the same provider cache."""
    script = (
        "import importlib, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        "from pyaichat.capabilities.invoke import tool_schemas\n"
        "print(' '.join(s['function']['name'] for s in tool_schemas()))\n"
    )
    orders = {
        subprocess.run(
            [sys.executable, "-c", script, module], capture_output=True, text=True, check=True
        ).stdout.strip()
        for module in ("pyaichat.capabilities.introspect", "pyaichat.capabilities.code_tools")
    }
    assert len(orders) == 1
    (order,) = orders
    names = order.split()
    assert names[: len(ORDER)] == list(ORDER)  # ours first, least power first; plugins after, by name


def test_a_refused_import_says_what_can_be_imported(session):
    # run_python's description no longer lists the modules: the model learns them when it needs them
    result = call(session, "run_python", {"code": "import os"})
    assert not result.ok and "the module os is not available" in result.error
    assert "math" in result.error and "numpy" in result.error and "pandas" in result.error


def test_the_first_request_of_a_typical_question_is_well_under_1600_tokens(session):
    """Counted with gpt-4o-mini's tokenizer (litellm's), every tool offered; 1,863 before issue 39."""
    import litellm

    session.run("import pandas as pd")
    session.run('sales = pd.DataFrame({"region": ["north", "south"], "revenue": [120, 340]})')
    fake = FakeLLM(model="openai/test").text("ok")
    assistant = Assistant(session.config, session, llm_factory=lambda cfg: fake)
    assistant.ask("what columns does sales have?", Front(Recorder().emit, never_approve))
    (first,) = fake.requests
    assert {t["function"]["name"] for t in first["tools"]} >= BUILTIN
    tokens = litellm.token_counter(model="gpt-4o-mini", messages=first["messages"], tools=first["tools"])
    assert tokens <= 1_200, tokens  # the budget is 1,600; this leaves room for what comes next


# -- the stable prefix --------------------------------------------------------------------------------------
def _outside() -> OutsideSchemas:
    tool = {
        "type": "function",
        "function": {"name": "time__now", "description": "The time.", "parameters": {"type": "object"}},
    }
    return OutsideSchemas(full=[tool], brief=[tool], describe=tool, full_tokens=10_000)


@pytest.mark.parametrize("protocol", [NATIVE, TEXT], ids=["native", "text"])
def test_the_mcp_servers_part_comes_after_everything_of_our_own(protocol):
    """With MCP tools the system message once began with their note, before our tool list: a server that
    changed or failed changed the prefix from there on, our own tools included."""
    ours = [s for s in tool_schemas() if s["function"]["name"] in BUILTIN]

    def first_request(outside: OutsideSchemas | None):
        note = "## Tools from MCP" if outside else ""
        prompt = Prompt("You answer.", ours, "## Session", outside=outside, note=note)
        budget = Budget(FakeLLM(native=protocol is NATIVE), Limits(), prompt)
        budget.start()
        question = [{"role": "user", "content": "q"}]
        return budget.next_request(protocol, question, step=0, spent=Usage(), requests=0)

    alone, with_mcp = first_request(None), first_request(_outside())
    system, system_mcp = alone.messages[0]["content"], with_mcp.messages[0]["content"]
    assert system_mcp.startswith(system) and system_mcp.endswith("## Tools from MCP")
    if protocol is NATIVE:
        assert with_mcp.tools[: len(ours)] == alone.tools == ours
        assert with_mcp.tools[-1]["function"]["name"] == "time__now"
    else:
        assert "time__now" in system_mcp[len(system) :]


@pytest.fixture
def anthropic(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch):
    server.reset()
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return server


def _controller(srv: ScriptedServer, model: str, api_base: str) -> tuple[Controller, Recorder, Session]:
    config = Config(model=model, api_base=api_base, api_key="sk-ant-test", audit=False, context_window=8000)
    session = Session(config=config, echo=lambda value: None)
    rec = Recorder()
    ctrl = assemble(LocalRuntime(session), rec, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    return ctrl, rec, session


def test_anthropic_gets_a_cache_mark_at_the_end_of_the_stable_prefix(anthropic):
    """Through litellm's own Anthropic path (the scripted server answers the Messages API): the system block
    carries ``cache_control``; tools and system are the same bytes in both requests of a two-step turn and in
    the next question; nothing after the prefix is marked."""
    srv = anthropic
    root = srv.base_url.removesuffix("/v1")
    ctrl, rec, session = _controller(srv, "anthropic/claude-haiku-4-5", root)
    session.run("x = 41")
    srv.tool("get_repr", {"expr": "x"})
    srv.text("x is 41.", prompt_tokens=900, cached_tokens=800)
    srv.text("y is 2.", prompt_tokens=950, cached_tokens=800)
    ctrl.ask("what is x?")
    session.run("y = 2")
    ctrl.ask("and y?")
    assert [r.path for r in srv.requests] == ["/v1/messages"] * 3
    bodies = srv.bodies
    for body in bodies:
        (block,) = body["system"]
        assert block["cache_control"] == {"type": "ephemeral"}
        assert block["text"].startswith("You are pyaichat")
        assert "cache_control" not in json.dumps(body["messages"])  # only the prefix is marked
    prefixes = {json.dumps([b["tools"], b["system"]]) for b in bodies}
    assert len(prefixes) == 1  # byte-identical across the steps of a turn and across questions
    assert [t["name"] for t in bodies[0]["tools"]][: len(ORDER)] == list(ORDER)
    # /sent shows the mark as it was sent, and /cost what the provider read from its cache
    dispatch(ctrl, "/sent")
    (page,) = rec.of("page")
    assert '"cache_control": {' in page.sections[0].code
    dispatch(ctrl, "/cost")
    assert "the provider read 1,600 from its prompt cache" in rec.of("notice")[-1].text  # 800 + 800


def test_other_providers_get_no_cache_mark(srv):
    ctrl, _, _ = _controller(srv, "openai/test", srv.base_url)
    srv.text("ok")
    ctrl.ask("q")
    assert "cache_control" not in srv.requests[0].raw


# -- /sent and /cost -----------------------------------------------------------------------------------------
def test_sent_and_cost_show_the_stable_prefix_apart_from_the_rest(srv):
    ctrl, rec, session = _controller(srv, "openai/test", srv.base_url)
    session.run("x = 41")
    srv.enqueue(Reply(tool_calls=[{"name": "get_repr", "arguments": {"expr": "x"}}], prompt_tokens=1000))
    srv.text("x is 41.", prompt_tokens=1100)
    ctrl.ask("what is x?")
    rec.events.clear()
    dispatch(ctrl, "/sent")
    (page,) = rec.of("page")
    assert [s.title for s in page.sections] == ["Request 1 of 2", "Request 2 of 2"]  # the page as it was
    (notice,) = rec.of("notice")
    lines = notice.text.splitlines()
    assert lines[0].startswith("Prompt tokens per request, as the provider counted them")
    row = re.compile(r"  request (\d): ([\d,]+) = ([\d,]+) stable prefix \+ ([\d,]+) the rest")
    found = [row.fullmatch(line) for line in lines[1:]]
    assert all(found), lines
    numbers = [[int(g.replace(",", "")) for g in m.groups()] for m in found]
    assert [n[:2] for n in numbers] == [[1, 1000], [2, 1100]]
    for _, total, prefix, rest in numbers:
        assert prefix + rest == total and 0.5 * total < prefix < total  # tools and system prompt: most of it
    assert numbers[0][2] == numbers[1][2] or abs(numbers[0][2] - numbers[1][2]) <= 0.1 * numbers[0][2]
    dispatch(ctrl, "/cost")
    cost = rec.of("notice")[-1].text
    prefix = numbers[0][2] + numbers[1][2]
    assert cost.startswith("1 question(s): 2,100 prompt + 14 completion tokens")
    assert f"Prompt tokens: about {prefix:,} the stable prefix" in cost
    assert f"and {2100 - prefix:,} the rest" in cost
