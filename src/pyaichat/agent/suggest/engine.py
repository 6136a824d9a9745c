"""The suggestion engine below the front ends: when to ask the model, one request at a time, never in the way.

A front end reports every change of the text around the cursor (``edit``) and gets back at once what is
already known for that position — the rest of an earlier answer the user is typing along, or an answer cached
for exactly this prefix — or nothing. Otherwise, once the user has paused for ``pause`` seconds, one request
goes out from the engine's own thread and event loop; its answer is handed to the front end's ``deliver``
(from that thread) only if the user is still at that position. Typing again drops the pending pause and
*cancels* a request in flight, which aborts its HTTP request. Nothing here blocks the caller: ``edit`` takes a
lock for a few assignments. Given the front end's own loop (``PromptLoop``), a key never wakes the engine's
thread either: the pause is timed on the prompt's loop, and a stale request is aborted at the helper from
there once the key is on the screen; the engine's thread runs only once the user has paused (measured:
``benchmarks/suggest.py --probe``).

The model call is made by a helper process (``helper.ModelHelper``: made while the person types, it runs apart
by the rule in ``ipc``), the engine's thread is a ``background.BackgroundLoop``; this process only reads the
facts, masks the request and cuts the answer to the cursor (``benchmarks/suggest.py``).

A provider error or timeout shows nothing: it is kept as one quiet line for ``/trace`` and ``/suggest``, and
the engine waits a while before asking again (an error that will not go away by itself — a refused key, an
unknown model — stops suggestions until ``suggest_model`` changes). Its tokens and cost count in ``/cost``.

It knows nothing of prompt_toolkit: the REPL and terminal IPython each adapt a buffer to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...errors import LLMAuthError, LLMBadRequest, LLMError, LLMSetupError, LLMTimeout, LLMUnknownModel
from .state import Answers, Deliver, Flight, Pending, PromptLoop, SuggestStats

if TYPE_CHECKING:
    import asyncio

    from ...background import BackgroundLoop
    from ...configuration.config import Config
    from ...runtime import Runtime
    from ..llm.infill import CodeAnswer, CodeRequest
    from .helper import ModelHelper

PAUSE = 0.25  # seconds without a key before the model is asked
TIMEOUT = 30.0  # seconds one suggestion request may take (less if request_timeout is lower): a cold local
# server can take that long for its first answer
BACKOFF = (5.0, 60.0)  # seconds of quiet after a failure, doubling up to the second figure

Ask = Callable[["CodeRequest", float], Awaitable["CodeAnswer"]]


class Suggester:
    """Ghost-text suggestions for one session. ``settings`` returns the current configuration (read at every
    request, so ``/suggest`` applies at once); ``ask`` replaces the model call (tests), ``helper`` the helper
    process that makes it otherwise (created, not started, with the first request)."""

    def __init__(
        self,
        settings: Callable[[], Config],
        runtime: Runtime,
        *,
        ask: Ask | None = None,
        helper: ModelHelper | None = None,
        pause: float = PAUSE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self.runtime = runtime
        self._ask = ask
        self.helper = helper
        self.pause = pause
        self._clock = clock
        self.stats = SuggestStats()
        self._lock = threading.Lock()
        self._reading = threading.Lock()  # held while the session is read for facts (``quiet`` waits)
        self._background: BackgroundLoop | None = None  # the engine's thread, from the first pause on
        self._position: tuple[str, str] | None = None  # where the user is now (None: nowhere to suggest)
        self._pending: Pending | None = None
        self._timer = False  # a pause timer is armed (on the engine's loop, or on the caller's)
        self._timer_due = 0.0  # when it fires (by ``clock``)
        self._flight: Flight | None = None
        self._abandoned: set[asyncio.Task[None]] = set()  # aborted by the key's thread; tidied up later
        self._answers = Answers()
        self._quiet_until = 0.0
        self._backoff = BACKOFF[0]
        self._stopped: tuple[str, str] | None = None  # (model, sentence): an error that needs the user
        self.chat_only: set[str] = set()  # models whose server refused fill-in-the-middle
        self.last_request: dict[str, Any] | None = None  # the last body sent (masked), for tests and /suggest

    # -- state ---------------------------------------------------------------------------------------------
    @property
    def background(self) -> BackgroundLoop:
        """The engine's own thread and event loop (started by the first pause, not by this)."""
        if self._background is None:
            from ...background import BackgroundLoop  # with the first suggestion (asyncio: prompt_toolkit's)

            self._background = BackgroundLoop("pyaichat-suggest")
        return self._background

    @property
    def model(self) -> str | None:
        return self._settings().suggest_model

    def active(self) -> bool:
        """A model is set and no error has stopped it."""
        model = self.model
        return bool(model) and not (self._stopped is not None and self._stopped[0] == model)

    @property
    def waiting(self) -> tuple[str, str] | None:
        """The position that will be asked about once the user pauses there (``None``: nothing will be)."""
        pending = self._pending
        return (pending.before, pending.after) if pending is not None else None

    @property
    def stopped_by(self) -> str | None:
        """The sentence of an error that stopped suggestions for the current model."""
        stopped = self._stopped
        return stopped[1] if stopped is not None and stopped[0] == self.model else None

    # -- the front end's side (its event loop thread) -------------------------------------------------------
    def edit(
        self,
        before: str,
        after: str,
        deliver: Deliver,
        *,
        ask: bool = True,
        prompt: PromptLoop | None = None,
    ) -> str | None:
        """The text around the cursor is now ``before``|``after``. Returns what is known for it at once
        (``""``: known to be nothing), or ``None`` and asks the model once the user pauses there — unless
        ``ask`` is false (the text was not typed: a line recalled from history).

        ``prompt``: the front end's own loop, which times the pause and aborts a stale request once the
        key is on the screen; then no key wakes the engine's thread — it wakes once the pause is over."""
        if not self.active():
            self.cancel()
            return None
        position = (before, after)
        with self._lock:
            self._position = position
            known = self._answers.known(before, after)
            self._abort_unless(position, prompt)
            if known is not None or self._flight is not None or not ask:  # known, or on its way, or not asked
                self._pending = None
                return known
            now = self._clock()
            self._pending = Pending(before, after, deliver, now)
            # a timer on a front end's loop that ended with its prompt never fires: then arm another
            wake = not self._timer or now > self._timer_due + 1.0
            if wake:
                self._timer, self._timer_due = True, now + self.pause
        if wake:
            if prompt is not None:
                prompt.call_later(self.pause, lambda: self._pause_over(prompt))
            else:
                self.background.call_soon(self._arm)
        return None

    def _pause_over(self, prompt: PromptLoop) -> None:
        """The caller's timer (on its loop): wake the engine's thread if the user has really paused, else
        look again when they will have."""
        with self._lock:
            pending = self._pending
            if pending is None:
                self._timer = False
                return
            left = pending.since + self.pause - self._clock()
            if left > 0:
                self._timer_due = self._clock() + left
        if left > 0:
            prompt.call_later(left, lambda: self._pause_over(prompt))
        else:
            self.background.call_soon(self._tick)

    def cancel(self) -> None:
        """Nowhere to suggest now (the input was accepted, the cursor left the line's end, another mode):
        drop the pending pause and abort a request in flight."""
        with self._lock:
            self._position = None
            self._pending = None
            self._timer = False  # a timer still armed finds nothing pending; the next edit arms its own
            self._abort_unless(None)

    def quiet(self, timeout: float = 1.0) -> None:
        """``cancel``, then wait (bounded) until the session is no longer being read: call before running
        the user's code, which must not change objects under a facts lookup."""
        self.cancel()
        if self._reading.acquire(timeout=timeout):
            self._reading.release()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the engine's thread and the helper process (bounded)."""
        self.cancel()
        with self._lock:
            abandoned = list(self._abandoned)
        if self._background is not None:
            self._background.close(timeout, before=lambda: _cancel(abandoned))
        self.stop_helper(timeout)

    def stop_helper(self, timeout: float = 2.0) -> None:
        """Let the helper process go (``/suggest off``, exit); the next request starts another."""
        if self.helper is not None:
            self.helper.close(timeout)

    def _abort_unless(self, position: tuple[str, str] | None, prompt: PromptLoop | None = None) -> None:
        """Abort the request in flight unless it is for ``position`` (with ``_lock`` held). What the helper
        was sent for it is aborted there from the caller's thread — once the key is on the screen, given
        the front end's ``prompt`` — and the engine's task is tidied up the next time its thread wakes
        anyway. Anything else (nothing sent yet, an in-process model call) the engine's thread cancels now."""
        flight = self._flight
        if flight is None or flight.position == position:
            return
        self._flight = None
        helper = flight.helper
        asked = helper.in_flight() if helper is not None else ()
        if helper is not None and asked:
            self._abandoned.add(flight.task)
            if prompt is not None:
                prompt.after_echo(lambda: self._tell(helper, asked, flight.task))
                return
            if helper.abort(asked):
                return
        self._cancel_task(flight.task)

    def _tell(self, helper: ModelHelper, asked: tuple[int, ...], task: asyncio.Task[None]) -> None:
        if not helper.abort(asked):
            self._cancel_task(task)

    def _cancel_task(self, task: asyncio.Task[None]) -> None:
        if self._background is not None and self._background.loop is not None:
            self._background.call_soon(task.cancel)

    def check(self, model: str) -> str | None:
        """Why litellm cannot place ``model`` (``/model``'s sentence), or ``None``: asked of the helper, which
        this starts (the first suggestion need not wait). From the front end's thread; Ctrl-C ends it."""
        if self._ask is not None:  # a model call put in by a test: no litellm to ask
            return None
        try:
            return self.background.run(self._model_helper().check(model))
        except LLMError as exc:
            return str(exc)

    # -- the engine's thread --------------------------------------------------------------------------------
    def _arm(self) -> None:
        import asyncio  # on the engine's loop: loaded

        asyncio.get_running_loop().call_later(self.pause, self._tick)

    def _tick(self) -> None:
        """The pause timer: ask for the pending position once the user has been still long enough."""
        import asyncio  # on the engine's loop: loaded

        loop = asyncio.get_running_loop()
        with self._lock:
            abandoned = list(self._abandoned)
        for task in abandoned:  # aborted at the helper already; their bookkeeping now
            task.cancel()
        with self._lock:
            pending = self._pending
            if pending is None:
                self._timer = False
                return
            left = pending.since + self.pause - self._clock()
            if left > 0:
                self._timer_due = self._clock() + left
                loop.call_later(left, self._tick)
                return
            self._timer = False
            self._pending = None
            if self._clock() < self._quiet_until or self._flight is not None:
                return  # after a failure: quiet for a while; and never two requests at once
            position = (pending.before, pending.after)
            task = loop.create_task(self._request(pending))
            self._flight = Flight(task, position, self._model_helper() if self._ask is None else None)

    async def _request(self, pending: Pending) -> None:
        import asyncio  # the engine is made before any suggestion: asyncio with the first

        position = (pending.before, pending.after)
        try:
            await self._answer(pending)
        except asyncio.CancelledError:
            self.stats.cancelled += 1
        except Exception as exc:  # reading the session or building the request: never reaches the prompt
            self._failed(self.model or "", "", exc)
        finally:
            with self._lock:
                if self._flight is not None and self._flight.position == position:
                    self._flight = None
                self._abandoned.discard(asyncio.current_task())

    async def _answer(self, pending: Pending) -> None:
        import asyncio  # as above

        config = self._settings()
        model = config.suggest_model
        if not model or not self.active():
            return
        ask = self._ask
        if ask is None:
            helper = self._model_helper()
            await helper.start()  # the first suggestion waits for the helper (litellm loads there)
            ask = helper
        if not self._current(pending):
            return
        with self._reading:
            found = self.runtime.suggestion_facts(pending.before, pending.after)
        if not self._current(pending):
            return
        from .prompt import build_request  # the request's parts: with the first suggestion
        from .route import route_for

        route = route_for(config, chat_only=model in self.chat_only)
        request = build_request(config, route, pending.before, pending.after, found)
        if request is None:  # the cursor is inside a secret
            return
        from .fit import fit  # with the first answer

        self.last_request = request.body()
        self.stats.requests += 1
        timeout = min(TIMEOUT, float(config.request_timeout))
        try:
            answer = await _bounded(ask(request, timeout), timeout + 1.0)
        except Exception as exc:  # an LLMError, or a bug that must never reach the prompt
            if asyncio.current_task() in self._abandoned:  # aborted already (its helper then went away)
                self.stats.cancelled += 1
                return
            self._failed(model, route.kind, exc)
            return
        self._quiet_until, self._backoff = 0.0, BACKOFF[0]
        self.stats.count(answer)
        chat = route.kind == "chat"
        text = fit(answer.text, pending.before, pending.after, block=request.block, echoes=chat)
        with self._lock:
            self._answers.remember(pending.before, pending.after, text, latest=True)
            current = self._position == (pending.before, pending.after)
        if current and text:
            self.stats.delivered += 1
            pending.deliver(pending.before, pending.after, text)

    def _model_helper(self) -> ModelHelper:
        """The helper process that makes the model calls (created here; it starts with its first call)."""
        if self.helper is None:
            from .helper import ModelHelper  # the helper process: with the first model call

            self.helper = ModelHelper()
        return self.helper

    def _current(self, pending: Pending) -> bool:
        return self._position == (pending.before, pending.after)

    def _failed(self, model: str, kind: str, exc: BaseException) -> None:
        """One quiet line, and quiet for a while; an error the user must fix stops suggestions for ``model``;
        a server that refuses fill-in-the-middle gets chat from now on."""
        sentence = str(exc) if isinstance(exc, LLMError) else f"internal error ({type(exc).__name__}: {exc})"
        self.stats.failed += 1
        stamp = time.strftime("%H:%M:%S")
        if kind == "fim" and isinstance(exc, (LLMBadRequest, LLMUnknownModel)):
            self.chat_only.add(model)
            self.stats.last_failure = f"{stamp} {sentence} (fill-in-the-middle refused: chat from now on)"
            return
        self.stats.failing += 1
        self.stats.last_failure = f"{stamp} {sentence}"
        if isinstance(exc, (LLMAuthError, LLMUnknownModel, LLMSetupError)):
            self._stopped = (model, sentence)
            return
        self._quiet_until = self._clock() + self._backoff
        self._backoff = min(self._backoff * 2, BACKOFF[1])

    # -- reports --------------------------------------------------------------------------------------------
    def usage_line(self) -> str | None:
        """For ``/cost`` (``None`` before the first request)."""
        return self.stats.usage_line()

    def trace_line(self) -> str | None:
        """For ``/trace``: the last failure (never shown on the screen when it happens)."""
        return self.stats.trace_line()

    def helper_line(self) -> str | None:
        """For ``/suggest``: the helper process that makes the model calls, if one has been started."""
        return self.helper.describe() if self.helper is not None else None


async def _bounded(awaitable: Awaitable[Any], seconds: float) -> Any:
    """The answer, or a timeout sentence: a provider that ignores its own timeout cannot hold a request."""
    import asyncio  # with the first suggestion

    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise LLMTimeout(f"The suggestion model did not answer within {seconds - 1:.0f} s.") from None


def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
