"""One streamed completion, pulled by its reader: ``for item in stream`` (the ``Stream`` of ``types``).

``ChatStream`` runs the attempts of one request. An attempt is opened by the client (a ``Call``: litellm in
``client``, a script in the tests), and its chunks are read one at a time as the reader asks for the next
item: text pieces go out as they arrive, with a ``Receiving`` note at the first chunk. The reader stops the
stream by leaving its loop and closing it (``with stream:``), which releases the connection; ``reply()`` is
then what came before. Nothing flows back from the reader into the stream.

Retries: pyaichat owns the one retry budget (``Retry``). litellm's own (``num_retries``) and the OpenAI SDK's
(``max_retries``, two on 429/5xx by default) are both turned off by the client, so a retryable failure is
tried at most ``retries + 1`` times in all, never past the request's deadline, and never once text has
reached the reader (a retry would show it twice). A retry is announced with a ``Retrying`` note before its
wait, so the user sees why nothing is happening.

Usage: the provider's own count when it sent one. A request that ended before that — stopped by the reader,
by Ctrl-C, at a timeout, or broken off — was still sent and is still paid for: its prompt and what arrived
are counted here (``Usage.estimated``). A request the server refused outright costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from ...errors import LLMConnectError, LLMConnectionClosed, LLMError, LLMTimeout
from .types import LLMReply, Receiving, Retrying, StreamItem, Usage


@dataclass
class Retry:
    """The one retry budget of a model call: ``retries`` more attempts on a retryable error, waiting
    ``backoff`` seconds, then twice that, and so on (tests pass a tiny ``backoff``)."""

    retries: int = 2
    backoff: float = 1.0
    sleep: Callable[[float], None] = time.sleep

    def wait(self, exc: LLMError, retried: int, *, shown: bool, left: float) -> float | None:
        """Seconds to wait before trying again after ``exc`` (``retried``: retries made so far; ``left``:
        seconds before the request's deadline), or ``None``: give up and raise it."""
        wait: float = self.backoff * (2**retried)
        if not exc.retryable or shown or retried >= self.retries or left <= wait + 0.5:
            return None
        return wait


class Call(Protocol):
    """One request as a model library sends it; ``ChatStream`` decides when to send it and how to read it."""

    def open(self, timeout: float) -> Iterable[Any]:
        """Send the request; its response, an iterable of chunks. Raises an ``LLMError``."""
        ...

    def failed(self, exc: Exception, timeout: float) -> LLMError:
        """The ``LLMError`` for an exception raised while reading the response."""
        ...

    def text(self, chunk: Any) -> str:
        """The text a chunk carries ("" for none)."""
        ...

    def why(self, exc: LLMError) -> str:
        """A few words on a failed attempt, for the retry note: "HTTP 503", "a timeout"."""
        ...

    def close(self, response: Any) -> None:
        """Release the response's connection (it may be half read)."""
        ...

    def reply(self, chunks: list[Any], *, whole: bool, sent: bool) -> LLMReply:
        """The reply the chunks make (``whole``: the response ran to its end). Its usage is the provider's, or
        counted when the request was ``sent`` (see the module docstring), else zero."""
        ...


class ChatStream:
    """``types.Stream`` over the attempts of one request (see the module docstring)."""

    def __init__(
        self, call: Call, retry: Retry, timeout: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._call = call
        self._retry = retry
        self._timeout = timeout
        self._clock = clock
        self._chunks: list[Any] = []  # of the current attempt
        self._whole = False  # the current attempt's response ran to its end
        self._sent = False  # the current attempt's request counts as sent (see ``Call.reply``)
        self._shown = False  # text reached the reader: no retry from then on
        self._spent = Usage()  # earlier attempts that were sent, then retried
        self._reply: LLMReply | None = None
        self._items = self._attempts()

    def __iter__(self) -> Iterator[StreamItem]:
        return self._items

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading; the connection is released and ``reply()`` keeps what arrived."""
        self._items.close()

    def reply(self) -> LLMReply:
        if self._reply is None:
            for _ in self._items:  # nothing left after the loop ended or ``close``; the rest otherwise
                pass
            reply = self._call.reply(self._chunks, whole=self._whole, sent=self._sent or bool(self._chunks))
            reply.usage = self._spent + reply.usage
            self._reply = reply
        return self._reply

    # -- the attempts ------------------------------------------------------------------------------------
    def _attempts(self) -> Generator[StreamItem, None, None]:
        deadline = self._clock() + self._timeout
        retried = 0
        closed: LLMConnectionClosed | None = None
        while True:
            try:
                yield from self._attempt(max(deadline - self._clock(), 0.1))
                return
            except LLMError as exc:
                if isinstance(exc, LLMConnectError) and closed is not None:
                    # it hung up on us, and now nothing listens: say the first, which says why
                    raise LLMConnectionClosed(
                        f"{closed} Asked again, nothing answers there any more.", local=closed.local
                    ) from exc
                if isinstance(exc, LLMConnectionClosed):
                    closed = exc
                wait = self._retry.wait(exc, retried, shown=self._shown, left=deadline - self._clock())
                if wait is None:
                    raise
                if self._sent or self._chunks:  # e.g. a timeout: the server had the prompt
                    self._spent = self._spent + self._call.reply(self._chunks, whole=False, sent=True).usage
                retried += 1
                yield Retrying(self._call.why(exc), retried + 1, self._retry.retries + 1, wait)
                self._retry.sleep(wait)

    def _attempt(self, timeout: float) -> Iterator[StreamItem]:
        self._chunks, self._whole, self._sent = [], False, False
        try:
            response = self._call.open(timeout)
        except LLMError as exc:  # refused: not sent; no answer in time: the server may be working on it
            self._sent = isinstance(exc, LLMTimeout)
            raise
        except BaseException:  # Ctrl-C while sending
            self._sent = True
            raise
        self._sent = True
        try:
            for chunk in response:
                self._chunks.append(chunk)
                if len(self._chunks) == 1:
                    yield Receiving()
                piece = self._call.text(chunk)
                if piece:
                    self._shown = True
                    yield piece
            self._whole = True
        except LLMError:
            raise
        except Exception as exc:  # raised by the response while reading it
            raise self._call.failed(exc, timeout) from None
        finally:
            self._call.close(response)
