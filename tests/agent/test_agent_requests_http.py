"""Request bounds through the real litellm HTTP path (scripted OpenAI-compatible server on 127.0.0.1):
every request carries a reply cap that fits the window the server reports, and a looping stream is cut."""

from __future__ import annotations

import pytest

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LiteLLMClient, Request, window_in_error
from pyaichat.agent.repetition import LOOP_NOTE
from pyaichat.configuration.config import Config
from pyaichat.errors import LLMError
from pyaichat.session import Session

pytestmark = pytest.mark.e2e


def make(srv: ScriptedServer, **settings) -> tuple[Assistant, Session]:
    config = Config(model="openai/local", api_base=srv.base_url, audit=False, request_timeout=10, **settings)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    return Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01)), session


def ask(assistant: Assistant, question: str):
    rec = Recorder()
    return assistant.ask(question, Front(rec.emit, never_approve)), rec


def test_every_request_carries_a_reply_cap_within_the_servers_window(srv):
    srv.props = {"default_generation_settings": {"n_ctx": 4096}}  # as llama.cpp's server reports it
    assistant, session = make(srv, max_tokens=3600, temperature=0.0, seed=7)  # more than the window leaves
    session.run("x = 41")
    srv.tool("get_repr", {"expr": "x"}).text("41.", prompt_tokens=900)
    result, _ = ask(assistant, "x?")
    assert result.answer == "41."
    assert "/props" in srv.gets
    client = assistant.client()
    assert client.context_window() == 4096
    for body in srv.bodies:
        prompt = client.count_tokens(body["messages"], body.get("tools"))
        assert 16 <= body["max_tokens"] <= 4096 - prompt  # prompt and answer fit the window together
        assert body["max_tokens"] < 3600
        assert body["temperature"] == 0.0 and body["seed"] == 7
    # /sent shows the cap as sent
    assert all('"max_tokens"' in text for text in assistant.sent_json())


def test_without_a_reported_window_the_setting_is_the_cap(srv):
    assistant, _ = make(srv, max_tokens=200)
    srv.text("ok")
    ask(assistant, "q")
    (body,) = srv.bodies
    assert body["max_tokens"] == 200 and "temperature" not in body and "seed" not in body


def test_a_refusal_naming_the_window_is_one_sentence_and_teaches_the_window(srv):
    assistant, _ = make(srv)
    srv.fault("400-context")
    _, rec = ask(assistant, "q")
    (err,) = rec.of("error")
    assert err.kind == "context" and "context window" in err.message and "Traceback" not in err.message
    assert assistant.client().context_window() == 2048
    srv.text("ok")
    ask(assistant, "q2")
    body = srv.bodies[-1]
    assert body["max_tokens"] + assistant.client().count_tokens(body["messages"], body.get("tools")) <= 2048


def test_a_looping_stream_is_cut_through_the_http_path(srv):
    assistant, _ = make(srv)
    srv.text("The type of the variable `df` is `NoneType`.\n" * 300)
    result, rec = ask(assistant, "what is df?")
    assert result.stopped_by == "repetition" and result.note == LOOP_NOTE
    assert result.answer == "The type of the variable `df` is `NoneType`."
    (answer,) = rec.of("answer")
    assert answer.note == LOOP_NOTE and not rec.of("error")


def test_ollama_is_told_its_window():
    client = LiteLLMClient(Config(model="ollama/qwen2.5-coder", context_window=16384))
    body = client.request_kwargs(Request([{"role": "user", "content": "hi"}], None, max_tokens=1024))
    assert body["num_ctx"] == 16384 and body["max_tokens"] == 1024


def test_window_in_error_messages():
    assert window_in_error(ValueError("Requested tokens (3000) exceed context window of 2048")) == 2048
    assert window_in_error(ValueError("This model's maximum context length is 8192 tokens")) == 8192
    assert window_in_error(ValueError("the request exceeds the available context size, try")) is None


def test_a_server_that_drops_the_tool_schemas_gets_the_text_protocol_next(srv):
    """llama.cpp servers render many small models' chat templates without the tools: the prompt they count
    then holds the messages only. The next requests describe the tools in the system prompt instead."""
    assistant, _ = make(srv)
    srv.text("I cannot see any tools.", prompt_tokens=280)  # about the messages alone: no schemas in it
    srv.text("ok", prompt_tokens=1400)
    ask(assistant, "q1")
    ask(assistant, "q2")
    first, second = srv.bodies
    assert first["tools"] and "## Tools (text protocol)" not in first["messages"][0]["content"]
    assert "tools" not in second and "## Tools (text protocol)" in second["messages"][0]["content"]


def test_a_server_that_shows_the_tools_keeps_native_calls(srv):
    assistant, _ = make(srv)
    srv.text("a", prompt_tokens=2100).text("b", prompt_tokens=2150)
    ask(assistant, "q1")
    ask(assistant, "q2")
    assert all(body.get("tools") for body in srv.bodies)


@pytest.mark.parametrize(
    "model, path", [("ollama_chat/qwen2.5-coder", "/api/chat"), ("ollama/qwen2.5-coder", "/api/generate")]
)
def test_ollama_receives_its_window_and_the_cap_as_options(srv, model, path):
    """Ollama cuts a longer prompt silently from the front: it must be told num_ctx, through litellm."""
    client = LiteLLMClient(Config(model=model, api_base=f"http://127.0.0.1:{srv.port}", context_window=16384))
    client.retry.retries = 0
    request = Request([{"role": "user", "content": "hi"}], None, max_tokens=1024)
    with pytest.raises(LLMError):  # the scripted server is no Ollama: only the request matters here
        client.stream(request, timeout=5).reply()
    (request,) = srv.requests
    assert request.path == path
    assert request.body["options"]["num_ctx"] == 16384 and request.body["options"]["num_predict"] == 1024
