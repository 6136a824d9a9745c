"""The litellm client without the network: error mapping, stream reassembly and the bounded retries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace as NS
from typing import Any

import pytest

from pyaichat.agent.llm import NO_MODEL, LiteLLMClient, LLMReply, _read_stream, map_error
from pyaichat.config import Config
from pyaichat.errors import LLMError


def exc(name: str, message: str = "boom", status: int | None = None) -> Exception:
    cls = type(name, (Exception,), {})
    err = cls(message)
    err.status_code = status
    return err


@pytest.mark.parametrize(
    ("error", "kind", "words"),
    [
        (exc("BadRequestError", "Incorrect API key provided", 401), "auth", "rejected the API key"),
        (exc("AuthenticationError", "The api_key client option must be set", 401), "auth", "No API key"),
        (exc("RateLimitError", "slow down", 429), "rate_limit", "rate limiting"),
        (exc("InternalServerError", "oops", 500), "provider", "HTTP 500"),
        (exc("ServiceUnavailableError", "down", 503), "provider", "HTTP 503"),
        (exc("Timeout", "Request timed out", 408), "timeout", "did not answer within 30 s"),
        (exc("NotFoundError", "model not found", 404), "model", "does not know the model"),
        (
            exc("BadRequestError", "LLM Provider NOT provided. Pass in the LLM provider", 400),
            "model",
            "which provider",
        ),
        (exc("ContextWindowExceededError", "too long", 400), "context", "context window"),
        (exc("BadRequestError", "tools are not supported by this model", 400), "tools_unsupported", "tool"),
        (
            exc(
                "MidStreamFallbackError", "peer closed connection without sending complete message body", 500
            ),
            "stream_cut",
            "broke off",
        ),
        (
            exc("MidStreamFallbackError", "Expecting property name enclosed in double quotes", 500),
            "malformed",
            "not valid JSON",
        ),
        (exc("APIConnectionError", "Connection refused"), "connection", "Cannot reach"),
        (
            exc(
                "InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`", 500
            ),
            "auth",
            "No API key",
        ),
        (
            exc("InternalServerError", "OpenAIException - Connection error.", 500),
            "connection",
            "Cannot reach",
        ),
    ],
)
def test_errors_map_to_one_plain_sentence(error, kind, words):
    mapped = map_error(error, "openai/test", "http://127.0.0.1:9/v1", 30, True)
    assert mapped.kind == kind
    assert words in str(mapped)
    text = str(mapped)
    assert "\n" not in text and "Traceback" not in text and text.endswith((".", "?"))


def test_retryable_kinds():
    assert map_error(exc("RateLimitError", status=429), "m", None, 5, False).retryable
    assert map_error(exc("InternalServerError", status=500), "m", None, 5, False).retryable
    assert not map_error(exc("AuthenticationError", status=401), "m", None, 5, False).retryable


def test_no_model_is_refused_before_any_import():
    with pytest.raises(LLMError) as info:
        LiteLLMClient(Config())
    assert info.value.kind == "no_model" and str(info.value) == NO_MODEL


def test_explicit_tool_protocol_needs_no_litellm():
    assert LiteLLMClient(Config(model="m", tool_protocol="text")).native_tools() is False
    assert LiteLLMClient(Config(model="m", tool_protocol="native")).native_tools() is True


class Scripted(LiteLLMClient):
    def __init__(self, outcomes: list[Any], **kw: Any) -> None:
        super().__init__(Config(model="openai/test"), **kw)
        self.outcomes = outcomes
        self.waits: list[float] = []
        self._sleep = self.waits.append

    def _once(self, messages, tools, on_text, timeout):
        item = self.outcomes.pop(0)
        if isinstance(item, tuple):
            on_text(item[0])
            raise item[1]
        if isinstance(item, BaseException):
            raise item
        return item


def test_retries_back_off_and_stay_bounded():
    busy = LLMError("busy", kind="rate_limit", retryable=True)
    client = Scripted([busy, busy, LLMReply(text="ok")], retries=2, backoff=0.01)
    assert client.complete([], None, on_text=lambda t: None, timeout=10).text == "ok"
    assert client.waits == [0.01, 0.02]
    failing = Scripted([busy, busy, busy, LLMReply(text="never")], retries=2, backoff=0.01)
    with pytest.raises(LLMError):
        failing.complete([], None, on_text=lambda t: None, timeout=10)
    assert len(failing.outcomes) == 1  # three attempts in all


def test_no_retry_after_text_was_shown_or_for_fatal_errors():
    cut = LLMError("cut", kind="stream_cut", retryable=True)
    client = Scripted([("partial", cut), LLMReply(text="again")], backoff=0.01)
    with pytest.raises(LLMError):
        client.complete([], None, on_text=lambda t: None, timeout=10)
    auth = Scripted([LLMError("bad key", kind="auth"), LLMReply(text="x")], backoff=0.01)
    with pytest.raises(LLMError):
        auth.complete([], None, on_text=lambda t: None, timeout=10)
    assert auth.waits == []


def test_no_retry_when_the_deadline_is_too_close():
    busy = LLMError("busy", kind="rate_limit", retryable=True)
    client = Scripted([busy, LLMReply(text="ok")], backoff=5.0)
    with pytest.raises(LLMError):
        client.complete([], None, on_text=lambda t: None, timeout=2)


def _chunk(
    content: str | None = None, tool_calls: Any = None, finish: str | None = None, usage: Any = None
) -> Any:
    delta = NS(content=content, tool_calls=tool_calls)
    return NS(choices=[NS(delta=delta, finish_reason=finish)], usage=usage)


def test_read_stream_reassembles_text_tool_calls_and_usage():
    fn = lambda name, args: NS(name=name, arguments=args)  # noqa: E731
    chunks = [
        _chunk("Hel"),
        _chunk("lo"),
        _chunk(tool_calls=[NS(index=0, id="a", function=fn("get_repr", '{"ex'))]),
        _chunk(tool_calls=[NS(index=1, id="b", function=fn("list_globals", ""))]),
        _chunk(tool_calls=[NS(index=0, id=None, function=fn(None, 'pr": "df"}'))]),
        _chunk(finish="tool_calls"),
        NS(choices=[], usage=NS(prompt_tokens=12, completion_tokens=5)),
    ]
    shown: list[str] = []
    reply = _read_stream(iter(chunks), shown.append)
    assert reply.text == "Hello" and shown == ["Hel", "lo"]
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("a", "get_repr", '{"expr": "df"}'),
        ("b", "list_globals", ""),
    ]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 5)
    assert reply.finish_reason == "tool_calls"


def test_ctrl_c_while_litellm_loads_leaves_a_working_module():
    """Ctrl-C during the first (seconds-long) import ends the wait, not the import: the next question works.

    Interrupts arrive every 0.3 s until loading completes, so one lands in every phase of the import (an
    import stopped in its late phase used to leave a half-initialised litellm behind)."""
    script = textwrap.dedent(
        """
        import os, signal, threading, time
        from pyaichat.agent import llm

        loading = True

        def on_sigint(signum, frame):
            if loading:
                raise KeyboardInterrupt

        def interrupt():
            while loading:
                time.sleep(0.3)
                os.kill(os.getpid(), signal.SIGINT)

        signal.signal(signal.SIGINT, on_sigint)
        # Joined before exit, so at shutdown only pyaichat's own threads are left to get right.
        interrupter = threading.Thread(target=interrupt)
        interrupter.start()
        interrupts = 0
        while loading:
            try:
                litellm = llm.load_litellm()
                loading = False
            except KeyboardInterrupt:
                interrupts += 1
        reply = litellm.completion(
            model="openai/x", messages=[{"role": "user", "content": "hi"}], mock_response="fine"
        )
        interrupter.join()
        print(interrupts, reply.choices[0].message.content)
        """
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=_no_network_env()
        )
    except subprocess.TimeoutExpired as exc:
        # Seen when an interrupted Thread.join marked the warm-up thread finished while it still imported:
        # the exit did not wait for it and hung in litellm's finalizers.
        pytest.fail(f"the process hung (at exit?) after Ctrl-C during loading; stdout: {exc.stdout!r}")
    assert done.returncode == 0, done.stderr[-2000:]
    interrupts, answer = done.stdout.split()
    assert int(interrupts) >= 2 and answer == "fine"


def _no_network_env() -> dict[str, str]:
    env = dict(os.environ)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env
