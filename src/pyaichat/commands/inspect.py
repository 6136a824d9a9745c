"""Commands that show what the assistant would see, without an LLM: /tools, /inspect, /last_error, /audit.

They go through the runtime's capability calls like the assistant does, so the user sees the same bounded,
masked text under the same privacy level (and the calls appear in the audit log marked ``user``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capabilities import CapabilityResult, audit
from ..errors import PyAIChatError
from .table import command

if TYPE_CHECKING:
    from .host import CommandHost

_DOC_LINES = 8


def _call(ctrl: CommandHost, name: str, args: dict | None = None) -> CapabilityResult:
    return ctrl.runtime.call(name, args or {}, origin="user")


@command(
    "tools",
    "/tools [restart NAME | review NAME]",
    "List the capabilities the assistant can use, and your MCP servers: state, each tool's rule and why; "
    "restart NAME starts a server again; review NAME shows its changed tool definitions to accept them.",
)
def _tools(ctrl: CommandHost, arg: str) -> None:
    from ..agent.events import PageEvent, PageSection  # compiled at import: with the first /tools

    if arg:
        _tools_action(ctrl, arg)
        return

    box = ctrl.runtime.tools()  # described where they run (a kernel has its own plugins and walls)
    tools = [tool for tool in box.tools if tool.assistant]
    rows = []
    for tool in tools:
        params = ", ".join(tool.parameters.get("properties", {}))
        origin = "" if tool.source == "builtin" else f"  [{tool.source}]"
        gate = "" if tool.executable else "  [needs your approval]"
        rows.append((tool.name, f"({params}) {tool.summary}{origin}{gate}"))
    title = f"{len(tools)} capabilities (read-only; privacy level: {ctrl.config.privacy}):"
    sections = [PageSection(title=title, rows=rows)]
    if box.adapters:
        adapters = "\n".join(f"  {adapter}" for adapter in box.adapters)
        sections.append(
            PageSection(title="Adapters from plugins (how the assistant sees their types):", text=adapters)
        )
    if box.problems:
        sections.append(PageSection(text="\n".join(f"  ! {problem}" for problem in box.problems)))
    walls = "\n".join(f"  {line}" for line in ctrl.runtime.sandbox_walls())
    sections.append(PageSection(title="Sandbox walls:", text=walls))
    servers = ctrl.assistant.servers
    if servers is not None:
        sections.append(
            PageSection(text="\n".join(servers.status_lines(kernel=ctrl.runtime.describe() is not None)))
        )
    ctrl.emit(PageEvent(sections=sections))


def _tools_action(ctrl: CommandHost, arg: str) -> None:
    """``/tools restart NAME``, ``/tools review NAME``."""
    action, _, name = arg.partition(" ")
    name = name.strip()
    servers = ctrl.assistant.servers
    if action not in ("restart", "review") or not name:
        usage = "Usage: /tools, /tools restart NAME (start a server again), /tools review NAME (its changes)."
        ctrl.notice(usage, level="warning")
        return
    if servers is None:
        ctrl.notice("No MCP servers are configured (mcp_servers, mcp_config).", level="warning")
        return
    if action == "restart":
        ctrl.notice(servers.restart(name))
        return
    approve = ctrl.proposals.decide if ctrl.frontend.interactive else None
    servers.warm_up()
    servers.review(name, approve, lambda sentence: ctrl.notice(sentence))


@command("inspect", "/inspect <expr>", "Show type, summary and doc of a value, as the assistant sees it.")
def _inspect(ctrl: CommandHost, arg: str) -> None:
    if not arg:
        ctrl.notice(
            "Usage: /inspect <expr> — a name or attribute path such as df or df.columns.", level="warning"
        )
        return
    kind = _call(ctrl, "get_type", {"expr": arg})
    if not kind.ok:
        ctrl.notice(kind.error or "Cannot inspect that.", level="warning")
        return
    value = _call(ctrl, "get_repr", {"expr": arg})
    doc = _call(ctrl, "get_doc", {"expr": arg})
    parts = [kind.text, "", "value:", value.text if value.ok else f"({value.error})"]
    if doc.ok:
        lines = doc.text.splitlines()[1:]  # the first line repeats the expression and type
        shown = lines[:_DOC_LINES]
        parts += ["", "doc:", *shown]
        if len(lines) > len(shown):
            parts.append(f"… ({len(lines) - len(shown)} more lines: ask the assistant or use help())")
    ctrl.notice("\n".join(parts))


@command("last_error", "/last_error", "Show the last exception the way the assistant sees it.")
def _last_error(ctrl: CommandHost, arg: str) -> None:
    result = _call(ctrl, "get_last_exception")
    ctrl.notice(result.text if result.ok else (result.error or "Cannot read the last error."))


@command("audit", "/audit [n]", "Show the last n capability calls from the audit log (default 10).")
def _audit(ctrl: CommandHost, arg: str) -> None:
    try:
        count = int(arg) if arg else 10
    except ValueError:
        ctrl.notice("Usage: /audit [n] — n is a number of entries.", level="warning")
        return
    try:
        path, entries = ctrl.runtime.audit_log(count)  # the log is kept where the capabilities run
    except PyAIChatError as exc:
        ctrl.notice(f"Cannot read the audit log: {exc}", level="warning")
        return
    if not entries:
        state = "" if ctrl.config.audit else " (the audit log is off: audit = false)"
        ctrl.notice(f"No capability calls recorded in {path}{state}.")
        return
    header = f"Last {len(entries)} capability call{'s' if len(entries) != 1 else ''} ({path}):"
    ctrl.notice("\n".join([header, *(audit.format_entry(e) for e in entries)]))
