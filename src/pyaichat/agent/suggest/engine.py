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

The model call itself is made by a helper process (``helper.ModelHelper``; litellm never loads in the REPL for
a suggestion): this process only reads the facts, builds and masks the request, and cuts the answer to the
cursor — a fraction of a millisecond to a few, once per pause, measured in ``benchmarks/suggest.py``.

A provider error or timeout shows nothing: it is kept as one quiet line for ``/trace`` and ``/suggest``, and
the engine waits a while before asking again (an error that will not go away by itself — a refused key, an
unknown model — stops suggestions until ``suggest_model`` changes). Its tokens and cost count in ``/cost``.

It knows nothing of prompt_toolkit: the REPL and terminal IPython each adapt a buffer to it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from ...config import Config
    from ...runtime import Runtime
    from ..llm.infill import CodeAnswer, CodeRequest
    from .helper import ModelHelper

PAUSE = 0.25  # seconds without a key before the model is asked
TIMEOUT = 30.0  # seconds one suggestion request may take (less if request_timeout is lower): a cold local
# server can take that long for its first answer
BACKOFF = (5.0, 60.0)  # seconds of quiet after a failure, doubling up to the second figure
CACHE = 256  # answers kept, by position

# deliver(before, after, text): the answer for that position arrived (called from the engine's thread)
Deliver = Callable[[str, str, str], None]
Ask = Callable[["CodeRequest", float], Awaitable["CodeAnswer"]]


class SuggestStats:
    """What ``/suggest``, ``/trace`` and ``/cost`` report."""

    __slots__ = (
        "answered",
        "cancelled",
        "completion_tokens",
        "cost_usd",
        "delivered",
        "failed",
        "failing",
        "last_failure",
        "last_ms",
        "loop_complaints",
        "prompt_tokens",
        "requests",
    )

    def __init__(self) -> None:
        self.requests = self.answered = self.delivered = self.cancelled = self.failed = 0
        self.prompt_tokens = self.completion_tokens = 0
        self.cost_usd: float | None = None
        self.last_failure: str | None = None
        self.failing = 0  # requests failed in a row since the last answer (the toolbar says so)
        self.last_ms: float | None = None  # the last answer's round trip
        self.loop_complaints = 0  # what asyncio would have printed from the engine's loop (kept quiet)


class _Pending:
    __slots__ = ("after", "before", "deliver", "since")

    def __init__(self, before: str, after: str, deliver: Deliver, since: float) -> None:
        self.before, self.after, self.deliver, self.since = before, after, deliver, since


class _Flight:
    """The request in flight: its task on the engine's loop, its position, and the helper process that
    makes it (``None``: a model call that only the engine's thread can cancel)."""

    __slots__ = ("helper", "position", "task")

    def __init__(
        self, task: asyncio.Task[None], position: tuple[str, str], helper: ModelHelper | None
    ) -> None:
        self.task, self.position, self.helper = task, position, helper


class PromptLoop(Protocol):
    """A front end's own event loop, running anyway while the user types: with it, no key wakes the
    engine's thread."""

    def call_later(self, delay: float, func: Callable[[], None]) -> object:
        """Run ``func`` on that loop after ``delay`` seconds (the pause is timed there)."""
        ...

    def after_echo(self, func: Callable[[], None]) -> None:
        """Run ``func`` on that loop once the key being handled is on the screen (a stale request is
        aborted then: the helper's work for it never competes with the key's echo)."""
        ...


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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._position: tuple[str, str] | None = None  # where the user is now (None: nowhere to suggest)
        self._pending: _Pending | None = None
        self._timer = False  # a pause timer is armed (on the engine's loop, or on the caller's)
        self._timer_due = 0.0  # when it fires (by ``clock``)
        self._flight: _Flight | None = None
        self._abandoned: set[asyncio.Task[None]] = set()  # aborted by the key's thread; tidied up later
        self._answers: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._latest: tuple[str, str, str] | None = None  # the last answer: typing along it needs no request
        self._quiet_until = 0.0
        self._backoff = BACKOFF[0]
        self._stopped: tuple[str, str] | None = None  # (model, sentence): an error that needs the user
        self.chat_only: set[str] = set()  # models whose server refused fill-in-the-middle
        self.last_request: dict[str, Any] | None = None  # the last body sent (masked), for tests and /suggest

    # -- state ---------------------------------------------------------------------------------------------
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
            known = self._known(before, after)
            self._abort_unless(position, prompt)
            if known is not None or self._flight is not None or not ask:  # known, or on its way, or not asked
                self._pending = None
                return known
            now = self._clock()
            self._pending = _Pending(before, after, deliver, now)
            # a timer on a front end's loop that ended with its prompt never fires: then arm another
            wake = not self._timer or now > self._timer_due + 1.0
            if wake:
                self._timer, self._timer_due = True, now + self.pause
        if wake:
            if prompt is not None:
                prompt.call_later(self.pause, lambda: self._pause_over(prompt))
            else:
                self._call(self._arm)
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
            self._call(self._tick)

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
        loop, self._loop = self._loop, None
        for task in abandoned:
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout)
        self.stop_helper(timeout)

    def stop_helper(self, timeout: float = 2.0) -> None:
        """Let the helper process go (``/suggest off``, exit); the next request starts another."""
        if self.helper is not None:
            self.helper.close(timeout)

    # -- what is known without asking -------------------------------------------------------------------
    def _known(self, before: str, after: str) -> str | None:
        found = self._answers.get((before, after))
        if found is not None:
            self._answers.move_to_end((before, after))
            return found
        latest = self._latest
        if latest is not None:
            b0, a0, text = latest
            if a0 == after and before.startswith(b0) and text.startswith(before[len(b0) :]):
                rest = text[len(before) - len(b0) :]
                self._remember(before, after, rest)
                return rest
        return None

    def _remember(self, before: str, after: str, text: str) -> None:
        self._answers[(before, after)] = text
        self._answers.move_to_end((before, after))
        while len(self._answers) > CACHE:
            self._answers.popitem(last=False)

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
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    def check(self, model: str) -> str | None:
        """Before ``model`` gets what the person types: why litellm cannot place it (the sentence ``/model``
        gives), or ``None``. Asked of the helper process, which it starts (the first suggestion then does
        not wait for it); a helper that cannot start is said the same way. From the front end's thread;
        Ctrl-C ends the wait."""
        if self._ask is not None:  # a model call put in by a test: no litellm to ask
            return None
        import asyncio
        import concurrent.futures

        from ...errors import LLMError

        loop = self._loop or self._start()
        future = asyncio.run_coroutine_threadsafe(self._model_helper().check(model), loop)
        try:
            while True:  # polled, so Ctrl-C ends the wait (the helper goes on starting)
                try:
                    return future.result(timeout=0.1)
                except concurrent.futures.TimeoutError:
                    continue
        except LLMError as exc:
            return str(exc)
        except BaseException:
            future.cancel()
            raise

    # -- the engine's thread --------------------------------------------------------------------------------
    def _call(self, func: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None:
            loop = self._start()
        loop.call_soon_threadsafe(func)

    def _start(self) -> asyncio.AbstractEventLoop:
        import asyncio  # with the first suggestion (the REPL has it already: prompt_toolkit)

        loop = asyncio.new_event_loop()
        # Nothing from this loop reaches the screen: a connection the HTTP library dropped unclosed, or any
        # other complaint, would be printed over the prompt by asyncio's default handler.
        loop.set_exception_handler(self._loop_complaint)
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="pyaichat-suggest", daemon=True)
        self._thread.start()
        ready.wait(5)
        import atexit  # a front end that never closes the engine still leaves no open connection behind

        atexit.register(self.close)
        return loop

    def _loop_complaint(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.stats.loop_complaints += 1

    def _arm(self) -> None:
        assert self._loop is not None
        self._loop.call_later(self.pause, self._tick)

    def _tick(self) -> None:
        """The pause timer: ask for the pending position once the user has been still long enough."""
        assert self._loop is not None
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
                self._loop.call_later(left, self._tick)
                return
            self._timer = False
            self._pending = None
            if self._clock() < self._quiet_until or self._flight is not None:
                return  # after a failure: quiet for a while; and never two requests at once
            position = (pending.before, pending.after)
            task = self._loop.create_task(self._request(pending))
            self._flight = _Flight(task, position, self._model_helper() if self._ask is None else None)

    async def _request(self, pending: _Pending) -> None:
        import asyncio

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
                self._abandoned.discard(asyncio.current_task())  # type: ignore[arg-type]

    async def _answer(self, pending: _Pending) -> None:
        import asyncio

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
        from .prompt import build_request
        from .route import route_for

        route = route_for(config, chat_only=model in self.chat_only)
        request = build_request(config, route, pending.before, pending.after, found)
        if request is None:  # the cursor is inside a secret
            return
        from .fit import fit

        self.last_request = request.body()
        self.stats.requests += 1
        started = self._clock()
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
        self.stats.last_ms = (self._clock() - started) * 1000
        self._count(answer)
        chat = route.kind == "chat"
        text = fit(answer.text, pending.before, pending.after, block=request.block, echoes=chat)
        with self._lock:
            self._remember(pending.before, pending.after, text)
            self._latest = (pending.before, pending.after, text)
            current = self._position == (pending.before, pending.after)
        if current and text:
            self.stats.delivered += 1
            pending.deliver(pending.before, pending.after, text)

    def _model_helper(self) -> ModelHelper:
        """The helper process that makes the model calls (created here; it starts with its first call)."""
        if self.helper is None:
            from .helper import ModelHelper

            self.helper = ModelHelper()
        return self.helper

    def _current(self, pending: _Pending) -> bool:
        return self._position == (pending.before, pending.after)

    def _count(self, answer: CodeAnswer) -> None:
        stats = self.stats
        stats.answered += 1
        stats.failing = 0
        stats.prompt_tokens += answer.prompt_tokens
        stats.completion_tokens += answer.completion_tokens
        if answer.cost_usd is not None:
            stats.cost_usd = (stats.cost_usd or 0.0) + answer.cost_usd

    def _failed(self, model: str, kind: str, exc: BaseException) -> None:
        """One quiet line, and quiet for a while; an error the user must fix stops suggestions for ``model``;
        a server that refuses fill-in-the-middle gets chat from now on."""
        from ...errors import LLMAuthError, LLMBadRequest, LLMError, LLMSetupError, LLMUnknownModel

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
        """For ``/cost``: the suggestions' requests, tokens and cost (``None`` before the first request)."""
        s = self.stats
        if not s.requests:
            return None
        cost = f"${s.cost_usd:.6f}" if s.cost_usd is not None else "no price known"
        return (
            f"Suggestions: {s.requests} request(s), {s.prompt_tokens:,} prompt + {s.completion_tokens:,} "
            f"completion tokens; cost {cost}."
        )

    def helper_line(self) -> str | None:
        """For ``/suggest``: the helper process that makes the model calls, if one has been started."""
        helper = self.helper
        if helper is None or not helper.starts:
            return None
        pid, memory = helper.pid, helper.memory_mb()
        now = f"pid {pid}" + (f", {memory:.0f} MB" if memory is not None else "") if pid else "not running"
        return f"Model calls run in a helper process ({now}; started {helper.starts} time(s))."

    def trace_line(self) -> str | None:
        """For ``/trace``: the last failure, quietly (never shown on the screen when it happens)."""
        s = self.stats
        if s.last_failure is None:
            return None
        return f"Suggestions: {s.failed} failed request(s); last: {s.last_failure}"


async def _bounded(awaitable: Awaitable[Any], seconds: float) -> Any:
    """The answer, or a timeout sentence: a provider that ignores its own timeout cannot hold a request."""
    import asyncio

    from ...errors import LLMTimeout

    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise LLMTimeout(f"The suggestion model did not answer within {seconds - 1:.0f} s.") from None
