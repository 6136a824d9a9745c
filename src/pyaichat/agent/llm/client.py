"""The litellm client: what the loop asks of a model, and one streamed chat completion per request.

``LiteLLMClient.stream`` hands out a ``ChatStream`` (``stream``) over a ``_Completion``: the request as
litellm sends it, its chunks assembled by litellm's own ``stream_chunk_builder``. Every failure becomes one
``LLMError`` with a sentence for the user (``errors``). Retries are the stream's (``Retry``).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ...errors import (
    LLMConnectionClosed,
    LLMError,
    LLMNetworkError,
    LLMStreamCut,
    LLMTimeout,
    LLMToolsRefused,
    NoModelConfigured,
)
from .errors import NO_MODEL, map_error
from .loader import LITELLM, Loader
from .stream import ChatStream, Retry
from .types import LLMReply, Messages, ProtocolName, Request, ToolCall, Tools, Usage
from .window import Window, is_ollama, window_in_error

if TYPE_CHECKING:
    from ...configuration.config import Config

TOKEN_MARGIN = 1.1  # another model's tokenizer may count a little differently from the one litellm uses
# Providers through which litellm passes Anthropic's ``cache_control`` marks on to a Claude model.
_CLAUDE_ELSEWHERE = frozenset({"bedrock", "vertex_ai"})


class LiteLLMClient:
    """Streams chat completions through litellm for the model ``config`` names."""

    def __init__(
        self,
        config: Config,
        *,
        loader: Loader = LITELLM,
        retries: int = 2,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not config.model:
            raise NoModelConfigured(NO_MODEL)
        self.config = config
        self.model: str = config.model
        self.api_base = config.api_base
        self.loader = loader
        self.retry = Retry(retries, backoff, sleep)
        self.window = Window(
            self.model,
            configured=config.context_window,
            api_base=self.api_base,
            table=lambda model: self._lib().get_model_info(model=model),
        )
        self._tools_refused = False  # the provider said no to tool schemas
        self._tools_unseen = False  # the server took them but never showed them to the model
        self._counts: dict[int, int | None] = {}
        self._marks: bool | None = None

    def _lib(self) -> Any:
        return self.loader.get()

    # -- what the loop asks before a request ---------------------------------------------------------------
    def prepare(self) -> None:
        """Finish loading litellm (usually warm already), so a turn's first step is not charged for it."""
        self._lib()

    def tool_protocol(self) -> ProtocolName:
        setting = self.config.tool_protocol
        if setting != "auto":
            return setting
        if self._tools_refused or self._tools_unseen:
            return "text"
        try:
            if self._lib().supports_function_calling(model=self.model):
                return "native"
        except LLMError:
            raise
        except Exception:
            pass
        # Unknown models behind an OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's /v1) mostly
        # accept tools; if this one refuses them, the session falls back to the text protocol.
        return "native" if self.model.startswith("openai/") else "text"

    def takes_cache_markers(self) -> bool:
        """Does the provider cache a prompt prefix only where ``cache_control`` marks it? (OpenAI, DeepSeek
        and llama.cpp servers cache without marks; others ignore them.)"""
        if self._marks is None:
            try:
                provider = str(self._lib().get_llm_provider(model=self.model)[1])
            except Exception:
                provider = ""
            claude = "claude" in self.model.lower()
            self._marks = provider == "anthropic" or (claude and provider in _CLAUDE_ELSEWHERE)
        return self._marks

    def supports_images(self) -> bool:
        try:
            return bool(self._lib().supports_vision(model=self.model))
        except Exception:
            return False

    def context_window(self) -> int:
        return self.window.tokens()

    def count_tokens(self, messages: Messages, tools: Tools | None) -> int:
        """Prompt tokens with the model's tokenizer where litellm has it (else tiktoken's), plus a margin for
        the server's own tokenizer; a rough count by characters when litellm cannot count at all."""
        count = self._litellm_count(messages, tools)
        if count is None:
            text = json.dumps([messages, tools], ensure_ascii=False, default=str)
            count = len(text) // 4 + 1
        return int(count * TOKEN_MARGIN) + 8

    def request_kwargs(self, request: Request) -> dict[str, Any]:
        """The request body pyaichat builds (what ``/sent`` shows), without credentials or transport.

        Ollama is told its window (``num_ctx``): left alone it silently cuts a longer prompt from the front,
        system prompt first. A provider that caches a prompt's prefix only where it is marked (Anthropic's
        Claude, also through Bedrock and Vertex AI) gets the mark on the system message: everything up to it
        is the stable prefix, the same bytes in every request of the session.
        """
        messages = request.messages
        if messages and messages[0].get("role") == "system" and self.takes_cache_markers():
            # the stable prefix (the tools, then the system prompt, in Anthropic's order) ends here
            messages = [{**messages[0], "cache_control": {"type": "ephemeral"}}, *messages[1:]]
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if request.tools:
            body["tools"] = request.tools
        body["max_tokens"] = request.max_tokens
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        if is_ollama(self.model):
            body["num_ctx"] = self.context_window()
        return body

    # -- one completion ------------------------------------------------------------------------------------
    def stream(self, request: Request, *, timeout: float) -> ChatStream:
        return ChatStream(_Completion(self, request), self.retry, timeout)

    def _tools_were_unseen(self, request: Request, reported: int) -> bool:
        """Notice a server that drops tool schemas silently (a chat template without tools, as llama.cpp
        servers use for many small models): the prompt it counted cannot hold them. In ``auto`` mode the
        session then uses the text protocol, which puts the tools in the system prompt where the model
        sees them."""
        if not reported or self.config.tool_protocol != "auto":
            return False
        with_tools = self._litellm_count(request.messages, request.tools)  # counted already, by the budget
        bare = self._litellm_count(request.messages, None)
        if with_tools is None or bare is None:
            return False
        schema_tokens = with_tools - bare
        # A count below the bare messages' is not a real count (a proxy, a fake): draw no conclusion from it.
        return schema_tokens >= 200 and bare * 0.7 <= reported < bare * 1.3 + schema_tokens * 0.3

    def _litellm_count(self, messages: Messages, tools: Tools | None) -> int | None:
        """litellm's count of a request (``None`` when it cannot count); the last few counts are kept, since a
        request is counted by the budget, again for its cap, and for the tools check."""
        if not self.loader.loaded():  # a count never waits for the load: after a Ctrl-C during it, the
            return None  # remembered turn was sized by litellm, and the next prompt waited the whole load
        key = hash(json.dumps([messages, tools], ensure_ascii=False, default=str))
        if key not in self._counts:
            try:
                count: int | None = int(
                    self._lib().token_counter(model=self.model, messages=messages, tools=tools)
                )
            except LLMError:
                raise
            except Exception:
                count = None
            if len(self._counts) >= 16:
                self._counts.clear()
            self._counts[key] = count
        return self._counts[key]

    def _cost(self, lib: Any, usage: Usage) -> float | None:
        """Price of one call from litellm's local price table; ``None`` when the model is not in it."""
        if not (usage.prompt_tokens or usage.completion_tokens):
            return None
        try:
            prompt, completion = lib.cost_per_token(
                model=self.model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
            return float(prompt) + float(completion)
        except Exception:
            return None


def whole_seconds(timeout: float) -> int:
    """A request's timeout rounded up to whole seconds. litellm keys its cache of HTTP clients on the
    timeout among other things: a timeout that differed at every request (the time left before the turn's
    deadline) would build a new client, and open a new connection, for each one and keep up to 200 of them
    alive. Rounded, the requests of a session share one client; the turn's deadline is still checked
    between streamed pieces, so a second more here stops nothing later."""
    return max(1, math.ceil(timeout))


class _Completion:
    """One request of ``client`` through litellm: the ``Call`` a ``ChatStream`` sends and reads."""

    def __init__(self, client: LiteLLMClient, request: Request) -> None:
        self.client = client
        self.request = request
        self.status: int | None = None  # of the last failure, when it was an HTTP status

    def open(self, timeout: float) -> Iterable[Any]:
        client = self.client
        lib = client._lib()
        kwargs = client.request_kwargs(self.request)
        kwargs.update(
            stream=True,
            stream_options={"include_usage": True},
            timeout=whole_seconds(timeout),
            max_retries=0,  # the OpenAI SDK's retries: off, ``Retry`` owns the budget
            num_retries=0,  # litellm's retries: off, likewise
            drop_params=True,
        )
        if client.api_base:
            kwargs["api_base"] = client.api_base
        if client.config.api_key_value:
            kwargs["api_key"] = client.config.api_key_value
        try:
            return lib.completion(**kwargs)
        except Exception as exc:
            raise self.failed(exc, timeout) from None

    def failed(self, exc: Exception, timeout: float) -> LLMError:
        client = self.client
        window = window_in_error(exc)
        if window:
            client.window.learn(window)
        status = getattr(exc, "status_code", None)
        self.status = status if isinstance(status, int) else None
        error = map_error(
            exc,
            client._lib(),
            model=client.model,
            api_base=client.api_base,
            timeout=timeout,
            sent_tools=bool(self.request.tools),
            key_given=bool(client.config.api_key_value),
        )
        if isinstance(error, LLMToolsRefused):
            client._tools_refused = True
        return error

    def text(self, chunk: Any) -> str:
        for choice in getattr(chunk, "choices", None) or ():
            piece = getattr(getattr(choice, "delta", None), "content", None)
            if piece:
                return str(piece)
        return ""

    def why(self, exc: LLMError) -> str:
        if isinstance(exc, LLMTimeout):
            return "a timeout"
        if isinstance(exc, LLMStreamCut):
            return "a reply broken off"
        if isinstance(exc, LLMConnectionClosed):
            return "a closed connection"
        if isinstance(exc, LLMNetworkError):
            return "a network error"
        return f"HTTP {self.status}" if self.status else exc.kind.replace("_", " ")

    def close(self, response: Any) -> None:
        _close(response)

    def reply(self, chunks: list[Any], *, whole: bool, sent: bool) -> LLMReply:
        client, request = self.client, self.request
        lib = client._lib()
        counted: list[int] = []  # litellm asks for the prompt's tokens only when the provider sent none

        def prompt_tokens() -> int:
            count = client._litellm_count(request.messages, request.tools)
            counted.append(
                count if count is not None else client.count_tokens(request.messages, request.tools)
            )
            return counted[-1]

        built = None
        if chunks:
            try:
                built = lib.stream_chunk_builder(chunks, count_prompt_tokens=prompt_tokens)
            except Exception as exc:
                if whole:
                    raise self.failed(exc, 0) from None
                built = None  # a half-read reply that litellm cannot assemble: its text is still known
        if built is not None:
            reply = _reply_of(built)
        else:
            reply = LLMReply(text="".join(self.text(c) for c in chunks))
            if sent and not whole:
                prompt_tokens()
                reply.usage = Usage(counted[-1], _count_text(lib, client.model, reply.text))
        reply.usage.estimated = bool(counted)
        reply.usage.prefix_tokens = request.prefix_of(reply.usage.prompt_tokens)
        reply.usage.cost_usd = client._cost(lib, reply.usage)
        if whole and request.tools and not reply.tool_calls:
            reply.tools_unseen = client._tools_were_unseen(request, reply.usage.prompt_tokens)
            client._tools_unseen = client._tools_unseen or reply.tools_unseen
        return reply


def _count_text(lib: Any, model: str, text: str) -> int:
    if not text:
        return 0
    try:
        return int(lib.token_counter(model=model, text=text, count_response_tokens=True))
    except Exception:
        return len(text) // 4 + 1


def _reply_of(built: Any) -> LLMReply:
    """An ``LLMReply`` from the response ``stream_chunk_builder`` assembled."""
    if not built.choices:
        return LLMReply()
    choice = built.choices[0]
    message = choice.message
    calls = [
        ToolCall(tc.id or f"call_{i}", tc.function.name or "", tc.function.arguments or "")
        for i, tc in enumerate(message.tool_calls or ())
    ]
    usage = getattr(built, "usage", None)
    return LLMReply(
        text=message.content or "",
        tool_calls=calls,
        usage=_usage_of(usage) if usage else Usage(),
        finish_reason=choice.finish_reason,
    )


def _usage_of(usage: Any) -> Usage:
    """The provider's count, with the prompt tokens it read from its prompt cache when it says (OpenAI's
    ``cached_tokens``; litellm reports Anthropic's ``cache_read_input_tokens`` there too)."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None)
    return Usage(
        int(usage.prompt_tokens or 0),
        int(usage.completion_tokens or 0),
        cached_tokens=int(cached) if isinstance(cached, int) else 0,
    )


def _close(response: Any) -> None:
    """Release the HTTP connection of an abandoned stream (after a cut, Ctrl-C or an error)."""
    for obj in (response, getattr(response, "completion_stream", None)):
        closer = getattr(obj, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:
                pass


def forget_connections() -> list[Any]:
    """In a session forked from a checkpoint: litellm's pooled clients hold connections that the process it
    was forked from uses too (and a TLS connection's state is in that process's memory). Let go of them
    without closing them, so the next request opens its own; returns what was let go, for the caller to
    keep (a finalizer here must not close what the other process still uses)."""
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    kept: list[Any] = []
    for name in ("cache_dict", "ttl_dict"):
        table = getattr(cache, name, None)
        if isinstance(table, dict):
            kept.append(dict(table))
            table.clear()
    return kept
