"""Where suggestions go and what they say: the route per provider, the toolbar's destination, the request."""

from __future__ import annotations

import pytest

from pyaichat.agent.suggest.prompt import build_request
from pyaichat.agent.suggest.route import destination, route_for
from pyaichat.configuration.config import Config


@pytest.mark.parametrize(
    ("settings", "kind", "model", "base"),
    [
        (
            {"suggest_model": "openai/qwen", "suggest_api_base": "http://127.0.0.1:8080/v1"},
            "fim",
            "openai/qwen",
            "http://127.0.0.1:8080/v1",
        ),
        (
            {"suggest_model": "ollama/qwen2.5-coder:1.5b"},
            "fim",
            "text-completion-openai/qwen2.5-coder:1.5b",
            "http://localhost:11434/v1",
        ),
        (
            {"suggest_model": "codestral/codestral-latest"},
            "fim",
            "text-completion-codestral/codestral-latest",
            None,
        ),
        (
            {"suggest_model": "deepseek/deepseek-chat"},
            "fim",
            "text-completion-openai/deepseek-chat",
            "https://api.deepseek.com/beta",
        ),
        ({"suggest_model": "gpt-4o-mini"}, "chat", "gpt-4o-mini", None),
        (
            {"suggest_model": "anthropic/claude-3-5-haiku-latest"},
            "chat",
            "anthropic/claude-3-5-haiku-latest",
            None,
        ),
        (
            {"suggest_model": "openai/gpt-4o-mini"},
            "chat",
            "openai/gpt-4o-mini",
            None,
        ),  # no server: OpenAI's chat
    ],
)
def test_fill_in_the_middle_where_the_provider_serves_it_else_chat(settings, kind, model, base) -> None:
    route = route_for(Config(**settings))
    assert (route.kind, route.model, route.api_base) == (kind, model, base)


def test_a_server_that_refused_fill_in_the_middle_gets_chat() -> None:
    config = Config(suggest_model="openai/qwen", suggest_api_base="http://127.0.0.1:8080/v1")
    assert route_for(config, chat_only=True).kind == "chat"


def test_the_assistants_server_and_key_are_shared_only_with_the_same_provider() -> None:
    shared = Config(
        model="openai/big",
        api_base="http://gpu:8000/v1",
        api_key="sk-assistant",
        suggest_model="openai/small",
    )
    route = route_for(shared)
    assert (route.api_base, route.api_key) == ("http://gpu:8000/v1", "sk-assistant")
    other = Config(
        model="openai/big", api_base="http://gpu:8000/v1", api_key="sk-assistant", suggest_model="ollama/qwen"
    )
    assert route_for(other).api_base == "http://localhost:11434/v1"
    assert route_for(other).api_key != "sk-assistant"
    elsewhere = shared.replace(suggest_api_base="http://127.0.0.1:9000/v1")
    assert route_for(elsewhere).api_key != "sk-assistant"


def test_the_toolbar_says_whether_keystrokes_leave_the_machine() -> None:
    assert destination(Config(suggest_model="ollama/qwen")) == ("localhost:11434", True)
    assert destination(Config(suggest_model="openai/x", suggest_api_base="http://127.0.0.1:8080/v1")) == (
        "127.0.0.1:8080",
        True,
    )
    assert destination(Config(suggest_model="codestral/codestral-latest")) == ("codestral.mistral.ai", False)
    assert destination(Config(suggest_model="gpt-4o-mini")) == ("api.openai.com", False)


FOUND = {
    "facts": ["sales: DataFrame 2×2: region_code str, net_revenue_eur float64"],
    "inputs": ["import pandas as pd"],
}


def test_fill_in_the_middle_carries_the_facts_as_a_comment_and_the_inputs_as_code() -> None:
    config = Config(suggest_model="openai/x", suggest_api_base="http://127.0.0.1:1/v1")
    request = build_request(config, route_for(config), 'sales.groupby("region_code")[', "", FOUND)
    assert request is not None and request.kind == "fim"
    body = request.body()
    assert body["prompt"].startswith("# Live session objects")
    assert "# sales: DataFrame 2×2: region_code str, net_revenue_eur float64\n" in body["prompt"]
    assert body["prompt"].endswith('import pandas as pd\nsales.groupby("region_code")[')
    assert "suffix" not in body  # nothing after the cursor: a plain completion
    assert body["stop"] == ["\n"] and body["max_tokens"] <= 64


def test_chat_gets_a_short_prompt_with_the_cursor_marked() -> None:
    config = Config(suggest_model="gpt-4o-mini")
    request = build_request(config, route_for(config), "for col in sales.columns:", "\nprint('end')", FOUND)
    assert request is not None and request.kind == "chat" and request.block
    system, user = request.messages
    assert "no explanation" in system["content"]
    assert "region_code str" in user["content"]
    assert user["content"].endswith("for col in sales.columns:<CURSOR>\nprint('end')")


def test_secrets_are_masked_and_a_cursor_inside_one_asks_nothing() -> None:
    config = Config(suggest_model="gpt-4o-mini")
    route = route_for(config)
    found = {"facts": [], "inputs": ['api_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"']}
    request = build_request(config, route, "client = connect(api_key", "", found)
    assert request is not None
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz" not in str(request.body())
    assert build_request(config, route, 'password = "hunt', "", found) is None
    assert build_request(config, route, 'db_password = "hunter2', '"', found) is None
