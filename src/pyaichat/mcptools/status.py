"""``/tools``: each MCP server in a few lines — state, where it runs, its tools (which run at once, which ask
first), calls, its requests back (what is on, answered, refused), the last error; masked like everything
else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .manager import Manager
from .policy import Verdict, verdict

Decider = Callable[[str, Any, bool], Verdict]


def status_lines(
    manager: Manager,
    mask: Callable[[str], str],
    *,
    kernel: bool = False,
    decide: Decider | None = None,
    held: dict[str, set[str]] | None = None,
) -> list[str]:
    """One block per server for ``/tools``: state, calls, last error, and each tool with the rule that
    applies to it and where that comes from (``decide``: the session's ``policy.verdict``)."""
    decide = decide or (lambda server, tool, read_only: verdict(server, tool, read_only, (), None))
    held = held or {}
    where = "here, on your side, not in the kernel" if kernel else "here, on your side"
    lines = [f"MCP servers ({len(manager.specs)}; they run {where}):"]
    if not manager.started:
        lines.append("  (not started yet: they start when the assistant first needs them)")
    lines += [f"  ! {mask(p)}" for p in manager.problems]
    for spec in manager.specs:
        conn = manager.servers.get(spec.name)
        state = conn.state if conn is not None else "not started"
        trust = spec.trust or "ask"
        head = f"  {spec.name}: {state}, trust {trust}"
        if conn is not None and conn.state in ("ready", "stopped", "failed") and conn.tools:
            head += f", {_count(len(conn.tools), 'tool')}, {_count(conn.calls, 'call')}"
            if conn.failed_calls:
                head += f" ({conn.failed_calls} failed)"
        if conn is not None and conn.start_ms is not None:
            head += f", started in {conn.start_ms / 1000:.1f} s"
        lines.append(head)
        launch = getattr(conn, "launch", None)
        if launch is not None:
            lines.append(f"    {mask(launch.where())}")
        back = requests_back_line(spec, conn)
        if back:
            lines.append(f"    requests back: {mask(back)}")
        if conn is not None and conn.error:
            lines.append(f"    last error: {mask(conn.error)}")
        if conn is not None and conn.tools:
            read_only = bool(launch is not None and launch.read_only)
            lines += tool_lines(spec.name, conn.tools, read_only, decide, held.get(spec.name, set()))
            if not read_only:  # how its read-only tools would run at once, in the form of its own file
                lines.append(
                    f"    ({spec.how_to_set('trust', 'read-only')} lets its read-only tools run at once)"
                )
            if conn.cut_tools:
                lines.append(f"    ({conn.cut_tools} more tools not offered: a server may list 500)")
    return lines


WORDS = {"run": "run at once", "ask": "ask you first", "deny": "denied"}


def tool_lines(server: str, tools: list[Any], read_only: bool, decide: Decider, held: set[str]) -> list[str]:
    """A line per tool: what happens when the assistant calls it, and why (tools that share both, on one)."""
    groups: dict[str, list[str]] = {}
    for tool in tools:
        if tool.name in held:
            key = ("not offered", f"changed since you accepted it: /tools review {server}")
        else:
            found = decide(server, tool, read_only)
            key = (WORDS.get(found.action, found.action), found.source)
        groups.setdefault(key, []).append(tool.name)
    return [f"    {what}: {', '.join(names)}  ({why})" for (what, why), names in groups.items()]


def requests_back_line(spec: Any, conn: Any) -> str:
    """What the server may ask of us and what it did: ``sampling on (1 answered), elicitation off (refused
    2: elicitation = true turns it on), roots: /home/ann/work``; empty when it is all off and unused."""
    launch = getattr(conn, "launch", None)
    answered: dict[str, int] = getattr(conn, "answered", {}) or {}
    refused: dict[str, int] = getattr(conn, "refused", {}) or {}
    parts = []
    for kind in ("sampling", "elicitation"):
        on = bool(getattr(spec, kind, None))
        done = [f"{answered[kind]} answered"] if answered.get(kind) else []
        done += [f"{refused[kind]} refused"] if refused.get(kind) else []
        if on:
            parts.append(f"{kind} on" + (f" ({', '.join(done)})" if done else ""))
        elif refused.get(kind):
            parts.append(f"{kind} off (refused {refused[kind]}: {spec.how_to_set(kind, True)} turns it on)")
    roots = launch.roots if launch is not None else spec.roots
    if roots:
        parts.append("roots: " + ", ".join(roots))
    elif refused.get("roots"):
        parts.append(f"roots: none listed (refused {refused['roots']})")
    return ", ".join(parts)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"
