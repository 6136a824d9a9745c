"""One MCP server (the SDK's low-level ``Server``) over a backend: the part every face shares.

The backend is plain (``tools()``, and ``call(...)`` a coroutine returning a result dict, which never blocks
the event loop, so other clients are served meanwhile); the handlers turn its result into MCP content:
the text, and the figures as image content sized for clients to hold, the images of one result together
(``images``). A failed call is a result with ``isError`` and one sentence, as MCP asks, never a protocol
error. While ``propose_code`` waits for the person, the client is sent a progress notification every few
seconds (when it asked for them).
"""

from __future__ import annotations

from typing import Any, Protocol

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from ..untrusted import RULE, span
from ..version import __version__
from .clients import safe_name
from .guard import CLIENT_KEY
from .images import fit_all
from .tools import PROPOSE

PROGRESS_EVERY = 5.0
INSTRUCTIONS = (
    "A person's live Python session (pyaichat). Call get_session_picture first to see its variables, recent "
    "inputs and last error; the other tools read values without changing anything. Nothing you send runs in "
    "the session unless the person approves it (propose_code, where offered). " + RULE
)


class FaceBackend(Protocol):
    """What a face needs from the session it serves (``link.SessionLink`` through a ``LinkBackend``, the
    bridge's switchboard, or a headless kernel). ``tools`` may block (a worker thread runs it); ``call`` is a
    coroutine on the face's event loop (a backend that blocks hands its work to a thread itself)."""

    def tools(self) -> list[dict[str, Any]]: ...

    async def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]: ...


def client_of(ctx: Any) -> str:
    """The client's own name (``clientInfo.name``), made safe to print."""
    try:
        params = ctx.session.client_params
        return safe_name(params.client_info.name if params is not None else None)
    except Exception:
        return "client"


def key_of(ctx: Any, client: str) -> str:
    """One key per MCP session: the Streamable HTTP session id, else the client's name (stdio, and HTTP
    clients of the 2026 wire, which has no session). Written into the request's scope for the ``guard``,
    which names the client when a later request on its connection comes without the token."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    key = safe_name(session_id, client) if session_id else client
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        scope[CLIENT_KEY] = key
    return key


def to_result(result: dict[str, Any]) -> types.CallToolResult:
    ok = bool(result.get("ok"))
    text = str(result.get("text") or "") if ok else str(result.get("error") or "The call failed.")
    fitted, left_out = fit_all([str(url) for url in result.get("images") or []])
    if left_out:
        text += (
            f"\n({left_out} figure image{'s' if left_out > 1 else ''} left out to keep this result small "
            "enough for an MCP client; pass figure to get one at a time.)"
        )
    # what the session holds is data to the agent too: inside a span its content cannot close (``untrusted``)
    content: list[Any] = [types.TextContent(type="text", text=span(text))]
    content += [types.ImageContent(type="image", data=data, mime_type="image/png") for data in fitted]
    return types.CallToolResult(content=content, is_error=not ok)


def build_server(backend: FaceBackend, transport: str, *, instructions: str = INSTRUCTIONS) -> Server[Any]:
    """The MCP server for ``backend``; ``transport`` (``http``, ``stdio``) goes into the session's audit."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = await anyio.to_thread.run_sync(backend.tools)
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tools])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        client = client_of(ctx)
        key = key_of(ctx, client)
        name, args = params.name, params.arguments or {}

        if name != PROPOSE:
            result = await backend.call(key, client, transport, name, args)
            if result.get("images"):  # scaling PNGs takes a while: not on the loop other clients use
                return await anyio.to_thread.run_sync(to_result, result)
            return to_result(result)
        box: list[dict[str, Any]] = []
        async with anyio.create_task_group() as group:

            async def wait_for_the_person() -> None:
                box.append(await backend.call(key, client, transport, name, args))
                group.cancel_scope.cancel()

            group.start_soon(wait_for_the_person)
            ticks = 0
            while True:
                await anyio.sleep(PROGRESS_EVERY)
                ticks += 1
                await ctx.session.report_progress(
                    ticks, None, "waiting for the person at the session to decide"
                )
        return to_result(box[0])

    schemas: dict[str, Any] = {}

    def input_schema(name: str) -> Any:
        """A tool's input schema for the SDK's header check on Streamable HTTP (2026-07-28), which would
        otherwise run the whole tools/list handler before every call. Only the HTTP face is asked, whose
        table is the session's and fixed."""
        if name not in schemas:
            schemas.clear()
            schemas.update({tool["name"]: tool.get("inputSchema") for tool in backend.tools()})
        return schemas.get(name)

    return Server(
        "pyaichat",
        version=__version__,
        title="pyaichat live Python session",
        instructions=instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
