"""A day-long session keeps only what something can still use: the conversation a request can hold, the
last turn's record for /trace and /sent, and one HTTP client for all requests."""

from __future__ import annotations

import gc
import weakref

import pytest

from fakes.fake_llm import FakeLLM
from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.context import Memory, Turn
from pyaichat.agent.llm import LiteLLMClient, load_litellm
from pyaichat.configuration.config import Config
from pyaichat.session import Session


def ask(assistant: Assistant, question: str):
    return assistant.ask(question, Front(Recorder().emit, never_approve))


def long_session(fit: bool, questions: int = 120) -> tuple[Assistant, FakeLLM]:
    config = Config(model="fake/model", audit=False, context_tokens=1500)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    fake = FakeLLM()
    assistant = Assistant(config, session, llm_factory=lambda cfg: fake)
    if not fit:
        assistant.memory.fit = lambda limit, count: None  # type: ignore[method-assign]
    for i in range(questions):
        fake.tool("eval_expr", {"expr": f"{i} + 1"})
        fake.text(f"{i} + 1 is {i + 1}; " + "and that is all there is to say about it. " * (i % 4))
        ask(assistant, f"what is {i} + 1?")
    return assistant, fake


def test_memory_forgets_only_turns_no_request_could_send_again():
    kept, fake_kept = long_session(fit=True)
    everything, fake_everything = long_session(fit=False)
    assert len(everything.memory.turns) == 120
    assert len(kept.memory.turns) < 60  # bounded by context_tokens, not by the session's age
    # and no request was any different for it
    assert fake_kept.requests == fake_everything.requests


def test_memory_fit_keeps_the_newest_turns_that_fill_the_limit():
    memory = Memory()
    for i in range(10):
        memory.add(Turn(f"q{i}", [], f"a{i}"))
    counted: list[str] = []

    def count(messages: list[dict]) -> int:
        counted.append(messages[0]["content"])
        return 100

    memory.fit(350, count)
    # q9..q6 take 400 > 350 tokens by themselves: q5 and older can never be sent again
    assert [t.question for t in memory.turns] == ["q6", "q7", "q8", "q9"]
    memory.add(Turn("q10", [], "a10"))
    counted.clear()
    memory.fit(350, count)
    assert counted == ["q10"]  # each turn is counted once
    assert [t.question for t in memory.turns] == ["q7", "q8", "q9", "q10"]


def test_only_the_last_turn_is_kept_whole_and_the_totals_still_add_up(assistant, fake):
    fake.text("one")
    first = weakref.ref(ask(assistant, "q1"))
    fake.tool("list_globals", {}).text("two")
    ask(assistant, "q2")
    gc.collect()
    assert first() is None  # its request bodies and steps are gone with it
    assert assistant.last.question == "q2" and len(assistant.last.requests) == 2
    assert assistant.questions == 2 and assistant.requests == 3
    assert assistant.totals.prompt_tokens == 300 and assistant.totals.completion_tokens == 30
    assert assistant.cost_text().startswith("2 question(s): 300 prompt + 30 completion tokens")


@pytest.mark.e2e
def test_the_requests_of_a_session_share_one_http_client(srv: ScriptedServer):
    """litellm caches an HTTP client per timeout among other things: requests whose timeouts differ by a
    fraction of a second must not each build (and keep) a client and a connection of their own."""
    litellm = load_litellm()
    config = Config(model="openai/local", api_base=srv.base_url, audit=False, request_timeout=30)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    assistant = Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    srv.text("warm")
    ask(assistant, "q0")
    clients = len(litellm.in_memory_llm_clients_cache.cache_dict)
    for i in range(4):
        srv.tool("list_globals", {}).text(f"answer {i}")
        ask(assistant, f"q{i + 1}")
    assert len(srv.bodies) == 9
    assert len(litellm.in_memory_llm_clients_cache.cache_dict) == clients


@pytest.mark.e2e
def test_a_streamed_reply_is_not_handed_to_litellms_logging_threads_chunk_by_chunk(srv, monkeypatch):
    """litellm gave every streamed chunk to its logging thread pool, which starts a thread whenever the
    earlier ones are busy and keeps it (up to 100): the hand-offs per request must not grow with the reply."""
    load_litellm()
    from litellm.litellm_core_utils.thread_pool_executor import executor

    handed: list[object] = []
    submit = executor.submit

    def counted(fn, /, *args, **kwargs):
        handed.append(fn)
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(executor, "submit", counted)
    config = Config(model="openai/local", api_base=srv.base_url, audit=False)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    assistant = Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    words = [a + b + c for a in "bdgkmpst" for b in "aeiou" for c in "lnr"]  # 120 different words
    for i in range(3):
        srv.text(" ".join(words[i:] + words[:i]))  # streamed in several chunks
        ask(assistant, f"q{i}")
    assert len(srv.bodies) == 3 and assistant.last.stopped_by is None
    # litellm's own success logging when a request ends (twice); every chunk was handed over too: 27 in all
    assert len(handed) <= 2 * 3, handed
