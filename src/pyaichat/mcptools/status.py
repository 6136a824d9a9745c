"""``/tools``: each MCP server in a few lines — state, where it runs, its tools (which run at once, which ask
first), calls, the last error; masked like everything else."""

from __future__ import annotations

from collections.abc import Callable

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


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"
