"""``/tools``: each MCP server in a few lines — state, where it runs, its tools (which run at once, which ask
first), calls, its requests back (what is on, answered, refused), the last error; masked like everything
else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .manager import Manager
from .trust import runs_without_asking


def status_lines(manager: Manager, mask: Callable[[str], str], *, kernel: bool = False) -> list[str]:
    """One block per server for ``/tools``: state, tools (and which run at once), calls, last error."""
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
            at_once = [t.name for t in conn.tools if runs_without_asking(read_only, t.annotations)]
            asks = [t.name for t in conn.tools if t.name not in at_once]
            if at_once:
                lines.append(f"    run at once: {', '.join(at_once)}")
            if asks:
                lines.append(f"    ask you first: {', '.join(asks)}")
            if conn.cut_tools:
                lines.append(f"    ({conn.cut_tools} more tools not offered: a server may list 500)")
    return lines


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
            parts.append(f"{kind} off (refused {refused[kind]}: {kind} = true turns it on)")
    roots = launch.roots if launch is not None else spec.roots
    if roots:
        parts.append("roots: " + ", ".join(roots))
    elif refused.get("roots"):
        parts.append(f"roots: none listed (refused {refused['roots']})")
    return ", ".join(parts)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"
