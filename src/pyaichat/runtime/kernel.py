"""The kernel runtime, host side: the user's session in a Jupyter kernel (``--existing`` / ``--kernel``).

- ``run(source)`` is an ``execute_request`` (``execute.CellRun``): output streams back as it arrives,
  ``input()`` in the kernel is answered here, Ctrl-C interrupts the *kernel*;
- completion and "is this input complete?" are the kernel's own ``complete_request`` and
  ``is_complete_request`` (it knows its magics);
- everything else — capabilities and their tools, the picture, names, history, proposals' previews and undo,
  snapshots — is an operation of ``kernel_link.OPERATIONS``: one request to the local runtime that pyaichat's
  helper runs inside the kernel (``kernel_helper``), inherited from ``kernel_link.LinkedRuntime``. It is
  bounded, masked and audited there, where the data is; only its bounded answer comes back.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..configuration.config import Config, Settings
from ..errors import PyAIChatError
from ..printable import show
from ..records import ExecResult, LastError
from ..session import input_is_complete
from . import KernelUnavailable
from .completion import Completion
from .execute import CellRun
from .kernel_connection import ANSI, OUTPUT_LOST, KernelConnection
from .kernel_link import BY_NAME, LinkedRuntime

if TYPE_CHECKING:
    from ..records import HistoryEntry


class KernelRuntime(LinkedRuntime):
    """A ``Runtime`` whose namespace lives in a Jupyter kernel: the members of ``kernel_link.AT_THE_HOST`` are
    written here, every other one is an operation sent to the kernel (``kernel_link.OPERATIONS``)."""

    def __init__(self, kernel: KernelConnection, settings: Settings | Config | None = None) -> None:
        self.kernel = kernel
        self.settings = Settings.of(settings)
        self._last_error: LastError | None = None
        self._completed_once = False  # the first completion of a kernel imports jedi

    @property
    def config(self) -> Config:  # type: ignore[override]  # read-only here: settings.replace changes it
        return self.settings.current()

    # -- Python mode -----------------------------------------------------------------------------------------
    def run(self, source: str) -> ExecResult:
        """Run ``source`` in the kernel like ``jupyter console`` does, streaming its output here."""
        with self.kernel.lock:
            return self._run(source)

    def _run(self, source: str) -> ExecResult:
        kernel = self.kernel
        if not kernel.alive():
            raise kernel.dead()
        kernel.drain_iopub()
        if kernel.restarted:
            kernel.reset_after_restart()
            show(kernel.restart_sentence(), file=kernel.err)
        started = time.perf_counter()
        msg_id = kernel.client.execute(source, allow_stdin=True)
        run = CellRun(kernel, msg_id)
        run.wait()
        count = run.reply.get("execution_count") if run.reply else None
        if isinstance(count, int):
            if count <= kernel.execution_count or kernel.restarted:  # counts only grow in one kernel process
                kernel.reset_after_restart()
                lost = "" if run.heard else " " + OUTPUT_LOST  # nothing of this input's reached us
                show(kernel.restart_sentence() + lost, file=kernel.err)
            kernel.execution_count = count
        result = ExecResult(ok=run.ok, number=count or kernel.execution_count + 1, output="".join(run.kept))
        result.duration_ms = (time.perf_counter() - started) * 1000
        result.interrupted = run.ename == "KeyboardInterrupt"
        if run.ename and not result.interrupted:
            result.error = self._last_error = LastError(
                type_name=run.ename,
                message=run.evalue,
                frames=[],
                source=source,
                input_number=count,
                segment=None,
                lineno=None,
                formatted=ANSI.sub("", "\n".join(run.traceback)),
            )
        if run.exit_requested:
            raise SystemExit(0)
        return result

    @property
    def last_error(self) -> LastError | None:
        """The last error of an input run from here (the kernel's own record stays in the kernel)."""
        return self._last_error

    def complete(self, text: str, cursor: int) -> list[Completion]:
        """The kernel's completions (``complete_request``), each replacing the span the kernel names."""
        with self.kernel.lock:
            msg_id = self.kernel.client.complete(text, cursor)
            # IPython's first completion imports jedi (~1 s, several on a busy machine): wait longer for it.
            reply = self.kernel.shell_reply(msg_id, 3.0 if self._completed_once else 10.0)
        if reply is None:
            return []
        self._completed_once = True
        content = reply["content"]
        if content.get("status") != "ok":
            return []
        start = content.get("cursor_start", cursor)
        return [Completion(match, start - cursor) for match in content.get("matches") or []]

    def is_complete(self, text: str) -> bool:
        """Would Enter run ``text``? The kernel decides (``is_complete_request``: it knows cell magics such as
        ``%%time``); when it does not answer at once (busy), Python's own rules do. A blank last line is the
        blank line that ends a block, as in IPython."""
        if not text.strip():
            return True
        lines = text.rsplit("\n", 1)
        code = text.rstrip(" \t") + "\n" if len(lines) == 2 and not lines[1].strip() else text
        with self.kernel.lock:
            reply = self.kernel.shell_reply(self.kernel.client.is_complete(code), 0.5)
        status = reply["content"].get("status") if reply is not None else "unknown"
        return input_is_complete(text) if status == "unknown" else status != "incomplete"

    def describe(self) -> str:
        return self.kernel.describe()

    def status_lines(self) -> list[str]:
        return self.kernel.status_lines()

    def audit_key(self) -> object:
        return self  # the host's records of this kernel session (the kernel keeps its own log)

    def close(self) -> None:
        self.kernel.close()

    def reopen(self) -> KernelRuntime:
        """This session over a second connection to its kernel (``KernelConnection.reopen``), with the same
        settings."""
        return KernelRuntime(self.kernel.reopen(), self.config)

    def exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not BY_NAME[request["op"]].gives_way:
            reply = self.kernel.request(request, timeout)
            if request["op"] == "save_variables" and "value" in reply:  # offered back after a restart
                self.kernel.snapshot = (str(request["args"].get("path") or ""), time.time())
            return reply
        # asked from a background thread (a suggestion's facts): never waits for the prompt's own request
        if not self.kernel.lock.acquire(blocking=False):
            raise KernelUnavailable("The kernel link is busy with the prompt's own request.")
        try:
            return self.kernel.request(request, timeout)
        finally:
            self.kernel.lock.release()

    # -- proposals: the bookkeeping travels, the approved code runs as any input does ------------------------
    def run_proposal(self, source: str) -> ExecResult:
        try:
            self.begin_proposal(source)
        except PyAIChatError:  # no helper in this kernel: the code still runs, /undo will say why not
            return self.run(source)
        try:
            return self.run(source)
        finally:
            try:
                self.end_proposal()
            except PyAIChatError:
                pass  # the kernel died meanwhile: there is nothing left to undo

    @property
    def last_input_number(self) -> int:
        return self.kernel.execution_count  # of the inputs run from here: the kernel is not asked

    @property
    def keeps_inputs(self) -> bool:
        return False  # the kernel numbers its own inputs (and fetching them each time would cost a request)

    def adopt_history(self, entries: list[HistoryEntry]) -> bool:
        return False  # the kernel numbers its own inputs
