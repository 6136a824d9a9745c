"""The LLM client: the only module that imports litellm.

litellm costs ~3–4 s to import, so it is loaded lazily (and warmed in a background thread once the user enters
Assistant mode). ``LiteLLMClient.complete`` streams one chat completion, reassembles text and tool calls,
retries 429/5xx/timeouts with a bounded backoff, and turns every failure into an ``LLMError`` whose message
is one sentence the user can act on. The rest of the agent talks to the small ``LLM`` protocol, so tests can
swap in a scripted fake.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import LLMError

if TYPE_CHECKING:
    from ..config import Config

NO_MODEL = (
    "No model is configured: choose one with /model <name>, the --model flag, the PYAICHAT_MODEL variable "
    'or model = "…" in the config file.'
)


@dataclass
class ToolCall:
    """One tool call as the model wrote it; ``arguments`` is raw JSON text (it may be broken)."""

    id: str
    name: str
    arguments: str


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class LLMReply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


class LLM(Protocol):
    """What the loop needs from a model client."""

    model: str

    def native_tools(self) -> bool:
        """True to send tool schemas natively; False to use the text protocol."""
        ...

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        on_text: Callable[[str], None],
        timeout: float,
    ) -> LLMReply: ...


# -- lazy import and warm-up ---------------------------------------------------------------------------------
_litellm: Any = None
_import_lock = threading.Lock()
_warm_thread: threading.Thread | None = None
_warm_done: threading.Event | None = None  # set when the warm-up thread has finished


def load_litellm() -> Any:
    """litellm, imported once, without a network fetch of its price list and without its feedback banner.

    From the main thread the import runs in the warm-up thread and is waited for: Ctrl-C during an import
    in the main thread would stop it half-way and leave a broken litellm for the rest of the session
    ("has no attribute ..."). Ctrl-C ends the wait instead, while the import finishes in the background.
    The wait also covers the warm-up's priming, so the main thread never uses litellm, or exits, while the
    warm-up thread is still importing its lazy parts (an exit in that window hangs in litellm's finalizers).

    The wait polls an event with ``time.sleep``, not ``Thread.join``: a join interrupted by Ctrl-C can leave
    a running thread marked as finished, and then neither this wait nor interpreter shutdown waits for it.
    """
    done = _warm_done
    if _litellm is not None and (done is None or done.is_set()):
        return _litellm  # the usual case, once warm
    if threading.current_thread() is threading.main_thread():
        if _litellm is None:
            warm_up()
            done = _warm_done
        while done is not None and not done.is_set():
            time.sleep(0.05)
    elif _litellm is not None:
        return _litellm
    return _import_litellm()  # normally done; a failed warm-up import raises its error here


def _import_litellm() -> Any:
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            try:
                import litellm
            except ImportError as exc:  # pragma: no cover - litellm is a hard dependency
                raise LLMError(f"The assistant needs litellm, which cannot be imported: {exc}.", kind="setup")
            litellm.suppress_debug_info = True
            litellm.telemetry = False
            # token_counter would fetch some tokenizers from the Hugging Face hub: no network from here.
            litellm.disable_hf_tokenizer_download = True
            _litellm = litellm
    return _litellm


_primed = False


def prime() -> None:
    """Load what litellm imports lazily on its first real request (~1–2 s: the OpenAI SDK, httpx, httpcore,
    h2, its stream handler) without any network traffic: a mock completion and an unused client object."""
    global _primed
    litellm = load_litellm()  # from the main thread this waits for the warm-up thread, which primes too
    if _primed:
        return
    _primed = True
    try:
        import importlib

        for name in ("httpcore", "h2.connection", "litellm.llms.openai.openai"):
            importlib.import_module(name)
        import openai

        openai.OpenAI(api_key="unused", base_url="http://127.0.0.1/v1").chat.completions  # noqa: B018
        stream = litellm.completion(
            model="openai/warm-up",
            messages=[{"role": "user", "content": "-"}],
            mock_response="-",
            stream=True,
        )
        for _ in stream:
            pass
    except Exception:  # priming is an optimisation only
        pass


def warm_up() -> None:
    """Start importing litellm in a background thread (once), so the first question does not wait for it."""
    global _warm_thread, _warm_done
    with _import_lock:
        if _litellm is not None or _warm_thread is not None:
            return
        done = _warm_done = threading.Event()

        def target() -> None:
            try:
                prime()
            except Exception:  # the first real question reports the problem
                pass
            finally:
                done.set()

        # Not a daemon: interpreter shutdown waits for it (a few seconds at most). A daemon frozen at exit
        # while holding an import lock deadlocks the exit when litellm's finalizers import something.
        _warm_thread = threading.Thread(target=target, name="pyaichat-litellm-warmup", daemon=False)
        _warm_thread.start()


def is_loaded() -> bool:
    return _litellm is not None


# -- the real client -----------------------------------------------------------------------------------------
class LiteLLMClient:
    """Streams chat completions through litellm.

    ``retries`` is the number of extra attempts on retryable failures (the OpenAI client's own retries are
    turned off with ``max_retries=0`` so the total stays ``retries + 1``); ``backoff`` is the first wait in
    seconds, doubled each time. Tests pass a tiny ``backoff``.
    """

    def __init__(
        self,
        config: Config,
        *,
        retries: int = 2,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not config.model:
            raise LLMError(NO_MODEL, kind="no_model")
        self.config = config
        self.model: str = config.model
        self.api_base = config.api_base
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self._tools_rejected = False
        self.tools_ignored = False  # the server accepted tool schemas but never showed them to the model
        self._window: int | None = None
        self._count_cache: tuple[int | None, int | None] = (None, None)

    def prepare(self) -> None:
        """Finish loading litellm (usually warm already), so a turn's first step is not charged for it."""
        prime()

    def native_tools(self) -> bool:
        protocol = getattr(self.config, "tool_protocol", "auto")
        if protocol != "auto":
            return protocol == "native"
        if self._tools_rejected or self.tools_ignored:
            return False
        litellm = load_litellm()
        try:
            if litellm.supports_function_calling(model=self.model):
                return True
        except Exception:
            pass
        # Unknown models behind an OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's /v1) mostly
        # accept tools; if this one refuses them, the loop falls back to the text protocol for the session.
        return self.model.startswith("openai/")

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        on_text: Callable[[str], None],
        timeout: float,
    ) -> LLMReply:
        deadline = time.monotonic() + timeout
        attempt = 0
        streamed = [False]  # once text reached the user, a retry would repeat it: no retry then

        def relay(text: str) -> None:
            streamed[0] = True
            on_text(text)

        while True:
            remaining = deadline - time.monotonic()
            try:
                return self._once(messages, tools, relay, max(remaining, 0.1))
            except LLMError as exc:
                if exc.kind == "tools_unsupported" and tools:
                    self._tools_rejected = True
                    raise
                wait = self.backoff * (2**attempt)
                can_wait = deadline - time.monotonic() > wait + 0.5
                if not exc.retryable or streamed[0] or attempt >= self.retries or not can_wait:
                    raise
                attempt += 1
                self._sleep(wait)

    def request_kwargs(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The request body pyaichat builds (what ``/sent`` shows), without credentials or transport.

        Every request carries a completion cap: ``max_tokens`` from the settings, lowered so that prompt and
        answer fit the model's window together. Ollama is told its window (``num_ctx``): left alone it
        silently cuts a longer prompt from the front, system prompt first.
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        body["max_tokens"] = self.answer_cap(messages, tools)
        cfg = self.config
        if getattr(cfg, "temperature", None) is not None:
            body["temperature"] = cfg.temperature
        if getattr(cfg, "seed", None) is not None:
            body["seed"] = cfg.seed
        if is_ollama(self.model):
            body["num_ctx"] = self.context_window()
        return body

    # -- the context window --------------------------------------------------------------------------------
    def context_window(self) -> int:
        """The model's context window in tokens: the setting, the server's word, litellm's table, or a guess.

        Asked once per client. A llama.cpp server reports its window on ``/props`` (``n_ctx``); vLLM on
        ``/v1/models`` (``max_model_len``); a server that says nothing is taken to have ``DEFAULT_WINDOW``
        until a refusal tells the real figure (``learn_window``).
        """
        if self._window is None:
            configured = getattr(self.config, "context_window", None)
            self._window = configured or self._server_window() or self._litellm_window() or DEFAULT_WINDOW
        return self._window

    def learn_window(self, tokens: int) -> None:
        """The server named its real window in an error: use it from now on."""
        if tokens >= 256 and not getattr(self.config, "context_window", None):
            self._window = tokens

    def _litellm_window(self) -> int | None:
        if is_ollama(self.model):
            return None  # litellm knows the model's training window; Ollama serves num_ctx, which we set
        try:
            info = load_litellm().get_model_info(model=self.model)
        except Exception:
            return None
        window = info.get("max_input_tokens") or info.get("max_tokens")
        return int(window) if window else None

    def _server_window(self) -> int | None:
        if not self.api_base or is_ollama(self.model):
            return None
        return probe_server_window(self.api_base, self.model, timeout=2.0)

    def count_tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """Prompt tokens of a request, with the model's tokenizer where litellm has it (else tiktoken's), plus
        a margin for the server's own tokenizer."""
        count = self._litellm_count(messages, tools)
        if count is None:
            from .context import approx_tokens

            count = approx_tokens(messages) + (approx_tokens(tools) if tools else 0)
        return int(count * TOKEN_MARGIN) + 8  # another model's tokenizer may count a little differently

    def _litellm_count(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> int | None:
        """litellm's count of a request (``None`` when it cannot count); the last request's count is kept,
        since each request is counted for ``/sent``, for sending and for the tools check."""
        key = _count_key(messages, tools)
        if key == self._count_cache[0]:
            return self._count_cache[1]
        try:
            count: int | None = int(
                load_litellm().token_counter(model=self.model, messages=messages, tools=tools)
            )
        except Exception:
            count = None
        self._count_cache = (key, count)
        return count

    def answer_cap(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """``max_tokens`` for this request: the setting, or less when the window has less room left."""
        cap = int(getattr(self.config, "max_tokens", 1024) or 1024)
        room = self.context_window() - self.count_tokens(messages, tools)
        return max(MIN_ANSWER_TOKENS, min(cap, room))

    def _once(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None],
        timeout: float,
    ) -> LLMReply:
        litellm = load_litellm()
        kwargs = self.request_kwargs(messages, tools)
        kwargs.update(stream=True, stream_options={"include_usage": True}, timeout=timeout, max_retries=0)
        kwargs["drop_params"] = True
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.config.api_key_value:
            kwargs["api_key"] = self.config.api_key_value
        response = None
        try:
            response = litellm.completion(**kwargs)
            reply = _read_stream(response, on_text)
        except LLMError:
            raise
        except Exception as exc:
            window = window_in_error(exc)
            if window:
                self.learn_window(window)
            raise map_error(exc, self.model, self.api_base, timeout, bool(tools)) from None
        finally:
            _close(response)
        reply.usage.cost_usd = self._cost(reply.usage)
        if tools and not reply.tool_calls:
            self._check_tools_reached_model(messages, tools, reply.usage.prompt_tokens)
        return reply

    def _check_tools_reached_model(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], reported: int
    ) -> None:
        """Notice a server that drops tool schemas silently (a chat template without tools, as llama.cpp
        servers use for many small models): the prompt it counted cannot hold them. In ``auto`` mode the
        session then uses the text protocol, which puts the tools in the system prompt where the model
        sees them."""
        if not reported or getattr(self.config, "tool_protocol", "auto") != "auto":
            return
        with_tools = self._litellm_count(messages, tools)  # counted already, for max_tokens
        bare = self._litellm_count(messages, None)
        if with_tools is None or bare is None:
            return
        schema_tokens = with_tools - bare
        # A count below the bare messages' is not a real count (a proxy, a fake): draw no conclusion from it.
        if schema_tokens >= 200 and bare * 0.7 <= reported < bare * 1.3 + schema_tokens * 0.3:
            self.tools_ignored = True

    def _cost(self, usage: Usage) -> float | None:
        """Price of one call from litellm's local price table; ``None`` when the model is not in it."""
        if not (usage.prompt_tokens or usage.completion_tokens):
            return None
        try:
            prompt, completion = load_litellm().cost_per_token(
                model=self.model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
            return float(prompt) + float(completion)
        except Exception:
            return None


DEFAULT_WINDOW = 8192  # a server that does not say: most local models today have at least this
MIN_ANSWER_TOKENS = 16
TOKEN_MARGIN = 1.1


def is_ollama(model: str) -> bool:
    return model.startswith(("ollama/", "ollama_chat/"))


def _count_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """A request is counted several times (for ``/sent``, for sending, for the tools check): hash it once."""
    import json

    return hash(json.dumps([messages, tools], ensure_ascii=False, default=str))


def probe_server_window(api_base: str, model: str, timeout: float = 2.0) -> int | None:
    """Ask an OpenAI-compatible server for its context window (llama.cpp ``/props``, vLLM ``/v1/models``).

    Only for a server the user named with ``api_base``; a short timeout, and any failure means "not said".
    """
    import json
    import urllib.request

    root = api_base.rstrip("/")
    root_no_v1 = root[:-3] if root.endswith("/v1") else root
    name = model.split("/", 1)[1] if "/" in model else model

    def get(url: str) -> Any:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                return json.loads(resp.read(200_000).decode("utf-8", "replace"))
        except Exception:
            return None

    props = get(root_no_v1 + "/props")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings") or {}
        n_ctx = settings.get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx
    models = get(root + "/models")
    entries = models.get("data") if isinstance(models, dict) else None
    if isinstance(entries, list):
        chosen = [m for m in entries if isinstance(m, dict) and m.get("id") == name] or [
            m for m in entries if isinstance(m, dict)
        ]
        for entry in chosen[:1]:
            meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
            for value in (entry.get("max_model_len"), entry.get("context_length"), meta.get("n_ctx")):
                if isinstance(value, int) and value > 0:
                    return value
    return None


_WINDOW_IN_ERROR = re.compile(
    r"(?:context window of|context length is|maximum context length is|n_ctx[ =:]+|context size[^0-9]{0,20})"
    r"\s*(\d{3,7})",
    re.I,
)


def window_in_error(exc: BaseException) -> int | None:
    """The window a server named when it refused a prompt ("exceed context window of 2048"), if any."""
    text = f"{exc} {getattr(exc, 'original_exception', '')}"
    m = _WINDOW_IN_ERROR.search(text)
    return int(m.group(1)) if m else None


def _close(response: Any) -> None:
    """Release the HTTP connection of an abandoned stream (after Ctrl-C or an error)."""
    for obj in (response, getattr(response, "completion_stream", None)):
        closer = getattr(obj, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:
                pass


def _read_stream(response: Any, on_text: Callable[[str], None]) -> LLMReply:
    """Reassemble a streamed completion: text pieces go to ``on_text`` as they arrive; tool calls by index."""
    reply = LLMReply()
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in response:
        usage = getattr(chunk, "usage", None)
        if usage:
            reply.usage.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            reply.usage.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "finish_reason", None):
                reply.finish_reason = choice.finish_reason
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            piece = getattr(delta, "content", None)
            if piece:
                text.append(piece)
                on_text(piece)
            for tc in getattr(delta, "tool_calls", None) or []:
                index = getattr(tc, "index", None)
                index = len(calls) if index is None else index
                slot = calls.setdefault(index, {"id": "", "name": "", "arguments": []})
                if getattr(tc, "id", None):
                    slot["id"] = tc.id
                fn = getattr(tc, "function", None)
                if fn is not None:
                    if getattr(fn, "name", None):
                        slot["name"] = fn.name
                    if getattr(fn, "arguments", None):
                        slot["arguments"].append(fn.arguments)
    reply.text = "".join(text)
    for index in sorted(calls):
        slot = calls[index]
        call_id = slot["id"] or f"call_{index}"
        reply.tool_calls.append(ToolCall(call_id, slot["name"], "".join(slot["arguments"])))
    return reply


# -- errors --------------------------------------------------------------------------------------------------
def map_error(
    exc: BaseException, model: str, api_base: str | None, timeout: float, sent_tools: bool
) -> LLMError:
    """One plain sentence per failure, chosen by status code first (a 401 may arrive as a BadRequestError)."""
    name = type(exc).__name__
    text = str(exc)
    low = text.lower()
    status = getattr(exc, "status_code", None)
    where = f"at {api_base}" if api_base else f"for {model}"
    original = getattr(exc, "original_exception", None)
    if original is not None:
        low += " " + str(original).lower()

    if name == "MidStreamFallbackError" or "midstream" in low:
        if "expecting" in low or "json" in low:
            return LLMError(
                f"The provider {where} sent a reply that is not valid JSON; try again.", kind="malformed"
            )
        return LLMError(
            f"The provider {where} broke off its reply in the middle; ask again.",
            kind="stream_cut",
            retryable=True,
        )
    if name == "ContextWindowExceededError" or "context length" in low or "context window" in low:
        return LLMError(
            f"The conversation is too long for {model}'s context window; /clear starts afresh.",
            kind="context",
        )
    # litellm reports some client-side failures as HTTP 500: recognise them by their words first.
    if "missing credentials" in low or ("api_key" in low and "must be set" in low) or "no api key" in low:
        return LLMError(
            f"No API key was found for {model}: set PYAICHAT_API_KEY or the provider's own variable "
            "(e.g. OPENAI_API_KEY).",
            kind="auth",
        )
    if any(words in low for words in _UNREACHABLE):
        return LLMError(
            f"Cannot reach the provider {where}: is the server running and the address right?",
            kind="connection",
        )
    if status in (401, 403) or name in ("AuthenticationError", "PermissionDeniedError"):
        return LLMError(
            f"The provider rejected the API key for {model}: check PYAICHAT_API_KEY or the provider's own "
            "variable (e.g. OPENAI_API_KEY).",
            kind="auth",
        )
    if status == 429 or name == "RateLimitError":
        return LLMError(
            f"The provider {where} is rate limiting requests; wait a moment and ask again.",
            kind="rate_limit",
            retryable=True,
        )
    if status == 408 or name in ("Timeout", "APITimeoutError") or "timed out" in low:
        return LLMError(
            f"The provider {where} did not answer within {timeout:.0f} s; "
            "ask again or raise request_timeout.",
            kind="timeout",
            retryable=True,
        )
    if status == 404 or name == "NotFoundError":
        return LLMError(
            f"The provider {where} does not know the model {model}; check it with /model.", kind="model"
        )
    if "llm provider not provided" in low or name == "LiteLLMUnknownProvider":
        return LLMError(
            f"pyaichat cannot tell which provider serves {model!r}: use a litellm model string such as "
            "gpt-4o-mini, anthropic/<model>, ollama/<model> or openai/<model> with --api-base.",
            kind="model",
        )
    if status == 400 or name in ("BadRequestError", "UnsupportedParamsError"):
        if sent_tools and ("tool" in low or "function" in low):
            return LLMError(f"{model} does not accept tool schemas.", kind="tools_unsupported")
        return LLMError(f"The provider refused the request: {_first_sentence(text)}", kind="bad_request")
    if (isinstance(status, int) and status >= 500) or name in (
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "APIError",
    ):
        return LLMError(
            f"The provider {where} failed (HTTP {status or 500}); try again in a moment.",
            kind="provider",
            retryable=True,
        )
    if name == "APIConnectionError" or "connection" in low:
        return LLMError(
            f"Cannot reach the provider {where}; check the network.", kind="connection", retryable=True
        )
    return LLMError(f"The model call failed: {_first_sentence(text)}", kind="provider")


def _first_sentence(text: str, limit: int = 200) -> str:
    """The provider's own message without litellm's class-name prefixes, cut to one line."""
    text = _PREFIX.sub("", " ".join(text.split()))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text if text.endswith((".", "!", "?", "…")) else text + "."


_UNREACHABLE = (
    "connection refused",
    "connection error",
    "errno 111",
    "name or service not known",
    "nodename nor servname",
    "no route to host",
    "temporary failure in name resolution",
)
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception\s*-\s*)+")
