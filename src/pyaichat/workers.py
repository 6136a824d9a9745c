"""Calls that cannot hold up their caller: ``within(func, timeout)`` runs ``func`` in a reused worker thread
and stops *waiting* at the deadline.

A thread cannot be killed, and an exception injected into one can land inside a library's lock or thread pool
and break it for good; so an overrunning call is abandoned — left to finish on its own in its daemon thread —
and nothing is interrupted. Capabilities (``capabilities.invoke.run_with_deadline``), the session picture's
user ``__repr__`` (``capabilities.deadline.bounded``) and completion's custom ``__dir__`` use this one pool.
Standard library only: completion loads it at the first TAB.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")


class Abandoned(Exception):
    """A call did not finish within its time; its worker thread was left to finish it alone."""


class _Job:
    """One call handed to a worker. Its end is a plain lock, held from the start and released by the worker:
    one futex each way, where an ``Event`` (a condition with a lock of its own per wait) cost twice that on
    every capability call."""

    __slots__ = ("_done", "error", "finished", "func", "value")

    def __init__(self, func: Callable[[], Any]) -> None:
        self.func = func
        self._done = threading.Lock()
        self._done.acquire()
        self.finished = False
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:  # a fresh context per job, as a fresh thread had: no decimal precision carried over
            self.value = contextvars.Context().run(self.func)
        except BaseException as exc:
            self.error = exc
        finally:
            self.finished = True
            self._done.release()

    def wait(self, timeout: float | None) -> bool:
        """Whether it finished within ``timeout`` seconds (``None``: however long it takes)."""
        bound = -1 if timeout is None else min(max(timeout, 0.0), threading.TIMEOUT_MAX)
        return self._done.acquire(timeout=bound) or self.finished


class _Worker:
    """A daemon thread that runs bounded calls one at a time until it is handed ``None``.

    Workers are reused: starting a thread costs ~0.2 ms, several times a whole ``eval_expr``. A worker whose
    call overran (or whose caller was interrupted by Ctrl-C) is never handed another job."""

    _idle: ClassVar[list[_Worker]] = []
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=self._run, name="pyaichat-bounded", daemon=True).start()

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            job.run()
            del job  # keep no reference to the last result while idle

    @classmethod
    def take(cls) -> _Worker:
        with cls._lock:
            if cls._idle:
                return cls._idle.pop()
        return cls()

    @classmethod
    def give_back(cls, worker: _Worker) -> None:
        with cls._lock:
            if len(cls._idle) < 2:
                cls._idle.append(worker)
                return
        worker.jobs.put(None)

    @classmethod
    def forget_all(cls) -> None:
        """In a forked child: the parent's workers are not there (``fork`` copies only the forking thread),
        and their lock may have been held by one of them."""
        cls._idle = []
        cls._lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # the sandbox's child describes its result with bounded calls too
    os.register_at_fork(after_in_child=_Worker.forget_all)


def within(func: Callable[[], T], timeout: float) -> T:
    """``func()`` in a worker thread; its value, or its exception raised here, or ``Abandoned`` when it has
    not finished after ``timeout`` seconds. A thread cannot be killed: an overrunning call is left to end on
    its own in its (daemon) worker, and nothing is injected into it."""
    worker = _Worker.take()
    job = _Job(func)
    worker.jobs.put(job)
    try:
        finished = job.wait(timeout)
    finally:
        if job.finished:
            _Worker.give_back(worker)
        else:
            worker.jobs.put(None)  # abandoned: it ends once the job does
    if not finished:
        raise Abandoned(f"not finished after {timeout:g} s")
    if job.error is not None:
        raise job.error
    return job.value
