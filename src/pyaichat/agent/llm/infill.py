"""One code-completion request for a ghost-text suggestion, through litellm.

Fill-in-the-middle is litellm's text completion (``atext_completion``, a ``prompt`` and a ``suffix``); any
other model gets a chat completion (``acompletion``). Both are awaited on the event loop of the suggestion
model's helper process (``infill_helper``), so cancelling the task aborts the HTTP request at once: the server
stops generating for a prefix the user has left. Not streamed — an answer is a line or a few, and the whole
reply carries its token usage. litellm is passed in and never imported here; a failure becomes the same
``LLMError`` sentence the assistant would show (``errors.map_error``), which the engine keeps for ``/trace``.

A request, an answer and an error cross the pipe to and from the helper as plain JSON (``to_wire`` /
``from_wire``); an error keeps its class and sentence.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from ... import errors
from ...errors import LLMError
from .errors import map_error


class CodeRequest:
    """What is sent: ``prompt``/``suffix`` (fill-in-the-middle) or ``messages`` (chat), and the bounds."""

    __slots__ = (
        "api_base",
        "api_key",
        "block",
        "kind",
        "max_tokens",
        "messages",
        "model",
        "prompt",
        "seed",
        "stop",
        "suffix",
        "temperature",
    )

    def __init__(
        self,
        kind: Literal["fim", "chat"],
        *,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        prompt: str = "",
        suffix: str = "",
        messages: list[dict[str, Any]] | None = None,
        max_tokens: int = 48,
        stop: list[str] | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        block: bool = False,
    ) -> None:
        self.kind, self.model, self.api_base, self.api_key = kind, model, api_base, api_key
        self.prompt, self.suffix, self.messages = prompt, suffix, messages or []
        self.max_tokens, self.stop, self.temperature, self.seed = max_tokens, stop or [], temperature, seed
        self.block = block

    def body(self) -> dict[str, Any]:
        """The request as sent, without credentials (``/suggest`` shows its size, tests read it)."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "stop": self.stop}
        if self.kind == "fim":
            body["prompt"] = self.prompt
            if self.suffix:
                body["suffix"] = self.suffix
        else:
            body["messages"] = self.messages
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def to_wire(self) -> dict[str, Any]:
        """Everything the helper process needs to send the request (the key included: the pipe is private
        to pyaichat and its own helper; the session's secrets were masked out of the text before this)."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CodeRequest:
        fields = {name: data[name] for name in cls.__slots__ if name in data and name != "kind"}
        return cls(data["kind"], **fields)


class CodeAnswer:
    __slots__ = ("completion_tokens", "cost_usd", "prompt_tokens", "text")

    def __init__(
        self, text: str, prompt_tokens: int = 0, completion_tokens: int = 0, cost_usd: float | None = None
    ) -> None:
        self.text, self.prompt_tokens, self.completion_tokens, self.cost_usd = (
            text,
            prompt_tokens,
            completion_tokens,
            cost_usd,
        )

    def to_wire(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CodeAnswer:
        cost = data.get("cost_usd")
        return cls(
            str(data.get("text") or ""),
            int(data.get("prompt_tokens") or 0),
            int(data.get("completion_tokens") or 0),
            None if cost is None else float(cost),
        )


def error_to_wire(exc: BaseException) -> dict[str, Any]:
    """An ``LLMError`` as its class name and sentence (anything else: a bug, named as one)."""
    if isinstance(exc, LLMError):
        return {"class": type(exc).__name__, "message": str(exc), "local": bool(getattr(exc, "local", False))}
    return {"class": None, "message": f"{type(exc).__name__}: {exc}"}


def error_from_wire(data: dict[str, Any]) -> Exception:
    """The error the helper process reported, as the same ``LLMError`` class (only a class of that tree:
    the name comes from another process)."""
    message = str(data.get("message") or "The suggestion model call failed.")
    cls = getattr(errors, str(data.get("class") or ""), None)
    if not (isinstance(cls, type) and issubclass(cls, LLMError)):
        return RuntimeError(f"in the suggestion helper: {message}")
    if issubclass(cls, errors.LLMConnectionClosed):
        return cls(message, local=bool(data.get("local")))
    try:
        return cls(message)
    except TypeError:  # a class with another signature: its sentence still says what happened
        return errors.LLMProviderError(message)


async def complete_code(lib: Any, request: CodeRequest, *, timeout: float) -> CodeAnswer:
    """Ask ``request`` with litellm (``lib``); raise an ``LLMError`` when it fails. Cancelling the awaiting
    task aborts the request."""
    kwargs = request.body()
    kwargs.update(timeout=timeout, max_retries=0, num_retries=0, drop_params=True)
    if request.api_base:
        kwargs["api_base"] = request.api_base
    if request.api_key:
        kwargs["api_key"] = request.api_key
    try:
        if request.kind == "fim":
            response = await lib.atext_completion(**kwargs)
            text = response.choices[0].text if response.choices else ""
        else:
            response = await lib.acompletion(**kwargs)
            text = response.choices[0].message.content if response.choices else ""
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise map_error(
            exc,
            lib,
            model=request.model,
            api_base=request.api_base,
            timeout=timeout,
            sent_tools=False,
            key_given=bool(request.api_key),
        ) from None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    return CodeAnswer(text or "", prompt_tokens, completion_tokens, _cost(lib, request, usage))


def _cost(lib: Any, request: CodeRequest, usage: Any) -> float | None:
    """From litellm's local price table; ``None`` for a model it has no price for (a local one)."""
    if usage is None:
        return None
    try:
        prompt, completion = lib.cost_per_token(
            model=request.model,
            prompt_tokens=int(usage.prompt_tokens or 0),
            completion_tokens=int(usage.completion_tokens or 0),
        )
        return float(prompt) + float(completion)
    except Exception:
        return None
