"""``pyaichat mcp [--existing [FILE] | --kernel [NAME] | --server URL]``: the stdio MCP server an agent
starts.

Without flags it serves the person's running session (``bridge.Switchboard``). With ``--existing``,
``--kernel`` or ``--server`` (a kernel on a Jupyter Server: the token from ``JUPYTER_TOKEN`` or ``--token``,
never asked, since stdin is the agent's) it serves a Jupyter kernel's namespace with no terminal at all: the
tools run in the kernel through the kernel runtime (the same helper the REPL uses), only the read-only ones
are offered, and calls are answered one at a time — the kernel itself answers them between its cells, so a
call waits while a cell runs and is told the kernel is busy after the bound.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..configuration.config import load_config
from ..errors import ConfigError, PyAIChatError
from ..printable import show


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyaichat mcp",
        description="A stdio MCP server: your running pyaichat session (started with /mcp on or --mcp), or a "
        "Jupyter kernel's namespace read-only.",
    )
    from ..configuration.kernel_flags import (
        add_kernel_flags,  # the flags' module: only for pyaichat mcp's parser
    )

    add_kernel_flags(parser, interactive=False)
    parser.add_argument("--config", help="config file (default: $XDG_CONFIG_HOME/pyaichat/config.toml)")
    return parser


def main(argv: Sequence[str]) -> int:
    flags = build_parser().parse_args(list(argv))
    try:
        import mcp  # noqa: F401  (the SDK: only here and in the HTTP face)
    except ImportError:
        from ..extras import install_command  # only to say how

        show(f"pyaichat mcp needs the MCP SDK: {install_command('mcp')}.", file=sys.stderr)
        return 2
    from ..configuration.kernel_flags import server_misuse  # as above

    misuse = server_misuse(vars(flags))
    if misuse:
        show(f"pyaichat mcp: {misuse}", file=sys.stderr)
        return 2
    if flags.existing is not None or flags.kernel or flags.server is not None:
        return _headless(flags)
    from .bridge import Switchboard  # the bridge: only when no session is asked for by name

    return _serve(Switchboard(), "stdio")


def _headless(flags: Any) -> int:
    from ..runtime import connect  # Jupyter: only with these flags
    from .backend import LocalBackend
    from .bridge import HeadlessBackend
    from .gate import SessionGate

    try:
        config = load_config({"color": False}, config_file=flags.config)
    except ConfigError as exc:
        show(f"pyaichat mcp: {exc}", file=sys.stderr)
        return 2
    try:
        if flags.server is not None:
            from ..runtime.jupyter_server.access import open_server  # a kernel on a Jupyter Server

            found = open_server(vars(flags), config, interactive=False)
            if found is None:  # --list: the kernels were listed, there is nothing to serve
                return 0
            runtime = found
        else:
            runtime = (
                connect.start(flags.kernel, config)
                if flags.kernel
                else connect.attach(flags.existing or None, config)
            )
    except PyAIChatError as exc:
        show(f"pyaichat mcp: {exc}", file=sys.stderr)
        return 1
    try:
        problem = runtime.kernel.helper_problem
        if problem:
            show(f"pyaichat mcp: {problem}", file=sys.stderr)
        gate = SessionGate()
        gate.attach()  # nobody types here: calls only wait for each other (one kernel connection)
        path = runtime.kernel.connection_path
        # the pid and directory the picture names next to this are pyaichat mcp's own
        which = f" ({os.path.basename(path)})" if path else ""
        if flags.server is not None:
            which = f" ({runtime.describe().split(';')[0]})"
        where = f"pyaichat mcp serving a Jupyter kernel{which} read-only"
        local = LocalBackend(runtime, gate, where=where)
        return _serve(HeadlessBackend(local), "stdio")
    finally:
        runtime.close()


def _serve(backend: Any, transport: str) -> int:
    import anyio  # the MCP SDK: only in this process, once it serves
    from mcp.server.stdio import stdio_server

    from .face import build_server

    server = build_server(backend, transport)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        return 130
    return 0
