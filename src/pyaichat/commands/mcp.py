"""``/mcp``: serve this session to outside agents (Claude Code, Codex, Cursor, VS Code) over MCP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .table import command

if TYPE_CHECKING:
    from .host import CommandHost

USAGE = "Usage: /mcp on [HOST] | off | status | token"


@command(
    "mcp",
    "/mcp on|off|status|token",
    "Serve this session to outside agents over MCP (read-only; they can only propose code to you).",
)
def _mcp(ctrl: CommandHost, arg: str) -> None:
    words = arg.split() or ["status"]
    action = words[0].lower()
    service = ctrl.mcp(create=action == "on")
    if action == "on" and len(words) <= 2 and service is not None:
        try:
            text = service.start(words[1] if len(words) == 2 else None)
        except (OSError, RuntimeError) as exc:
            ctrl.notice(str(exc), level="warning")
            return
        ctrl.notice(text, level="success")
    elif action == "off" and len(words) == 1:
        ctrl.notice(service.stop() if service is not None else "Not serving over MCP.")
    elif action == "status" and len(words) == 1:
        ctrl.notice(service.status() if service is not None else "Not serving over MCP. /mcp on starts it.")
    elif action == "token" and len(words) == 1:
        token = service.token() if service is not None else None
        if service is None or token is None:
            ctrl.notice("Not serving over MCP: there is no token.", level="warning")
        else:
            ctrl.notice(
                f"Authorization: Bearer {token}\n(for an HTTP client at {service.url}; it dies with /mcp off)"
            )
    else:
        ctrl.notice(USAGE, level="warning")
