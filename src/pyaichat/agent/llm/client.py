"""The litellm client: one streamed chat completion per call, read into an ``LLMReply``.

Reading a stream: each text piece goes to ``on_text`` as it arrives, and ``on_text`` may stop the stream there
(a ``Cut``: the reply is then what came before, not an error). The chunks are assembled by litellm's own
``stream_chunk_builder``. Every failure becomes one ``LLMError`` with a sentence for the user (``errors``).

Retries: pyaichat owns the one retry budget (``Retry``). litellm's own (``num_retries``) and the OpenAI SDK's
(``max_retries``, two on 429/5xx by default) are both turned off on every request, so a retryable failure is
tried at most ``retries + 1`` times in all, never past the request's deadline, and never once text has
reached the user (a retry would show it twice).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import LLMConnectError, LLMConnectionClosed, LLMError, LLMToolsRefused, NoModelConfigured
from .errors import NO_MODEL, map_error
from .loader import LITELLM, Loader
from .types import Cut, LLMReply, Messages, OnText, ProtocolName, Request, ToolCall, Tools, Usage
from .window import Window, is_ollama, window_in_error

if TYPE_CHECKING:
    from ...config import Config

TOKEN_MARGIN = 1.1  # another model's tokenizer may count a little differently from the one litellm uses


@dataclass
class Retry:
    """The one retry budget of a model call: ``retries`` more attempts on a retryable error, waiting
    ``backoff`` seconds, then twice that, and so on (tests pass a tiny ``backoff``)."""

    retries: int = 2
    backoff: float = 1.0
    sleep: Callable[[float], None] = time.sleep

    def run(self, attempt: Callable[[OnText, float], LLMReply], on_text: OnText, timeout: float) -> LLMReply:
        """``attempt(on_text, seconds_left)`` until it returns, or raise its last error."""
        deadline = time.monotonic() + timeout
        shown = False

        def relay(piece: str) -> Cut | None:
            nonlocal shown
            shown = True
            return on_text(piece)

        tries = 0
        closed: LLMConnectionClosed | None = None
        while True:
            try:
                return attempt(relay, max(deadline - time.monotonic(), 0.1))
            except LLMError as exc:
                if isinstance(exc, LLMConnectError) and closed is not None:
                    # it hung up on us, and now nothing listens: say the first, which says why
                    raise LLMConnectionClosed(
                        f"{closed} Asked again, nothing answers there any more.", local=closed.local
                    ) from exc
                if isinstance(exc, LLMConnectionClosed):
                    closed = exc
                wait = self.backoff * (2**tries)
                time_left = deadline - time.monotonic() > wait + 0.5
                if not exc.retryable or shown or tries >= self.retries or not time_left:
                    raise
                tries += 1
                self.sleep(wait)


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
        system prompt first.
        """
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
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
    def complete(self, request: Request, *, on_text: OnText, timeout: float) -> LLMReply:
        try:
            return self.retry.run(lambda relay, left: self._once(request, relay, left), on_text, timeout)
        except LLMToolsRefused:
            self._tools_refused = True
            raise

    def _once(self, request: Request, on_text: OnText, timeout: float) -> LLMReply:
        lib = self._lib()
        kwargs = self.request_kwargs(request)
        kwargs.update(
            stream=True,
            stream_options={"include_usage": True},
            timeout=whole_seconds(timeout),
            max_retries=0,  # the OpenAI SDK's retries: off, ``Retry`` owns the budget
            num_retries=0,  # litellm's retries: off, likewise
            drop_params=True,
        )
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.config.api_key_value:
            kwargs["api_key"] = self.config.api_key_value
        response = None
        try:
            response = lib.completion(**kwargs)
            chunks, cut = _read_stream(response, on_text)
            built = lib.stream_chunk_builder(chunks) if chunks else None
        except Exception as exc:
            window = window_in_error(exc)
            if window:
                self.window.learn(window)
            raise map_error(
                exc,
                lib,
                model=self.model,
                api_base=self.api_base,
                timeout=timeout,
                sent_tools=bool(request.tools),
            ) from None
        finally:
            _close(response)
        reply = _reply_of(built, cut)
        reply.usage.cost_usd = self._cost(lib, reply.usage)
        if request.tools and not reply.tool_calls and cut is None:
            reply.tools_unseen = self._tools_were_unseen(request, reply.usage.prompt_tokens)
            self._tools_unseen = self._tools_unseen or reply.tools_unseen
        return reply

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


def _read_stream(response: Any, on_text: OnText) -> tuple[list[Any], Cut | None]:
    """The stream's chunks, with each text piece handed to ``on_text`` on arrival; stops where it says."""
    chunks: list[Any] = []
    for chunk in response:
        chunks.append(chunk)
        for choice in getattr(chunk, "choices", None) or ():
            piece = getattr(getattr(choice, "delta", None), "content", None)
            if piece:
                cut = on_text(piece)
                if cut is not None:
                    return chunks, cut
    return chunks, None


def _reply_of(built: Any, cut: Cut | None) -> LLMReply:
    """An ``LLMReply`` from the response ``stream_chunk_builder`` assembled (``None``: nothing arrived)."""
    if built is None or not built.choices:
        return LLMReply(cut=cut)
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
        usage=Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)) if usage else Usage(),
        finish_reason=choice.finish_reason,
        cut=cut,
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
