"""The session's MCP service, as the front end that serves it says it is (``FrontEnd.where``,
``FrontEnd.interactive``): one ``McpService`` per session, built by ``assemble`` with the first ``/mcp on``.

- the REPL and terminal IPython show each outside call as a quiet line above the prompt (their prompt
  patches stdout, so a line written from the serving thread lands above what the person is typing);
- a Jupyter kernel and piped input have no such place: calls are counted in ``/mcp status`` only;
- ``propose_code`` is offered only where a person at a terminal can approve it (the REPL, terminal IPython):
  not in Jupyter, where no prompt can ask, nor with piped input or headless.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import PyAIChatError
from ..printable import printable
from .service import McpService

if TYPE_CHECKING:
    from ..ports import FrontEnd
    from ..proposals import Proposals
    from ..runtime import Runtime
    from .gate import SessionGate


def serve(runtime: Runtime, frontend: FrontEnd, gate: SessionGate, proposals: Proposals) -> McpService:
    """The session's MCP service (``assemble`` builds it with the first ``/mcp on``): named as the front end
    says (``FrontEnd.where``); quiet lines and ``propose_code`` only where a person sees a terminal
    (``FrontEnd.interactive``)."""
    terminal = frontend.interactive
    show = terminal_show(lambda: bool(runtime.config.color)) if terminal else None
    proposer = None
    if terminal:  # someone at a terminal can decide: outside agents may propose code
        from .proposing import Proposer

        proposer = Proposer(proposals, lambda: runtime.config, audited_as=runtime)
    # (the runtime, not the controller: the service outlives a shell's extension in atexit)
    return McpService(
        runtime, gate, where=frontend.where, show=show, proposer=proposer, runtime_for_calls=calls_runtime
    )


def terminal_show(color: Callable[[], bool]) -> Callable[[str], None]:
    """A quiet line on the terminal: dim, above the prompt, never wrapped onto a second line."""

    def show(line: str) -> None:
        width = shutil.get_terminal_size((100, 24)).columns
        if len(line) >= width:
            line = line[: max(width - 2, 10)] + "…"
        line = printable(line)  # a client's words (its tool arguments) cannot drive the terminal
        text = f"\x1b[2m{line}\x1b[0m\n" if color() else line + "\n"  # our style around it
        sys.stdout.write(text)
        sys.stdout.flush()

    return show


def calls_runtime(runtime: Runtime) -> Runtime:
    """The runtime outside calls go through. A session in this process is read where it is. A session in a
    Jupyter kernel gets a connection of its own for them: the kernel client the person's prompt uses (for
    completion while they type) is not safe to share with another thread. Raises ``RuntimeError`` (one
    sentence) when that connection cannot be made."""
    from ..runtime.kernel import KernelRuntime  # only for a kernel session served

    if not isinstance(runtime, KernelRuntime):
        return runtime
    try:
        return runtime.reopen()
    except PyAIChatError as exc:
        raise RuntimeError(f"Cannot serve this kernel session: {exc}") from None
