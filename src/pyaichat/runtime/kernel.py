"""The kernel runtime, host side: the user's session in a Jupyter kernel (``--existing`` / ``--kernel``).

- ``run(source)`` is an ``execute_request`` (``execute.CellRun``): output streams back as it arrives,
  ``input()`` in the kernel is answered here, Ctrl-C interrupts the *kernel*;
- completion and "is this input complete?" are the kernel's own ``complete_request`` and
  ``is_complete_request`` (it knows its magics);
- capabilities, the digest, names and history are requests to pyaichat's helper inside the kernel
  (``kernel_helper``); only their bounded, masked text comes back, and it is masked once more here with this
  machine's secret settings and audited here, where the user asked.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import PyAIChatError
from ..records import ExecResult, HistoryEntry, LastError
from ..session import input_is_complete
from . import KernelUnavailable, capability_settings
from .completion import Completion
from .connection import ANSI, RESTARTED, KernelConnection
from .execute import CellRun

if TYPE_CHECKING:
    from ..capabilities.registry import CapabilityResult

WHERE = "The session's variables live in a Jupyter kernel; every tool runs there."


class KernelRuntime:
    """A ``Runtime`` whose namespace lives in a Jupyter kernel."""

    def __init__(self, kernel: KernelConnection, config: Config | None = None) -> None:
        self.kernel = kernel
        self.config = config if config is not None else Config()
        self._last_error: LastError | None = None
        self._completed_once = False  # the first completion of a kernel imports jedi

    # -- Python mode -----------------------------------------------------------------------------------------
    def run(self, source: str) -> ExecResult:
        """Run ``source`` in the kernel like ``jupyter console`` does, streaming its output here."""
        kernel = self.kernel
        if not kernel.alive():
            raise kernel.dead()
        kernel.drain_iopub()
        if kernel.restarted:
            kernel.reset_after_restart()
            kernel.err.write(RESTARTED + "\n")
        started = time.perf_counter()
        msg_id = kernel.client.execute(source, allow_stdin=True)
        run = CellRun(kernel, msg_id)
        run.wait()
        count = run.reply.get("execution_count") if run.reply else None
        if isinstance(count, int):
            if count <= kernel.execution_count or kernel.restarted:  # counts only grow in one kernel process
                kernel.reset_after_restart()
                kernel.err.write(RESTARTED + "\n")
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
    def history(self) -> Sequence[HistoryEntry]:
        """The kernel's recent inputs with short summaries (as the helper recorded them)."""
        try:
            reply = self.kernel.request({"op": "history", "count": 200})
        except KernelUnavailable:
            return []
        return [HistoryEntry(**entry) for entry in reply.get("history", [])]

    @property
    def last_error(self) -> LastError | None:
        """The last error of an input run from here (the kernel's own record stays in the kernel)."""
        return self._last_error

    def complete(self, text: str, cursor: int) -> list[Completion]:
        """The kernel's completions (``complete_request``), each replacing the span the kernel names."""
        msg_id = self.kernel.client.complete(text, cursor)
        # IPython's first completion imports jedi (~1 s, several on a busy machine): wait longer for that one.
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
        reply = self.kernel.shell_reply(self.kernel.client.is_complete(code), 0.5)
        status = reply["content"].get("status") if reply is not None else "unknown"
        return input_is_complete(text) if status == "unknown" else status != "incomplete"

    def user_names(self) -> list[tuple[str, str]]:
        """The kernel's user variables and their type names (for ``@name`` completion)."""
        reply = self.kernel.request({"op": "names"})
        return [(name, kind) for name, kind in reply.get("names", [])]

    # -- the assistant's view --------------------------------------------------------------------------------
    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        origin: str = "assistant",
        images: bool = False,
    ) -> CapabilityResult:
        """The capability computed in the kernel, masked again with this machine's settings and audited."""
        # pydantic and the masks: with the first question, not while attaching
        from ..capabilities.redact import masker_for
        from ..capabilities.registry import CapabilityResult, record_call  # pydantic: first question

        started = time.perf_counter()
        masker = masker_for(self.config)
        if args is not None and not isinstance(args, Mapping):
            result = CapabilityResult(
                name=name, ok=False, error=f"Arguments for {name} must be a JSON object."
            )
        else:
            settings = capability_settings(self.config)
            timeout = float(settings["tool_timeout"]) * 2 + 5.0
            request = {
                "op": "call",
                "name": name,
                "args": dict(args or {}),
                "settings": settings,
                "images": images,
            }
            try:
                reply = self.kernel.request(request, timeout)
                data = dict(reply.get("result") or {"ok": False, "error": reply.get("error") or "No answer."})
            except KernelUnavailable as exc:
                data = {"ok": False, "error": str(exc)}
            data["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            try:
                data["text"] = masker.mask_text(str(data.get("text") or ""))
                data["error"] = masker.mask_text(data["error"]) if data.get("error") else None
                result = CapabilityResult(**{**data, "name": name})
            except Exception as exc:  # a malformed answer from the kernel is a failed call, not a crash
                result = CapabilityResult(
                    name=name, ok=False, error=f"{name} failed: {type(exc).__name__}: {exc}"
                )
        if self.config.audit:
            record_call(self, masker, name, args, result, origin)
        return result

    def digest(self) -> str:
        """The digest the helper builds in the kernel (it remembers which error the previous one showed)."""
        try:
            reply = self.kernel.request({"op": "digest", "settings": capability_settings(self.config)})
        except KernelUnavailable as exc:
            return f"## Session\n{WHERE}\n{exc}"
        text = reply.get("text") or reply.get("error") or ""
        head, _, rest = text.partition("\n")  # the digest's own heading, then where the session lives
        return f"{head}\n{WHERE}\n{rest}"

    def describe(self) -> str:
        return self.kernel.describe()

    def close(self) -> None:
        self.kernel.close()

    # -- proposals and the work that lasts: the helper runs them in the kernel, where the data is ----------
    def _work(self, request: dict[str, Any]) -> dict[str, Any]:
        """One such request; a refusal or a dead kernel is a ``PyAIChatError`` with one sentence."""
        request = {**request, "settings": capability_settings(self.config)}
        reply = self.kernel.request(request, float(self.config.tool_timeout) * 2 + 30.0)
        if reply.get("error"):
            raise PyAIChatError(str(reply["error"]))
        return reply

    def preview(self, source: str) -> dict[str, Any]:
        return dict(self._work({"op": "preview", "code": source}).get("preview") or {})

    def run_proposal(self, source: str) -> ExecResult:
        try:
            self._work({"op": "checkpoint", "code": source})
        except PyAIChatError:  # no helper in this kernel: the code still runs, /undo will say why not
            return self.run(source)
        try:
            return self.run(source)
        finally:
            try:
                self._work({"op": "finish"})
            except PyAIChatError:
                pass  # the kernel died meanwhile: there is nothing left to undo

    def undo(self) -> tuple[bool, str]:
        reply = self._work({"op": "undo"})
        return bool(reply.get("ok")), str(reply.get("text") or "")

    @property
    def last_input_number(self) -> int:
        return self.kernel.execution_count  # of the inputs run from here: the kernel is not asked

    @property
    def keeps_inputs(self) -> bool:
        return False  # the kernel numbers its own inputs (and fetching them each time would cost a request)

    def adopt_history(self, entries: list[HistoryEntry]) -> bool:
        return False  # the kernel numbers its own inputs

    def save_variables(self, path: str | None, include_secrets: bool = False) -> str:
        request = {"op": "save_variables", "path": path, "include_secrets": include_secrets}
        return str(self._work(request).get("text") or "")

    def load_variables(self, path: str | None) -> str:
        return str(self._work({"op": "load_variables", "path": path}).get("text") or "")
