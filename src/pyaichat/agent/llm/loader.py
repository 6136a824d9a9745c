"""litellm, loaded once per process in a background thread: one future.

Importing litellm costs ~3–4 s and ~170 MB, so nothing on the start-up path imports it. ``warm_up`` starts the
load when the user enters Assistant mode; the first question waits for whatever is left (``load_litellm``).
The load is the import plus a *priming* that pulls in what litellm itself imports lazily on its first real
request (the OpenAI SDK, httpx, h2, its stream handler: another 1–2 s), without any network traffic.

Why a thread and a polled wait, even from the main thread: Ctrl-C during an import in the main thread would
stop it half-way and leave a broken litellm for the rest of the session ("has no attribute ..."). Here Ctrl-C
ends the *wait* and the load finishes in the background. The wait polls the future with ``time.sleep`` rather
than joining the thread: a join interrupted by Ctrl-C can leave a running thread marked as finished, and then
neither a later wait nor interpreter shutdown waits for it (an exit while litellm is still importing hangs in
its finalizers). For the same reason the thread is not a daemon: shutdown waits for it (seconds at most).
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ...errors import LLMSetupError


class Loader:
    """Runs ``load`` once, in a background thread, and hands out its result to every caller."""

    def __init__(self, load: Callable[[], Any], *, name: str = "pyaichat-litellm-warmup") -> None:
        self._load = load
        self._name = name
        self._lock = threading.Lock()
        self._future: Future[Any] | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> Future[Any]:
        """Start loading (once); later calls return the same future."""
        with self._lock:
            if self._future is None:
                future: Future[Any] = Future()
                future.set_running_or_notify_cancel()

                def target() -> None:
                    try:
                        future.set_result(self._load())
                    except BaseException as exc:  # handed to whoever waits; the thread itself ends quietly
                        future.set_exception(exc)

                self.thread = threading.Thread(target=target, name=self._name, daemon=False)
                self.thread.start()
                self._future = future
            return self._future

    def get(self) -> Any:
        """The loaded library, waiting for the load if needed; a failed load raises its error here."""
        future = self._future or self.start()
        while not future.done():  # polled, so Ctrl-C ends the wait and never the load
            time.sleep(0.05)
        return future.result()

    def after_fork(self) -> None:
        """In a process forked while the load ran: its thread stayed in the process that was forked, so the
        load starts again when it is next needed (``checkpoints`` drops the modules it had half imported)."""
        future = self._future
        if future is not None and not future.done():
            self._future = None
            self.thread = None
        self._lock = threading.Lock()

    def loaded(self) -> bool:
        future = self._future
        return future is not None and future.done() and future.exception() is None


def import_litellm() -> Any:
    """litellm, set up for pyaichat: no price list from the internet, no feedback banner, no telemetry."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        # Imported here, not at the top: this is the seconds-long import the whole module exists to defer.
        import litellm
    except ImportError as exc:  # pragma: no cover - litellm is a hard dependency
        raise LLMSetupError(f"The assistant needs litellm, which cannot be imported: {exc}.") from None
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    # token_counter would fetch some tokenizers from the Hugging Face hub: no network from here.
    litellm.disable_hf_tokenizer_download = True
    # Threads. litellm hands every streamed chunk to its logging pool (``litellm-logging``: up to 100 threads,
    # kept for the life of the process) for success callbacks pyaichat never registers; a thread starts
    # whenever a chunk is handed over while none of the pool's is idle, so the pool only grows with the
    # session (benchmarks/soak.py before this: 15 threads after 400 questions, 11 of them that pool, and 19
    # after 600). Without that hand-off the pool keeps the two threads its success logging at the end of
    # each request uses (two hand-offs per request; a third thread when one is slow). A session's threads
    # after any number of questions are then (benchmarks/soak.py lists them): the main thread, those two or
    # three, at most two idle ``pyaichat-bounded`` workers (``workers``; one more per call still running past
    # its deadline), jupyter_client's channel thread with ``--kernel``, rich's refresh thread while an answer
    # streams in a terminal, and native libraries' own threads (numpy's OpenBLAS one per core beyond the
    # first, pyarrow's jemalloc one, pyzmq two with ``--kernel``).
    litellm.disable_streaming_logging = True
    return litellm


def prime(litellm: Any) -> None:
    """Load what litellm imports lazily on its first real request: a mock completion and an unused client."""
    try:
        for name in ("httpcore", "h2.connection", "litellm.llms.openai.openai"):
            importlib.import_module(name)
        openai = importlib.import_module("openai")
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


def _import_and_prime() -> Any:
    litellm = import_litellm()
    prime(litellm)
    return litellm


LITELLM = Loader(_import_and_prime)


def warm_up() -> None:
    """Start loading litellm in the background (once), so the first question does not wait for all of it."""
    LITELLM.start()


def load_litellm() -> Any:
    """litellm, loaded and primed (waits for the background load; see the module's docstring)."""
    return LITELLM.get()


def is_loaded() -> bool:
    return LITELLM.loaded()
