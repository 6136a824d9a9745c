"""Which front end is serving, and what it can offer: one ``McpService`` per controller.

- the REPL and terminal IPython show each outside call as a quiet line above the prompt (their prompt
  patches stdout, so a line written from the serving thread lands above what the person is typing);
- a Jupyter kernel and piped input have no such place: calls are counted in ``/mcp status`` only;
- ``propose_code`` is offered only where a person at a terminal can approve it (the REPL, terminal IPython):
  not in Jupyter, where no prompt can ask, nor with piped input or headless.
"""

from __future__ import annotations

import shutil
import sys
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import PyAIChatError
from ..printable import printable
from .service import McpService

_services: weakref.WeakKeyDictionary[Any, McpService] = weakref.WeakKeyDictionary()


def front_end_of(ctrl: Any) -> tuple[str, bool]:
    """(what to call this session, whether a person sees a terminal) for ``ctrl``'s front end."""
    frontend = ctrl.frontend
    shell = getattr(frontend, "shell", None)
    if shell is not None:
        if getattr(shell, "pt_app", None) is not None:
            return "IPython", True
        if any(cls.__name__ == "ZMQInteractiveShell" for cls in type(shell).__mro__):
            return "IPython in Jupyter", False
        return "IPython (no terminal prompt)", False
    if getattr(frontend, "interactive", False):
        return "pyaichat REPL", True
    return "pyaichat (piped input)", False


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


def service_for(ctrl: Any, *, create: bool = True) -> McpService | None:
    service = _services.get(ctrl)
    if service is None and create:
        where, terminal = front_end_of(ctrl)
        runtime = ctrl.runtime  # (not the controller: the service outlives a shell's extension in atexit)
        show = terminal_show(lambda: bool(runtime.config.color)) if terminal else None
        proposer = None
        if terminal:  # someone at a terminal can decide: outside agents may propose code
            from .proposing import Proposer

            proposer = Proposer(ctrl.proposals, lambda: runtime.config, audited_as=runtime)
        service = McpService(
            runtime, ctrl.gate, where=where, show=show, proposer=proposer, runtime_for_calls=calls_runtime
        )
        _services[ctrl] = service
    return service


def calls_runtime(runtime: Any) -> Any:
    """The runtime outside calls go through. A session in this process is read where it is. A session in a
    Jupyter kernel gets a connection of its own for them: the kernel client the person's prompt uses (for
    completion while they type) is not safe to share with another thread. Raises ``RuntimeError`` (one
    sentence) when that connection cannot be made."""
    from ..runtime.local import LocalRuntime  # only for a kernel session served

    if isinstance(runtime, LocalRuntime):
        return runtime
    try:
        return runtime.reopen()  # a KernelRuntime: the other runtime there is
    except PyAIChatError as exc:
        raise RuntimeError(f"Cannot serve this kernel session: {exc}") from None
