"""Every MCP server of one session, on one background event loop, behind plain blocking calls.

The assistant, the slash commands and the front ends are synchronous; the SDK is asynchronous. One
background loop (``background.BackgroundLoop``, the suggestion engine's kind) runs for the whole session; each
server is a ``Connection`` task on it, and the blocking methods here hand work to that loop and wait, bounded,
for the answer (Ctrl-C while waiting cancels the call on the loop, which tells the server).

A server's requests back (sampling, elicitation) arrive on the loop while one of its calls runs; ``call``
answers them on the thread that waits for that call (the front end's, during a turn) with the ``answer``
it was given, and sends the answers back to the loop (``requests_back``).

Servers start together the first time they are needed (``start``; the assistant calls it when the user
enters Assistant mode or asks a first question), never at start-up. A server that crashed or was stopped
after it had started comes back on the next need (``revive``: a turn, or a call of it), at most once a
minute (``RESTART_EVERY``); ``/tools restart NAME`` restarts one at any time (``restart``). A call of a server
that is down and not restarted is never sent, and says so in its own sentence (``not_sent``). ``close``
stops them all; it also runs at interpreter exit, so closing pyaichat closes them whichever front end was in
use.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..background import BackgroundLoop
from ..configuration.mcp_server_spec import ServerSpec
from ..configuration.mcp_servers import EntryError, merged, read_json_file
from .connection import Connection, ServerProblem
from .launch import launch
from .requests_back import RequestBack

CLOSE_WAIT = 6.0  # seconds close() waits for servers to exit (the SDK kills one after ~4 s)
RESTART_EVERY = 60.0  # seconds between two automatic restarts of one server


class Unstarted:
    """A server that never got as far as starting: switched off, or its entry cannot be used as written."""

    def __init__(self, name: str, state: str, error: str | None = None) -> None:
        self.name, self.state, self.error = name, state, error
        self.tools: list[Any] = []
        self.calls = self.failed_calls = self.cut_tools = 0
        self.start_ms: float | None = None
        self.launch = None
        self.server_info = ""


class Manager:
    """The session's MCP servers (see the module docstring)."""

    def __init__(
        self,
        specs: Iterable[ServerSpec],
        *,
        start_timeout: float = 20.0,
        call_timeout: float = 60.0,
        problems: Iterable[str] = (),
    ) -> None:
        self.specs = list(specs)
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.problems = list(problems)  # sentences about the configuration as a whole (a bad JSON file)
        self.servers: dict[str, Connection | Unstarted] = {}
        self._waiting: dict[str, list[queue.SimpleQueue[RequestBack | None]]] = {}  # calls, by server
        self.started = False
        self._background = BackgroundLoop("pyaichat-mcp", setup=_quiet_sdk_logs)
        self._runs: list[concurrent.futures.Future[Any]] = []
        self._lock = threading.Lock()
        self._told: set[tuple[str, str]] = set()
        self._restarted: dict[str, float] = {}  # server -> when it was last restarted (monotonic)
        self._said: list[str] = []  # lines about restarts, not told yet
        # called on the loop with each connection once it has listed its tools for the first time
        self.on_listed: Callable[[Any], None] | None = None
        self.closed = False

    @classmethod
    def from_config(cls, config: Any) -> Manager:
        """The servers of ``config``: its ``[mcp_servers.*]`` tables and its ``mcp_config`` JSON file."""
        problems: list[str] = []
        from_json: tuple[ServerSpec, ...] = ()
        if config.mcp_config:
            try:
                from_json = read_json_file(config.mcp_config)
            except Exception as exc:  # a ConfigError: one sentence, the other servers still start
                problems.append(str(exc))
        return cls(
            merged(tuple(config.mcp_servers), from_json),
            start_timeout=config.mcp_start_timeout,
            call_timeout=config.mcp_call_timeout,
            problems=problems,
        )

    # -- start ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start every enabled server in the background (once; later calls do nothing)."""
        with self._lock:
            if self.started or self.closed:
                return
            self.started = True
            for spec in self.specs:
                if spec.enabled is False:
                    self.servers[spec.name] = Unstarted(spec.name, "off")
                    continue
                self.servers[spec.name] = self._connection(spec)
            connections = [c for c in self.servers.values() if isinstance(c, Connection)]
            if not connections:
                return
            self._runs = [self._background.submit(c.run()) for c in connections]
            atexit.register(self.close)  # (after the loop's own: this runs first, and stops the servers)

    def _connection(self, spec: ServerSpec) -> Connection | Unstarted:
        try:
            ready = launch(spec, start_timeout=self.start_timeout, call_timeout=self.call_timeout)
        except EntryError as exc:
            return Unstarted(spec.name, "failed", f"{exc}.")
        conn = Connection(ready)
        conn.deliver = self._deliver
        conn.on_listed = self._listed
        return conn

    def _listed(self, conn: Connection) -> None:
        """``conn`` listed its tools for the first time (on the loop): tell ``on_listed``; its failure is not
        the server's (the pins are checked again before the model is offered anything)."""
        if self.on_listed is not None:
            with contextlib.suppress(Exception):
                self.on_listed(conn)

    # -- servers that come back ----------------------------------------------------------------------------
    def restart(self, name: str) -> str:
        """Stop ``name`` if it runs, start it again and wait for it (within its start deadline); the one
        line that says how it went."""
        spec = next((s for s in self.specs if s.name == name), None)
        if spec is None:
            known = ", ".join(s.name for s in self.specs) or "none"
            return f"There is no MCP server {name!r} (configured: {known})."
        if spec.enabled is False:
            return f"The MCP server {name!r} is switched off in your configuration (enabled = false)."
        self.start()
        with self._lock:
            if self.closed:
                return "The MCP servers are closed."
            old = self.servers.get(name)
            conn = self.servers[name] = self._connection(spec)
            self._restarted[name] = time.monotonic()
        if isinstance(old, Connection):
            self._background.call_soon(old.stop)
        if not isinstance(conn, Connection):
            return conn.error or f"The MCP server {name!r} cannot start."
        self._runs.append(self._background.submit(conn.run()))
        future = self._background.submit(conn.wait_ready())
        try:
            future.result(conn.launch.start_timeout + 15)
        except concurrent.futures.TimeoutError:
            future.cancel()
        if conn.state == "ready":
            return f"The MCP server {name!r} is running again ({_count(len(conn.tools), 'tool')})."
        return conn.error or f"The MCP server {name!r} did not start again."

    def revive(self) -> list[str]:
        """Restart every server that stopped after it had started (a crash, a timeout), each at most once
        per ``RESTART_EVERY``; a line for each restart (also kept for ``news``)."""
        lines = []
        for name in list(self.servers):
            if self._may_revive(name):
                why = self.servers[name].error or "it stopped"
                line = f"Restarting the MCP server {name!r} (at most once a minute): {why}"
                outcome = self.restart(name)
                lines.append(f"{line} → {outcome}")
        self._said.extend(lines)
        return lines

    def _may_revive(self, name: str) -> bool:
        conn = self.servers.get(name)
        if not isinstance(conn, Connection) or self.closed:
            return False
        crashed = conn.state in ("failed", "stopped") and conn.start_ms is not None  # it had started
        last = self._restarted.get(name)
        return crashed and (last is None or time.monotonic() - last >= RESTART_EVERY)

    def settle(self, server: str, timeout: float = 5.0) -> None:
        """Wait (bounded) for a listing ``server`` is taking again after it said its tools changed."""
        conn = self.servers.get(server)
        task = getattr(conn, "_relisting", None)
        if task is None or task.done() or self._background.loop is None:
            return

        async def done() -> None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)

        future = self._background.submit(done())
        with contextlib.suppress(concurrent.futures.TimeoutError):
            future.result(timeout)

    def said(self) -> list[str]:
        """The lines about restarts not told yet (each once)."""
        lines, self._said = self._said, []
        return lines

    def not_sent(self, server: str, tool: str) -> str:
        """Why a call of ``tool`` was not sent to ``server``, which is down: its own sentence."""
        conn = self.servers.get(server)
        if conn is None:
            return f"{tool} was not sent: there is no MCP server {server!r}."
        if conn.state == "off":
            return f"{tool} was not sent: the MCP server {server!r} is switched off (enabled = false)."
        earlier = (conn.error or "").rstrip(".")
        when = "" if self._may_revive(server) else " (it is restarted on its own at most once a minute)"
        return (
            f"{tool} was not sent: the MCP server {server!r} was stopped after an earlier failure "
            f"({earlier}); /tools restart {server} starts it again{when}."
        )

    def wait(self, timeout: float | None = None) -> None:
        """Block until every server is ready or has failed (each has its own start deadline; ``timeout``
        bounds the wait as a whole, for the import of the SDK that comes first)."""
        self.start()
        connections = [c for c in self.servers.values() if isinstance(c, Connection)]
        if self._background.loop is None or not connections:
            return
        limit = timeout if timeout is not None else max(c.launch.start_timeout for c in connections) + 15

        async def all_ready() -> None:
            await asyncio.gather(*(c.wait_ready() for c in connections))

        future = self._background.submit(all_ready())
        try:
            future.result(limit)
        except concurrent.futures.TimeoutError:
            future.cancel()
        except BaseException:
            future.cancel()
            raise

    def pending(self) -> list[str]:
        """Servers still starting."""
        return [name for name, c in self.servers.items() if c.state == "starting"]

    # -- calls ---------------------------------------------------------------------------------------------
    def call(
        self,
        server: str,
        tool: str,
        args: dict[str, Any],
        timeout: float | None = None,
        *,
        answer: Callable[[RequestBack], Any] | None = None,
    ) -> Any:
        """Call ``tool`` on ``server`` and wait for its ``CallToolResult``; ``ServerProblem`` when the server
        failed, the SDK's exception when the server refused this call. The server's requests back meanwhile
        are answered here, on this thread, by ``answer`` (``None``: no one can answer them, so they are
        refused)."""
        conn = self.servers.get(server)
        if isinstance(conn, Connection) and conn.state != "ready" and self._may_revive(server):
            self.revive()  # the next need after a crash
            conn = self.servers.get(server)
        if not isinstance(conn, Connection) or self._background.loop is None or conn.state != "ready":
            raise ServerProblem(self.not_sent(server, tool))
        limit = timeout if timeout is not None else conn.launch.call_timeout
        inbox: queue.SimpleQueue[RequestBack | None] = queue.SimpleQueue()
        with self._lock:
            self._waiting.setdefault(server, []).append(inbox)
        future = self._background.submit(conn.call(tool, args, limit))
        future.add_done_callback(lambda _: inbox.put(None))
        try:
            while True:
                try:  # the loop times the call out first; this backstop counts from the last thing to happen
                    item = inbox.get(timeout=limit + 5)
                except queue.Empty:
                    future.cancel()
                    sentence = f"The MCP server {server!r} did not answer within {limit:g} s."
                    raise ServerProblem(sentence) from None
                if item is None:
                    return future.result()
                _answer(item, answer)
        except BaseException:  # Ctrl-C included: the call is cancelled on the loop, the server told
            future.cancel()
            raise
        finally:
            with self._lock:
                self._waiting[server].remove(inbox)
            while True:  # asked as the call ended: nothing waits for these any more
                try:
                    left = inbox.get_nowait()
                except queue.Empty:
                    break
                if left is not None:
                    left.refuse(f"The call of {tool} this request belonged to has ended.")

    def _deliver(self, back: RequestBack) -> bool:
        """On the loop: hand ``back`` to the latest call waiting on its server; False when none waits."""
        with self._lock:
            waiting = self._waiting.get(back.server)
            if not waiting:
                return False
            waiting[-1].put(back)
        return True

    # -- what the user is told -----------------------------------------------------------------------------
    def news(self) -> list[str]:
        """Failures not told yet (each once): the configuration's problems, and every server that failed."""
        fresh = []
        for sentence in self.problems:
            if ("", sentence) not in self._told:
                self._told.add(("", sentence))
                fresh.append(sentence)
        for name, conn in self.servers.items():
            if conn.state == "failed" and conn.error and (name, conn.error) not in self._told:
                self._told.add((name, conn.error))
                fresh.append(conn.error)
        return fresh

    def secrets(self) -> tuple[str, ...]:
        """Every value of the servers' ``env``/``headers`` worth masking, longest first."""
        found = {s for c in self.servers.values() if c.launch is not None for s in c.launch.secrets}
        return tuple(sorted(found, key=len, reverse=True))

    # -- end -----------------------------------------------------------------------------------------------
    def close(self, wait: float = CLOSE_WAIT) -> None:
        """Stop every server and the loop (a server that does not exit when its stdin closes is killed)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)
        if self._background.loop is None:
            return
        for conn in self.servers.values():
            if isinstance(conn, Connection):
                self._background.call_soon(conn.stop)
        deadline = time.monotonic() + wait
        for run in self._runs:
            with contextlib.suppress(Exception):
                run.result(max(0.0, deadline - time.monotonic()))
        self._background.close(max(0.5, deadline - time.monotonic()))


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _answer(back: RequestBack, answer: Callable[[RequestBack], Any] | None) -> None:
    """Answer one request back on the calling thread; the server always gets a reply, even on Ctrl-C."""
    if answer is None:
        from .requests_back import NOBODY  # with a server's first request back

        back.refuse(f"pyaichat cannot answer this {back.kind} request: {NOBODY}.")
        return
    try:
        back.reply(answer(back))
    except KeyboardInterrupt:
        back.refuse("The user interrupted pyaichat while it answered this request.")
        raise
    except Exception as exc:  # a bug here must not leave the server waiting, nor end the call
        back.refuse(f"pyaichat failed to answer this {back.kind} request ({type(exc).__name__}: {exc}).")


def _quiet_sdk_logs() -> None:
    """The SDK logs a server's faults (a line that is not JSON, a broken pipe) with tracebacks; with no
    logging set up, Python would print them on the user's terminal. A server's faults are told in one
    sentence instead (``/tools``), so the ``mcp`` loggers get a handler that drops them; a user who set up
    logging still receives them through the root logger."""
    import logging  # logging: only once MCP servers start

    for name in ("mcp", "httpx2"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
