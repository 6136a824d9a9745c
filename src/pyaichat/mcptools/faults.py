"""What went wrong with one of the person's MCP servers, in one sentence for `/tools` and the assistant.

Plain functions over what the connection saw — the exception, the server's entry, the last line it wrote on
its standard error — so the wording lives in one place and the connection keeps only its state.
"""

from __future__ import annotations

import os
import sys

from ..configuration.mcp_server_spec import ServerSpec


def exited(name: str, when: str, last: str) -> str:
    """``The MCP server 'x' exited during a call to y; the last line it wrote: …``."""
    if not last:
        return f"The MCP server {name!r} exited {when}."
    return f"The MCP server {name!r} exited {when}; the last line it wrote: {last.rstrip('.')}."


def start_failure(name: str, launch: ServerSpec, exc: BaseException, last: str) -> str:
    """Why the server could not start (``last``: the last line it wrote, if it exited)."""
    if isinstance(exc, FileNotFoundError) and launch.transport == "stdio":
        where = f" in {launch.cwd}" if launch.cwd and not os.path.isdir(launch.cwd) else ""
        missing = f"the directory {launch.cwd}" if where else f"the command {launch.command!r}"
        return f"The MCP server {name!r} could not start: {missing} was not found.{_full_path(launch)}"
    if isinstance(exc, PermissionError):
        return f"The MCP server {name!r} could not start: {launch.command!r} cannot be run (permission)."
    if isinstance(exc, OSError) and launch.transport == "stdio":
        return f"The MCP server {name!r} could not start: {exc.strerror or exc}."
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    if type(exc).__name__ == "MCPError":
        if "closed" in text.lower():
            return exited(name, "while starting", last)
        return f"The MCP server {name!r} refused to start: {text}."
    if launch.transport != "stdio":
        return f"The MCP server {name!r} at {launch.where()} could not be reached: {text}."
    return f"The MCP server {name!r} failed to start: {type(exc).__name__}: {text}."


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside the exception groups anyio's task groups raise."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]  # an exception group's, read only when present
        exc = exc.exceptions[0]  # type: ignore[attr-defined]  # an exception group's, read only when present
    return exc


def offending(exc: Exception) -> str:
    """What the server wrote, cut short (pydantic's error carries the line), else the error itself."""
    try:
        line = exc.errors()[0].get("input")  # type: ignore[attr-defined]  # pydantic's ValidationError
    except Exception:
        line = None
    if isinstance(line, (str, bytes)):
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = " ".join(text.split())
        return repr(text if len(text) <= 120 else text[:119] + "…") + "."
    return " ".join(str(exc).split())[:160] + "."


def _full_path(launch: ServerSpec) -> str:
    """A bare command that this environment has (``pip install mcp-server-time`` into pyaichat's own
    ``.venv``) but ``PATH`` does not, where the environment is not activated: its full path, to copy."""
    command = launch.command or ""
    if os.sep in command:
        return ""
    import sysconfig  # only to name a missing command

    here = os.path.join(sysconfig.get_path("scripts") or os.path.dirname(sys.executable), command)
    return f' This environment has it: command = "{here}".' if os.access(here, os.X_OK) else ""
