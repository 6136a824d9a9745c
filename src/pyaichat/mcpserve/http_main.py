"""The HTTP face process: ``python -m pyaichat.mcpserve.http_main``, started by ``/mcp on``.

It gets the listening socket (already bound by the session on its loopback port) and its settings on stdin,
connects to the session's endpoint, and serves MCP's Streamable HTTP transport with the SDK behind the
``guard``. It ends when the session's process ends (stdin closes), when the session stops serving (the link
closes), or when it is killed by ``/mcp off``. The SDK's own Host/Origin check stays on too.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from typing import Any

from ..ipc import Channel, ChannelClosed
from ..printable import show
from .endpoint import MAX_REQUEST


def main() -> int:
    parent = Channel.over_pipes(sys.stdin.buffer, None, MAX_REQUEST)
    try:
        settings: dict[str, Any] = parent.receive()
    except ChannelClosed:
        show("pyaichat mcp http: no settings on stdin", file=sys.stderr)
        return 2
    listener = socket.socket(fileno=int(settings["fd"]))

    import uvicorn  # the SDK and its server: only in this process
    from mcp.server.transport_security import TransportSecuritySettings

    from .face import build_server
    from .guard import Guard
    from .link import LinkBackend, SessionLink

    try:  # the session that started this process listens there
        link = SessionLink.connect(settings["endpoint"], settings["token"], face="http", pid=os.getppid())
    except ChannelClosed as exc:
        show(f"pyaichat mcp http: {exc}", file=sys.stderr)
        return 1
    hosts = list(settings["hosts"])
    server = build_server(LinkBackend(link), "http")
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection="*" not in hosts, allowed_hosts=hosts, allowed_origins=[]
        ),
    )
    guarded = Guard(app, token=settings["token"], hosts=hosts, on_refused=link.refused)  # type: ignore[arg-type]  # Starlette is an ASGI app; its stubs type the scope more narrowly
    config = uvicorn.Config(
        guarded, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1
    )
    web = uvicorn.Server(config)

    def end_when(event_source: Any) -> None:
        try:
            event_source()
        except ChannelClosed:
            pass
        web.should_exit = True

    threading.Thread(target=end_when, args=(parent.receive,), daemon=True).start()  # the session ended
    threading.Thread(target=end_when, args=(link.wait_closed,), daemon=True).start()
    asyncio.run(web.serve(sockets=[listener]))
    os._exit(0)  # threads blocked on the session's link must not hold the exit


if __name__ == "__main__":
    sys.exit(main())
