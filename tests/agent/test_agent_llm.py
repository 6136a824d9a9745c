"""The litellm client without the network: error mapping (litellm's own exception classes), stream reading,
the one retry budget, and the loader."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import httpx
import pytest

from pyaichat.agent.llm import (
    NO_MODEL,
    ChatStream,
    LiteLLMClient,
    LLMReply,
    Loader,
    Receiving,
    Request,
    Retry,
    Retrying,
    Usage,
    load_litellm,
)
from pyaichat.agent.llm.client import _Completion
from pyaichat.agent.llm.errors import map_error
from pyaichat.configuration.config import Config
from pyaichat.errors import (
    LLMAuthError,
    LLMConnectError,
    LLMConnectionClosed,
    LLMContextTooLong,
    LLMError,
    LLMMalformedReply,
    LLMNetworkError,
    LLMProviderError,
    LLMRateLimited,
    LLMServerError,
    LLMSetupError,
    LLMStreamCut,
    LLMTimeout,
    LLMToolsRefused,
    LLMTransportError,
    LLMUnknownModel,
    NoModelConfigured,
)
from timeouts import HANG_GUARD


@pytest.fixture(scope="module")
def lib() -> Any:
    return load_litellm()


def make(lib: Any, name: str, message: str, status: int | None = None) -> Exception:
    """A litellm exception as litellm itself raises it (``status`` overrides the class's own code)."""
    cls = getattr(lib.exceptions, name)
    extra: dict[str, Any] = {}
    if name == "PermissionDeniedError":  # the one class that wants the HTTP response
        extra["response"] = httpx.Response(403, request=httpx.Request("POST", "http://127.0.0.1:9/v1"))
    err = cls(message=message, model="test", llm_provider="openai", **extra)
    if status is not None:
        err.status_code = status
    return err


@pytest.mark.parametrize(
    ("name", "message", "status", "cls", "kind", "words"),
    [
        ("BadRequestError", "Incorrect API key provided", 401, LLMAuthError, "auth", "rejected the API key"),
        (
            "AuthenticationError",
            "The api_key client option must be set",
            None,
            LLMAuthError,
            "auth",
            "No API key",
        ),
        ("PermissionDeniedError", "not allowed", None, LLMAuthError, "auth", "rejected the API key"),
        ("RateLimitError", "slow down", None, LLMRateLimited, "rate_limit", "rate limiting"),
        ("InternalServerError", "oops", None, LLMServerError, "provider", "HTTP 500"),
        ("ServiceUnavailableError", "down", None, LLMServerError, "provider", "HTTP 503"),
        ("Timeout", "Request timed out", None, LLMTimeout, "timeout", "did not answer within 30 s"),
        ("NotFoundError", "model not found", None, LLMUnknownModel, "model", "does not know the model"),
        (
            "BadRequestError",
            "LLM Provider NOT provided. Pass in the LLM provider",
            None,
            LLMUnknownModel,
            "model",
            "which provider",
        ),
        ("ContextWindowExceededError", "too long", None, LLMContextTooLong, "context", "context window"),
        (
            "BadRequestError",
            "Requested tokens (3000) exceed context window of 2048",
            None,
            LLMContextTooLong,
            "context",
            "context window",
        ),
        (
            "BadRequestError",
            "tools are not supported by this model",
            None,
            LLMToolsRefused,
            "tools_unsupported",
            "tool",
        ),
        (
            "MidStreamFallbackError",
            "incomplete chunked read",
            None,
            LLMStreamCut,
            "stream_cut",
            "broke off",
        ),
        (
            "MidStreamFallbackError",
            "peer closed connection without sending complete message body",
            None,
            LLMStreamCut,
            "stream_cut",
            "broke off its reply and closed the connection; it runs on this machine, so it may have crashed",
        ),
        (
            "InternalServerError",
            "OpenAIException - Connection error. Server disconnected without sending a response.",
            None,
            LLMConnectionClosed,
            "connection",
            "closed the connection without answering; it runs on this machine, so it may have crashed",
        ),
        (
            "MidStreamFallbackError",
            "Expecting property name enclosed in double quotes",
            None,
            LLMMalformedReply,
            "malformed",
            "not valid JSON",
        ),
        ("APIConnectionError", "Connection refused", None, LLMConnectError, "connection", "Cannot reach"),
        ("APIConnectionError", "reset by peer", None, LLMNetworkError, "connection", "check the network"),
        (
            "InternalServerError",
            "OpenAIException - Missing credentials. Please pass an `api_key`",
            None,
            LLMAuthError,
            "auth",
            "No API key",
        ),
        (
            "InternalServerError",
            "OpenAIException - Connection error.",
            None,
            LLMConnectError,
            "connection",
            "Cannot reach",
        ),
    ],
)
def test_litellm_errors_map_to_one_plain_sentence(lib, name, message, status, cls, kind, words, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a provider that refuses a key was sent one
    mapped = map_error(
        make(lib, name, message, status),
        lib,
        model="openai/test",
        api_base="http://127.0.0.1:9/v1",
        timeout=30,
        sent_tools=True,
    )
    assert type(mapped) is cls and mapped.kind == kind
    text = str(mapped)
    assert words in text
    assert "\n" not in text and "Traceback" not in text and text.endswith((".", "?"))


@pytest.mark.parametrize(
    ("model", "env", "key_given", "sentence"),
    [
        (
            "anthropic/claude-3-5-haiku-latest",
            {},
            False,
            "No API key was found for anthropic/claude-3-5-haiku-latest: set ANTHROPIC_API_KEY (or "
            "PYAICHAT_API_KEY).",
        ),
        (
            "anthropic/claude-3-5-haiku-latest",
            {"ANTHROPIC_API_KEY": "sk-ant-bad"},
            False,
            "The provider rejected the API key for anthropic/claude-3-5-haiku-latest: check "
            "ANTHROPIC_API_KEY (or PYAICHAT_API_KEY).",
        ),
        (
            "anthropic/claude-3-5-haiku-latest",
            {},
            True,
            "The provider rejected the API key for anthropic/claude-3-5-haiku-latest: check "
            "PYAICHAT_API_KEY.",
        ),
        (
            "gemini/gemini-1.5-flash",
            {},
            False,
            "No API key was found for gemini/gemini-1.5-flash: set GOOGLE_API_KEY or GEMINI_API_KEY (or "
            "PYAICHAT_API_KEY).",
        ),
    ],
)
def test_a_key_refused_or_missing_is_named_by_the_providers_own_variable(
    lib, model, env, key_given, sentence, monkeypatch
):
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    exc = make(lib, "AuthenticationError", "invalid x-api-key", 401)
    mapped = map_error(exc, lib, model=model, api_base=None, timeout=30, sent_tools=True, key_given=key_given)
    assert type(mapped) is LLMAuthError and str(mapped) == sentence
    assert "OPENAI_API_KEY" not in str(mapped)


def test_a_remote_provider_that_hangs_up_is_not_called_crashed(lib):
    exc = make(
        lib, "InternalServerError", "Connection error. Server disconnected without sending a response."
    )
    mapped = map_error(
        exc, lib, model="openai/test", api_base="https://api.example.com/v1", timeout=30, sent_tools=False
    )
    assert type(mapped) is LLMConnectionClosed and mapped.retryable and not mapped.local
    assert "closed the connection" in str(mapped) and "crash" not in str(mapped)


def test_a_server_found_dead_on_retry_is_reported_as_closed_not_unreachable():
    failures = Attempts(
        LLMConnectionClosed("The model server at X closed the connection without answering.", local=True),
        LLMConnectError("Cannot reach the provider at X: is the server running and the address right?"),
    )
    with pytest.raises(LLMConnectionClosed) as info:
        ChatStream(failures, Retry(retries=2, backoff=0.0, sleep=lambda s: None), 30).reply()
    assert str(info.value).startswith("The model server at X closed the connection")
    assert "nothing answers there any more" in str(info.value) and "Cannot reach" not in str(info.value)


def test_an_unknown_exception_is_a_provider_error_with_its_own_words(lib):
    mapped = map_error(
        ValueError("litellm.Oddity: strange"), lib, model="m", api_base=None, timeout=5, sent_tools=False
    )
    assert type(mapped) is LLMProviderError and str(mapped) == "The model call failed: strange."


def test_the_error_tree_says_what_may_be_retried():
    assert issubclass(LLMTimeout, LLMTransportError) and issubclass(LLMStreamCut, LLMTransportError)
    assert issubclass(LLMAuthError, LLMProviderError) and issubclass(NoModelConfigured, LLMSetupError)
    retryable = {c for c in (LLMRateLimited, LLMServerError, LLMTimeout, LLMStreamCut, LLMNetworkError)}
    for cls in (
        *retryable,
        LLMAuthError,
        LLMConnectError,
        LLMToolsRefused,
        LLMContextTooLong,
        LLMUnknownModel,
    ):
        assert cls("x").retryable == (cls in retryable) and isinstance(cls("x"), LLMError)


def test_no_model_is_refused_before_any_import():
    with pytest.raises(NoModelConfigured) as info:
        LiteLLMClient(Config())
    assert info.value.kind == "no_model" and str(info.value) == NO_MODEL


def test_explicit_tool_protocol_needs_no_litellm():
    def never() -> Any:
        raise AssertionError("litellm was loaded")

    loader = Loader(never)
    assert LiteLLMClient(Config(model="m", tool_protocol="text"), loader=loader).tool_protocol() == "text"
    assert LiteLLMClient(Config(model="m", tool_protocol="native"), loader=loader).tool_protocol() == "native"
    assert loader.thread is None


# -- the one retry budget ------------------------------------------------------------------------------------
class Attempts:
    """A scripted ``Call``: each attempt is a reply, an error raised on sending, or (text, error): the text
    streams, then the error is raised while reading."""

    def __init__(self, *items: Any) -> None:
        self.items = list(items)
        self.made = 0
        self.current: Any = None

    def open(self, timeout: float) -> Any:
        self.made += 1
        item = self.current = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, tuple):
            return self._failing(*item)
        return iter([item.text] if item.text else [])

    @staticmethod
    def _failing(text: str, error: BaseException) -> Any:
        yield text
        raise error

    def failed(self, exc: Exception, timeout: float) -> LLMError:
        raise AssertionError("scripted errors are LLMErrors already")

    def text(self, chunk: str) -> str:
        return chunk

    def why(self, exc: LLMError) -> str:
        return exc.kind

    def close(self, response: Any) -> None:
        pass

    def reply(self, chunks: list[str], *, whole: bool, sent: bool) -> LLMReply:
        if whole:
            return LLMReply(text="".join(chunks), usage=Usage(10, len(chunks)))
        return LLMReply(
            text="".join(chunks), usage=Usage(10, len(chunks), estimated=True) if sent else Usage()
        )


def test_retries_back_off_stay_bounded_and_are_announced():
    waits: list[float] = []
    retry = Retry(retries=2, backoff=0.01, sleep=waits.append)
    busy = LLMRateLimited("busy")
    stream = ChatStream(Attempts(busy, busy, LLMReply(text="ok")), retry, 10)
    items = list(stream)
    assert items == [
        Retrying("rate_limit", 2, 3, 0.01),
        Retrying("rate_limit", 3, 3, 0.02),
        Receiving(),
        "ok",
    ]
    assert waits == [0.01, 0.02] and stream.reply().text == "ok"
    assert stream.reply().usage == Usage(10, 1)  # the refused attempts cost nothing
    failing = Attempts(busy, busy, busy, LLMReply(text="never"))
    with pytest.raises(LLMRateLimited):
        list(ChatStream(failing, retry, 10))
    assert failing.made == 3  # three attempts in all


def test_no_retry_after_text_was_shown_or_for_fatal_errors():
    retry = Retry(backoff=0.01, sleep=lambda s: None)
    cut = Attempts(("partial", LLMStreamCut("cut")), LLMReply(text="again"))
    stream = ChatStream(cut, retry, 10)
    shown: list[Any] = []
    with pytest.raises(LLMStreamCut):
        for item in stream:
            shown.append(item)
    assert shown == [Receiving(), "partial"]
    assert stream.reply().text == "partial" and stream.reply().usage.estimated  # it was sent: counted
    auth = Attempts(LLMAuthError("bad key"), LLMReply(text="x"))
    with pytest.raises(LLMAuthError):
        ChatStream(auth, retry, 10).reply()
    assert cut.made == auth.made == 1


def test_no_retry_when_the_deadline_is_too_close():
    attempts = Attempts(LLMRateLimited("busy"), LLMReply(text="ok"))
    with pytest.raises(LLMRateLimited):
        ChatStream(attempts, Retry(backoff=5.0, sleep=lambda s: None), 2).reply()


def test_a_timed_out_attempt_that_is_retried_still_counts():
    """The server had the prompt when the attempt timed out: it is paid for, whatever the retry brings."""
    attempts = Attempts(LLMTimeout("slow"), LLMReply(text="ok"))
    stream = ChatStream(attempts, Retry(backoff=0.01, sleep=lambda s: None), 10)
    assert stream.reply().text == "ok"
    assert stream.reply().usage == Usage(20, 1, estimated=True)


# -- reading a stream ----------------------------------------------------------------------------------------
def chunk(lib: Any, content: str | None = None, tool_calls: Any = None, finish: str | None = None) -> Any:
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    delta = Delta(content=content, tool_calls=tool_calls)
    return ModelResponseStream(choices=[StreamingChoices(delta=delta, finish_reason=finish)])


def call(index: int, name: str | None, arguments: str, call_id: str | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


class Canned(_Completion):
    """litellm's side of a completion, with the response's chunks given instead of fetched."""

    def __init__(self, chunks: Any) -> None:
        client = LiteLLMClient(Config(model="openai/gpt-4o-mini"))
        super().__init__(client, Request([{"role": "user", "content": "what is in df?"}], None, 64))
        self.chunks = chunks

    def open(self, timeout: float) -> Any:
        return iter(self.chunks)


def test_a_stream_is_read_piece_by_piece_and_assembled_by_litellm(lib):
    chunks = [
        chunk(lib, "Hel"),
        chunk(lib, "lo"),
        chunk(lib, tool_calls=[call(0, "get_repr", '{"ex', "a")]),
        chunk(lib, tool_calls=[call(1, "list_globals", "", "b")]),
        chunk(lib, tool_calls=[call(0, None, 'pr": "df"}')]),
        chunk(lib, finish="tool_calls"),
    ]
    stream = ChatStream(Canned(chunks), Retry(retries=0), 10)
    assert list(stream) == [Receiving(), "Hel", "lo"]
    reply = stream.reply()
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("a", "get_repr", '{"expr": "df"}'),
        ("b", "list_globals", "{}"),  # litellm writes no arguments as an empty object
    ]
    assert reply.text == "Hello" and reply.finish_reason == "tool_calls"


def test_a_stream_stops_where_its_reader_leaves_it_and_is_still_counted(lib):
    pulled: list[str] = []

    def response() -> Any:
        for piece in ("one ", "two ", "three"):
            pulled.append(piece)
            yield chunk(lib, piece)

    with ChatStream(Canned(response()), Retry(retries=0), 10) as stream:
        for item in stream:
            if item == "two ":
                break
    assert pulled == ["one ", "two "]  # nothing read after the reader left
    reply = stream.reply()
    assert reply.text == "one two "
    # no usage from the provider: the prompt and what arrived are counted here, and say so
    assert reply.usage.prompt_tokens > 5 and reply.usage.completion_tokens > 0 and reply.usage.estimated


# -- the loader ----------------------------------------------------------------------------------------------
def test_the_loader_loads_once_in_a_thread_that_shutdown_waits_for():
    calls: list[str] = []
    release = threading.Event()

    def load() -> str:
        calls.append(threading.current_thread().name)
        release.wait(5)
        return "library"

    loader = Loader(load)
    future = loader.start()
    assert loader.start() is future and not loader.loaded()
    assert loader.thread is not None and not loader.thread.daemon
    release.set()
    assert loader.get() == "library" and loader.loaded()
    assert calls == ["pyaichat-litellm-warmup"]


def test_a_failed_load_is_raised_to_whoever_waits():
    loader = Loader(lambda: (_ for _ in ()).throw(LLMSetupError("The assistant needs litellm.")))
    with pytest.raises(LLMSetupError):
        loader.get()
    assert not loader.loaded()


def modules_in(folder, *names: str) -> None:
    """Small modules ``names`` in ``folder``, importable (a load made of several imports, like litellm's)."""
    for name in names:
        (folder / f"{name}.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(folder))


def ran(name: str) -> bool:
    return getattr(sys.modules.get(name), "VALUE", None) == 1


@pytest.fixture
def folder(tmp_path):
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for path in tmp_path.glob("*.py"):
        sys.modules.pop(path.stem, None)


def test_the_load_gives_way_between_its_modules_while_the_person_is_busy(folder):
    names = ("giveway_one", "giveway_two")
    modules_in(folder, *names)
    busy = threading.Event()
    busy.set()
    loader = Loader(lambda: [importlib.import_module(name) for name in names])
    loader.give_way_to(busy.is_set)
    loader.start()
    time.sleep(0.3)
    assert not any(ran(name) for name in names)  # paused before its first module runs
    busy.clear()  # the person stops typing: it goes on
    assert [m.VALUE for m in loader.get()] == [1, 1] and loader.paused_s >= 0.25


def test_a_paused_load_never_holds_up_another_thread_s_imports(folder):
    """The pause is not inside a finder, where the import system holds its global lock: the prompt's next
    import went through the finders and waited for the pause (a prompt that never came back)."""
    modules_in(folder, "giveway_four", "giveway_five")
    loader = Loader(lambda: importlib.import_module("giveway_four"))
    loader.give_way_to(lambda: True)
    loader.start()
    time.sleep(0.2)
    other = threading.Thread(target=importlib.import_module, args=("giveway_five",), daemon=True)
    began = time.perf_counter()
    other.start()
    other.join(5)
    assert not other.is_alive() and time.perf_counter() - began < 2 and ran("giveway_five")
    assert not ran("giveway_four")  # still giving way
    assert loader.get().VALUE == 1


def test_the_load_goes_on_when_the_prompt_waits_for_a_module_it_is_importing(folder):
    modules_in(folder, "giveway_six")
    loader = Loader(lambda: importlib.import_module("giveway_six"))
    loader.give_way_to(lambda: True)
    loader.start()
    time.sleep(0.2)
    began = time.perf_counter()
    assert importlib.import_module("giveway_six").VALUE == 1  # the main thread waits on its module lock
    assert time.perf_counter() - began < 3
    loader.get()


def test_someone_waiting_for_the_load_ends_its_giving_way(folder):
    """Once a question waits for litellm, it is what the person waits for: busy or not, it loads."""
    modules_in(folder, "giveway_three")
    loader = Loader(lambda: importlib.import_module("giveway_three"))
    loader.give_way_to(lambda: True)  # the person never stops being busy
    loader.start()
    time.sleep(0.2)
    assert not ran("giveway_three")
    assert loader.get().VALUE == 1


def test_a_count_never_waits_for_the_load():
    """Counting before litellm is loaded estimates instead (a turn remembered after Ctrl-C during the load was
    sized by litellm: the next prompt waited for the whole load)."""
    release = threading.Event()
    loader = Loader(lambda: release.wait(30))
    client = LiteLLMClient(Config(model="openai/m"), loader=loader)
    loader.start()
    try:
        began = time.perf_counter()
        assert client.count_tokens([{"role": "user", "content": "hello there"}], None) > 0
        assert time.perf_counter() - began < 1 and not loader.loaded()
    finally:
        release.set()
        loader.get()


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
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
            env=_no_network_env(),
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
