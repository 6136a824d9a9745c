"""Images in tool results, through the real litellm HTTP path (the scripted OpenAI-compatible server): a model
that can see them gets them after the result, one that cannot is told they were left out, and neither
``/sent`` nor the memory of the turn carries the base64."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.capabilities.catalog import CapabilityResult
from pyaichat.configuration.config import Config
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

pytestmark = pytest.mark.e2e

# A real 1×1 PNG: litellm's token counter reads an image's size from its header.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
URL = f"data:image/png;base64,{PNG}"


FIGURE = CapabilityResult(
    name="get_figure", ok=True, text="Figure 1: one line plot, 1 axes.", duration_ms=1.0, images=(URL,)
)


class FigureRuntime(LocalRuntime):
    """The session's runtime with one more capability, ``get_figure``, that returns an image."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.asked: list[bool] = []

    def call(self, name: str, args: dict[str, Any], *, images: bool = False, **kwargs: Any) -> Any:
        if name != "get_figure":
            return super().call(name, args, images=images, **kwargs)
        self.asked.append(images)
        return FIGURE


def make(srv: ScriptedServer, model: str) -> Assistant:
    config = Config(model=model, api_base=srv.base_url, audit=False, request_timeout=10)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    runtime = FigureRuntime(session)
    return Assistant(config, runtime, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))


def ask(assistant: Assistant, question: str) -> Any:
    rec = Recorder()
    return assistant.ask(question, Front(rec.emit, never_approve)), rec


def test_a_model_that_sees_images_gets_them_after_the_result(srv):
    assistant = make(srv, "openai/gpt-4o-mini")  # litellm's table: supports vision
    srv.tool("get_figure", {}).text("It is a line plot.")
    result, rec = ask(assistant, "what does my figure show?")
    assert result.answer == "It is a line plot." and assistant.runtime.asked == [True]
    messages = srv.bodies[1]["messages"]
    tool, user = messages[-2], messages[-1]
    assert tool["role"] == "tool" and tool["content"].startswith("<data>\nFigure 1: one line plot")
    assert "1 image from get_figure follow" in tool["content"]
    assert user["role"] == "user" and user["content"][0] == {
        "type": "text",
        "text": "1 image from get_figure:",
    }
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": URL}}
    # /sent shows the picture's size, not its bytes
    sent = json.loads(assistant.sent_json()[1])
    assert sent["messages"][-1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "<image/png, 70 bytes>"},
    }
    assert PNG not in "".join(assistant.sent_json())
    assert "<image/png" not in rec.of("tool_end")[0].text  # the user's own view is the description
    # the next question remembers that there was a picture, not the picture
    srv.text("Still a line plot.")
    ask(assistant, "and now?")
    later = json.dumps(srv.bodies[-1]["messages"])
    assert PNG not in later and "<image/png, 70 bytes> (an image shown earlier, not kept)" in later


def test_a_model_that_cannot_see_images_is_told_they_were_left_out(srv):
    assistant = make(srv, "openai/test")  # unknown to litellm: no vision
    srv.tool("get_figure", {}).text("A plot, I am told.")
    result, _ = ask(assistant, "what does my figure show?")
    assert result.answer == "A plot, I am told." and assistant.runtime.asked == [False]
    messages = srv.bodies[1]["messages"]
    assert messages[-1]["role"] == "tool"
    assert "(1 image left out: this model cannot see images.)" in messages[-1]["content"]
    assert PNG not in srv.all_raw()


def test_the_text_protocol_sends_the_images_with_its_observations(srv):
    assistant = make(srv, "openai/gpt-4o-mini")
    assistant.settings.replace(assistant.config.replace(tool_protocol="text"))
    srv.text('<tool name="get_figure">{}</tool>').text("A line plot.")
    ask(assistant, "what does my figure show?")
    observations = srv.bodies[1]["messages"][-1]
    assert observations["role"] == "user"
    text, label, image = observations["content"]
    assert text["text"].startswith('<observation tool="get_figure">\n<data>\nFigure 1')
    assert label["text"] == "1 image from get_figure:" and image["image_url"]["url"] == URL
