"""litellm, loaded once per process in a background thread: one future.

Importing litellm costs ~3–4 s and ~170 MB, so nothing on the start-up path imports it. ``warm_up`` starts the
load when the user enters Assistant mode, or once the prompt has been idle a moment with a model configured
(the front end's); the first question waits for whatever is left (``load_litellm``). The load is the import
plus a *priming* that pulls in what litellm itself imports lazily on its first real request (the OpenAI SDK,
httpx, h2, its stream handler: another 1–2 s), without any network traffic.

The person's own work comes first (``give_way_to``): the load pauses before running each of its modules while
the front end says the person is busy (typing, or an input of theirs running: an ``import pandas`` typed
meanwhile ran at half speed, sharing the interpreter's lock with it). It pauses there, under that module's own
lock only, never while a finder looks for a module: the import system holds its global lock meanwhile (up to
Python 3.11), and the prompt's next import would wait for the pause (seen: a prompt that never came back). It
never pauses while the prompt's thread waits for a module it is importing (that thread would wait for the
pause), nor once anyone waits for litellm itself (``get``: then it is what the person waits for), nor for
more than ``GIVE_WAY_MAX`` seconds in all (a lock the pause holds that nobody can see costs that, not a hang).

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
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from importlib.machinery import ExtensionFileLoader, ModuleSpec, SourceFileLoader, SourcelessFileLoader
from typing import Any

from ...errors import LLMSetupError

GIVE_WAY_MAX = 10.0  # seconds the load may give way to the person in all


class Loader:
    """Runs ``load`` once, in a background thread, and hands out its result to every caller."""

    def __init__(self, load: Callable[[], Any], *, name: str = "pyaichat-litellm-warmup") -> None:
        self._load = load
        self._name = name
        self._lock = threading.Lock()
        self._future: Future[Any] | None = None
        self._yield_to: Callable[[], bool] | None = None
        self._waiting = 0  # how many wait for it (``get``): while anyone does, it never gives way
        self.paused_s = 0.0  # how long the load gave way to the person (for benchmarks)
        self.thread: threading.Thread | None = None

    def give_way_to(self, busy: Callable[[], bool]) -> None:
        """While ``busy()`` says the person is busy, the load (started now or later) pauses between two of its
        modules, unless someone waits for it (see the module's docstring). A front end that draws a prompt
        says so once."""
        self._yield_to = busy

    def start(self) -> Future[Any]:
        """Start loading (once); later calls return the same future."""
        with self._lock:
            if self._future is None:
                future: Future[Any] = Future()
                future.set_running_or_notify_cancel()

                def target() -> None:
                    pacer = _GiveWay(self)
                    sys.meta_path.insert(0, pacer)
                    try:
                        future.set_result(self._load())
                    except BaseException as exc:  # handed to whoever waits; the thread itself ends quietly
                        future.set_exception(exc)
                    finally:
                        sys.meta_path.remove(pacer)

                self.thread = threading.Thread(target=target, name=self._name, daemon=False)
                self.thread.start()
                self._future = future
            return self._future

    def get(self) -> Any:
        """The loaded library, waiting for the load if needed; a failed load raises its error here. While it
        waits, the load never gives way; after a Ctrl-C ends the wait, it gives way again."""
        future = self._future or self.start()
        with self._lock:
            self._waiting += 1
        try:
            while not future.done():  # polled, so Ctrl-C ends the wait and never the load
                time.sleep(0.05)
        finally:
            with self._lock:
                self._waiting -= 1
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

    def busy(self) -> bool:
        """Whether the load should give way now (called on its thread, before one of its modules runs)."""
        yield_to = self._yield_to
        if yield_to is None or self._waiting or self.paused_s >= GIVE_WAY_MAX:
            return False
        return yield_to() and not _prompt_waits_on_import()


class _GiveWay:
    """A finder first on ``sys.meta_path`` that, on the loader's thread only, finds each module with the
    finders after it and has the module's loader wait, before it runs the module, while the loader says the
    person is busy. On every other thread it finds nothing at once."""

    PAUSE = 0.01  # seconds between two looks at whether the person is still busy
    PACED = (SourceFileLoader, SourcelessFileLoader, ExtensionFileLoader)  # one loader object per module

    def __init__(self, loader: Loader) -> None:
        self._loader = loader
        self._thread = threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if threading.get_ident() != self._thread:
            return None
        spec = self._others_find(name, path, target)
        if spec is not None and isinstance(spec.loader, self.PACED):
            run = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                self._wait()
                run(module)

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this module's loader only
        return spec

    def _others_find(self, name: str, path: Any, target: Any) -> ModuleSpec | None:
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is not self and find is not None:
                spec: ModuleSpec | None = find(name, path, target)
                if spec is not None:
                    return spec
        return None

    def _wait(self) -> None:
        while self._loader.busy():
            began = time.perf_counter()
            time.sleep(self.PAUSE)  # the interpreter's lock is free meanwhile
            self._loader.paused_s += time.perf_counter() - began


def _prompt_waits_on_import() -> bool:
    """Whether the main thread waits for a module lock (another thread is importing that module): the import
    system records it in ``_blocking_on``, which has named each waiting thread since Python 3.3."""
    bootstrap = sys.modules.get("_frozen_importlib")
    waiting = getattr(bootstrap, "_blocking_on", None)
    try:
        return bool(waiting and waiting.get(threading.main_thread().ident))
    except Exception:  # another Python's bookkeeping: never pause on a guess
        return True


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
