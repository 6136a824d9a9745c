"""One MCP server: started, listed and called through the official ``mcp`` SDK, on the manager's event loop.

The connection is one long-lived task (``run``): it enters the SDK's ``Client`` (which spawns a stdio server
or opens a Streamable HTTP / SSE session), lists the tools, says it is ready, and holds the client open until
it is told to stop. Entering and leaving in one task is what the SDK's task groups and cancel scopes need;
calls come from other tasks on the same loop.

Whatever goes wrong becomes one sentence (``error``) and the state ``failed``; the assistant goes on without
the server for the rest of the session:

- it cannot start (no such command, a refused handshake, an unreachable url), or exits while starting;
- it does not finish starting and listing its tools within its deadline (``mcp_start_timeout``);
- it writes anything on its output that is not JSON-RPC (the specification forbids it; a server that does is
  out of step with its client, and its answers can no longer be matched to questions);
- it exits during a call, or does not answer a call within ``mcp_call_timeout`` (it is then stopped).

Its standard error is read into a small tail (``stderr``: the last line goes into the sentence when it dies),
never onto the user's terminal, however much it writes.

Requests the server makes of us (``requests_back``): ``roots`` are answered here from the entry; sampling and
elicitation, where the user turned them on, are handed (``deliver``) to the thread waiting for one of this
server's calls, and the time they take is not counted against that call's deadline; whatever is off is
refused with a sentence that says how to turn it on, and counted for ``/tools``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

from ..configuration.mcp_server_spec import ServerSpec
from .faults import exited, leaf, offending, start_failure
from .requests_back import ELICITATION, ROOTS, SAMPLING, Refused, Reply, RequestBack, turned_off
from .stderr import Tail

MAX_TOOLS = 500  # tools listed per server (a server listing more is cut, and says so in /tools)
MAX_PAGES = 50


class ServerProblem(Exception):
    """The server itself failed (not the one call): ``str()`` is the sentence for the user."""


class Connection:
    """One server of the session (see the module docstring). Every method runs on the manager's loop."""

    def __init__(self, launch: ServerSpec) -> None:
        self.launch = launch
        self.name = launch.name
        self.state = "starting"  # starting → ready → stopped, or failed at any point
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool, as listed at start
        self.cut_tools = 0  # tools past MAX_TOOLS
        self.calls = 0
        self.failed_calls = 0
        self.start_ms: float | None = None
        self.server_info: str = ""
        self.refused: dict[str, int] = {}  # requests back refused, by kind (sampling, elicitation, roots)
        self.answered: dict[str, int] = {}  # requests back answered, by kind
        # hands a request back to the thread waiting for one of this server's calls (False: none waits)
        self.deliver: Callable[[RequestBack], bool] | None = None
        self.on_listed: Callable[[Connection], None] | None = None  # once the first listing is in
        self._answering = 0  # requests back being answered now
        self._answering_s = 0.0  # seconds spent answering them, over the session
        self._client: Any = None
        self._scope: Any = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()  # set once ready or failed
        self._stderr = Tail(self._stderr_ended)
        self._stopping = False
        self._current: str | None = None  # the tool being called
        self._relisting: asyncio.Task[None] | None = None

    # -- the long-lived task -------------------------------------------------------------------------------
    async def run(self) -> None:
        """Start, list, serve until told to stop; record any failure as one sentence. The SDK is imported
        first (once per session, ~2 s): its import is not the server's start-up, and its deadline."""
        try:
            import anyio  # the SDK's async library: on the manager's thread only
            import mcp.client.client  # noqa: F401
        except ImportError:
            from ..extras import install_command  # only to say how to install it

            self._fail(
                f"The MCP server {self.name!r} cannot start: the mcp package is not installed "
                f"({install_command('mcp')})."
            )
            return
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        deadline = loop.call_later(self.launch.start_timeout, self._start_deadline)
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with contextlib.AsyncExitStack() as stack:
                    client = await self._enter_client(stack)
                    self._refuse_clearly(client)
                    self._stderr.release()  # the server holds its own copy now: the pipe ends when it exits
                    self.tools = await self._list_tools(client)
                    info = client.server_info
                    self.server_info = f"{info.name} {info.version}" if info is not None else ""
                    if self.on_listed is not None:
                        self.on_listed(self)  # pins on first use, as listed (``review.Reviews.listed``)
                    self._client = client
                    self.start_ms = (time.perf_counter() - started) * 1000
                    if self.state == "starting":
                        self.state = "ready"
                    self._ready.set()
                    await self._stop.wait()
        except Exception as exc:
            await self._last_words()
            failed = self.error if self.state == "failed" and self.error else None
            self._fail(failed or start_failure(self.name, self.launch, leaf(exc), self._stderr.last_line()))
        except BaseException as exc:  # KeyboardInterrupt cannot reach this thread; a cancelled task can
            self._fail(f"The MCP server {self.name!r} was stopped while starting ({type(exc).__name__}).")
            raise
        finally:
            deadline.cancel()
            self._client = None
            if self.state in ("starting", "ready"):
                self.state = "stopped"
            self._ready.set()

    async def _enter_client(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp.client.client import Client  # the SDK: on the manager's thread, at the first need

        launch = self.launch
        if launch.transport == "stdio":
            # the SDK: only for a server of this transport
            from mcp.client.stdio import StdioServerParameters, stdio_client

            errlog = await self._stderr.pipe(stack)
            params = StdioServerParameters(
                command=launch.command or "",
                args=list(launch.args),
                env={k: v.get_secret_value() for k, v in launch.env},
                cwd=launch.cwd,
            )
            transport: Any = stdio_client(params, errlog=errlog)
        else:
            headers = {k: v.get_secret_value() for k, v in launch.headers}
            if launch.transport == "sse":
                from mcp.client.sse import sse_client  # as above

                transport = sse_client(launch.url or "", headers=headers, timeout=launch.start_timeout)
            else:
                from mcp.client.streamable_http import streamable_http_client  # as above
                from mcp.shared._httpx_utils import create_mcp_http_client

                http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                transport = streamable_http_client(launch.url or "", http_client=http)
        client = Client(
            transport,
            message_handler=self._on_message,
            list_roots_callback=self._roots if launch.roots else None,
            # a callback declares the capability: only what the user turned on is declared
            sampling_callback=self._sampling if launch.sampling else None,
            elicitation_callback=self._elicitation if launch.elicitation else None,
            read_timeout_seconds=None,
        )
        return await stack.enter_async_context(client)

    def _refuse_clearly(self, client: Any) -> None:
        """A request back the user did not turn on is refused in words that say how to turn it on (the
        SDK's own refusal is "Sampling not supported"), and counted. The SDK has no seam for a refusal's
        words that does not also declare the capability, so its session's callbacks are replaced once the
        capabilities are declared; an SDK without them keeps its own refusal."""
        session = client.session
        launch = self.launch
        for kind, attr, on in (
            (SAMPLING, "_sampling_callback", launch.sampling),
            (ELICITATION, "_elicitation_callback", launch.elicitation),
            (ROOTS, "_list_roots_callback", bool(launch.roots)),
        ):
            if not on and hasattr(session, attr):
                setattr(session, attr, self._refuser(kind))

    def _refuser(self, kind: str) -> Callable[..., Any]:
        async def refuse(*_: Any) -> Any:
            self.refused[kind] = self.refused.get(kind, 0) + 1
            return _in_sdk_terms(Refused(turned_off(self.name, kind)))

        return refuse

    async def _sampling(self, context: Any, params: Any) -> Any:
        return await self._request_back(SAMPLING, params)

    async def _elicitation(self, context: Any, params: Any) -> Any:
        return await self._request_back(ELICITATION, params)

    async def _request_back(self, kind: str, params: Any) -> Any:
        """Have the thread waiting for one of this server's calls answer (see ``requests_back``); refused
        when none waits (a server asking out of the blue, with no call of ours to relate it to)."""
        loop = asyncio.get_running_loop()
        back = RequestBack(self.name, kind, params, loop)
        deliver = self.deliver
        if deliver is None or not deliver(back):
            self.refused[kind] = self.refused.get(kind, 0) + 1
            return _in_sdk_terms(
                Refused(
                    f"pyaichat answers {kind} requests from the MCP server {self.name!r} only while the "
                    "assistant is calling one of its tools."
                )
            )
        self._answering += 1
        started = loop.time()
        try:
            result = await back.answer
        finally:
            self._answering -= 1
            self._answering_s += loop.time() - started
        counts = self.refused if isinstance(result, Refused) and result.code is None else self.answered
        counts[kind] = counts.get(kind, 0) + 1  # the person's "no" is an answer; a refusal is not
        return _in_sdk_terms(result)

    def _stderr_ended(self) -> None:
        """The server and every process it started have exited (nobody holds the pipe any more)."""
        if not self._stopping and self.state == "ready":
            when = f"during a call to {self._current}" if self._current else "while idle"
            self._fail(self._exited(when))

    async def _list_tools(self, client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or len(tools) >= MAX_TOOLS:
                break
        self.cut_tools = max(0, len(tools) - MAX_TOOLS)
        return tools[:MAX_TOOLS]

    async def _on_message(self, message: Any) -> None:
        """Transport faults arrive here as exceptions: a line on stdout that is not JSON-RPC ends the
        server (its later answers could no longer be trusted to match our questions)."""
        if type(message).__name__ == "ToolListChangedNotification":
            # listed again off the handler (it runs inline with the session's reading); the next turn
            # compares the new listing with the pins (``review``), and a call checks its tool is unchanged
            self._relisting = asyncio.get_running_loop().create_task(self._relist())
            return
        if isinstance(message, Exception):
            self._fail(
                f"The MCP server {self.name!r} wrote something that is not MCP (JSON-RPC) on its output, "
                f"so it was stopped: {offending(message)}"
            )

    async def _relist(self) -> None:
        """The server says its tools changed (``notifications/tools/list_changed``): list them again."""
        client = self._client
        if client is None or self.state != "ready":
            return
        try:
            self.tools = await self._list_tools(client)
        except Exception as exc:  # a server that cannot list its tools any more is not trusted to run them
            said = f"The MCP server {self.name!r} said its tools changed, then failed to list them"
            self._fail(f"{said}: {exc}")

    async def _roots(self, context: Any) -> Any:
        """The directories the user listed as this server's roots (``roots = [...]`` in its entry)."""
        import mcp_types  # with the first roots request

        self.answered[ROOTS] = self.answered.get(ROOTS, 0) + 1
        return mcp_types.ListRootsResult(
            roots=[
                mcp_types.Root(uri="file://" + path, name=os.path.basename(path))
                for path in self.launch.roots
            ]
        )

    # -- state ---------------------------------------------------------------------------------------------
    async def wait_ready(self) -> None:
        await self._ready.wait()

    def _start_deadline(self) -> None:
        if self.state == "starting":
            self._fail(
                f"The MCP server {self.name!r} did not start and list its tools within "
                f"{self.launch.start_timeout:g} s ({self.launch.setting('start')}), so it was stopped."
            )

    def _fail(self, sentence: str) -> None:
        """Record the first failure, stop the server (at once: it is not trusted to exit on its own)."""
        if self.state == "failed":
            return
        self.state = "failed"
        self.error = sentence
        self._ready.set()
        if self._scope is not None:
            self._scope.cancel()

    def stop(self) -> None:
        """Ask the server to end (its stdin closes; it is killed if it does not exit within a few seconds)."""
        self._stopping = True
        self._stop.set()
        if self.state != "ready" and self._scope is not None:
            self._scope.cancel()

    # -- calls ---------------------------------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> Any:
        """The tool's ``CallToolResult``; ``ServerProblem`` when the server failed (it is then stopped), and
        any other exception for a failure of this call alone (the server refused the arguments, say)."""
        from mcp.shared.exceptions import MCPError  # with the first call
        from mcp_types import CONNECTION_CLOSED

        client = self._client
        if self.state != "ready" or client is None:
            raise ServerProblem(self.error or f"The MCP server {self.name!r} is not running.")
        self.calls += 1
        self._current = tool
        try:
            return await self._within(client.call_tool(tool, args), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            self.failed_calls += 1
            self._fail(
                f"The MCP server {self.name!r} did not answer a call to {tool} within {timeout:g} s "
                f"({self.launch.setting('call')}), so it was stopped."
            )
            raise ServerProblem(self.error) from None
        except MCPError as exc:
            self.failed_calls += 1
            if exc.code == CONNECTION_CLOSED or self.state == "failed":
                await self._last_words()
                self._fail(self._exited(f"during a call to {tool}"))
                raise ServerProblem(self.error) from None
            raise
        except Exception:
            self.failed_calls += 1
            if self.state == "failed":
                raise ServerProblem(self.error) from None
            raise
        finally:
            self._current = None

    async def _within(self, call: Any, timeout: float) -> Any:
        """``call``'s result within ``timeout`` seconds of the server's own time: the time spent answering
        its requests back (the person reading a panel, the model writing) does not count. ``TimeoutError``
        past it; the call is cancelled with its caller."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(call)
        deadline = loop.time() + timeout
        answered_before = self._answering_s
        try:
            while True:
                if self._answering:
                    wait = 0.25  # the person or the model is busy: look again soon
                else:
                    wait = deadline + (self._answering_s - answered_before) - loop.time()
                    if wait <= 0:
                        raise TimeoutError
                done, _ = await asyncio.wait({task}, timeout=wait)
                if done:
                    return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    # -- sentences -----------------------------------------------------------------------------------------
    async def _last_words(self, wait: float = 1.0) -> None:
        """Give a server whose output just closed a moment to finish writing its stderr (its last line goes
        into the sentence); a fault that closed the connection has recorded its own sentence by then."""
        if not self._stderr.piped:
            return
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(self._stderr.ended.wait(), wait)

    def _exited(self, when: str) -> str:
        return exited(self.name, when, self._stderr.last_line())


def _in_sdk_terms(reply: Reply) -> Any:
    """A request back's answer (``requests_back``) as the SDK sends it."""
    import mcp_types  # the SDK's types: with the first request from a server

    from .approval import Answer, SampledReply

    if isinstance(reply, SampledReply):
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=reply.text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )
    if isinstance(reply, Answer):
        return mcp_types.ElicitResult(action=reply.action, content=reply.content)  # type: ignore[arg-type]  # the SDK's Literal of actions, checked by Answer
    code = mcp_types.INVALID_REQUEST if reply.code is None else reply.code
    return mcp_types.ErrorData(code=code, message=reply.message)
