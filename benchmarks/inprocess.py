"""pyaichat with a heavy library's work moved into the REPL's own process: the arrangement the rule in
``pyaichat.ipc`` rejects, run only so that the rule is decided by measurement.

    python benchmarks/inprocess.py suggest [pyaichat arguments]   suggestions call litellm in the REPL
    python benchmarks/inprocess.py serve [pyaichat arguments]     /mcp on runs the MCP SDK's HTTP server
                                                                  on a thread of the REPL

``benchmarks/suggest.py --in-process`` starts it in a pty; ``benchmarks/mcp.py --in-process`` has
``python -m pyaichat`` apply ``patch("serve")`` (``inprocess_site/sitecustomize.py``). It prints nothing of
its own.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


class InProcessModel:
    """Stands in for ``agent.suggest.helper.ModelHelper``: litellm imported and called on the engine's loop
    (the import in a worker thread, as the assistant's background import does)."""

    starts = 0
    pid = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lib: Any = None

    async def start(self) -> None:
        if self._lib is None:
            from pyaichat.agent.llm.loader import import_litellm, prime

            self._lib = await asyncio.get_running_loop().run_in_executor(None, import_litellm)
            prime(self._lib)
            self.starts = 1

    async def __call__(self, request: Any, timeout: float) -> Any:
        from pyaichat.agent.llm.infill import complete_code

        await self.start()
        return await complete_code(self._lib, request, timeout=timeout)

    def in_flight(self) -> tuple[int, ...]:
        return ()  # a stale request is cancelled on the engine's loop, which aborts its HTTP request

    def abort(self, asked: tuple[int, ...]) -> bool:
        return True

    def close(self, timeout: float = 2.0) -> None:
        pass

    def memory_mb(self) -> None:
        return None

    def describe(self) -> None:
        return None


class ThreadFace:
    """Stands in for the HTTP face process (``ipc.Child``): the same server, on a thread of this process."""

    pid = os.getpid()
    returncode = None

    def __init__(self, listener: socket.socket, settings: dict[str, Any]) -> None:
        self._listener = socket.socket(fileno=os.dup(listener.fileno()))  # the caller closes its own
        self._settings = settings
        self._web: Any = None
        self._done = threading.Event()
        threading.Thread(target=self._run, name="pyaichat-mcp-face-thread", daemon=True).start()

    def _run(self) -> None:
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        from pyaichat.mcpserve.face import build_server
        from pyaichat.mcpserve.guard import Guard
        from pyaichat.mcpserve.link import LinkBackend, SessionLink

        settings = self._settings
        link = SessionLink.connect(settings["endpoint"], settings["token"], face="http", pid=os.getpid())
        hosts = list(settings["hosts"])
        app = build_server(LinkBackend(link), "http").streamable_http_app(
            transport_security=TransportSecuritySettings(
                enable_dns_rebinding_protection="*" not in hosts, allowed_hosts=hosts, allowed_origins=[]
            ),
        )
        config = uvicorn.Config(
            Guard(app, token=settings["token"], hosts=hosts),
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=1,
        )
        self._web = uvicorn.Server(config)
        self._web.install_signal_handlers = lambda: None  # not the main thread
        try:
            asyncio.run(self._web.serve(sockets=[self._listener]))
        finally:
            link.close()
            self._done.set()

    def poll(self) -> int | None:
        return 0 if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> int | None:
        return 0 if self._done.wait(timeout) else None

    def end(self, timeout: float = 2.0) -> None:
        if self._web is not None:
            self._web.should_exit = True
        self._done.wait(timeout)

    def kill(self) -> None:
        self.end(2.0)


def patch(what: str) -> None:
    if what == "suggest":
        from pyaichat.agent.suggest import helper

        helper.ModelHelper = InProcessModel  # type: ignore[misc, assignment]
    elif what == "serve":
        from pyaichat.mcpserve import service

        service._spawn_face = lambda listener, settings, log: ThreadFace(listener, settings)  # type: ignore


def main() -> int:
    patch(sys.argv[1])
    from pyaichat.cli import main as pyaichat

    return pyaichat(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
