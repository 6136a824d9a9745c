"""Where the user's namespace lives: the ``Runtime`` protocol, the one way every front end, slash command, the
assistant and an MCP server reach the user's session.

Two runtimes implement it:

- ``local.LocalRuntime`` — a ``pyaichat.Session`` in this process (the REPL, piped mode, the IPython
  extension); capabilities and the session picture run directly over its namespace.
- ``kernel.KernelRuntime`` — a Jupyter kernel reached with ``jupyter_client`` (``--existing``/``--kernel``).
  Inside the kernel, pyaichat's helper runs a ``LocalRuntime`` over the kernel's ``user_ns``; the host sends
  it the operations declared in ``kernel_link.OPERATIONS`` and carries the answers back, so masking, bounds
  and the audit apply once, in the kernel, before anything leaves it. Its modules load only with those flags
  (``connect``).

Serving tools (the assistant, ``/tools``, an MCP server) takes two members, on any runtime:

- ``tools()`` — a ``capabilities.toolbox.Toolbox``: for each tool its ``name``, ``description``,
  ``parameters`` (the JSON schema of its arguments) and ``executable`` (``False`` for the approval gate
  ``propose_code``, which only the assistant handles; every executable tool is read-only), plus the plugins
  that could not load. It comes from where the tools run: a kernel's own registry, with its own plugins.
- ``call(name, args, origin=...)`` — one tool call, bounded, masked and audited where it runs; never
  raises. ``origin`` is written to the audit log (``assistant``, ``user``, or e.g. ``mcp:<client>``).

``capabilities.call(session, name, args)`` stays the public entry point for a local ``Session``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import PyAIChatError
from ..session import Session
from .local import LocalRuntime

if TYPE_CHECKING:
    from ..capabilities.catalog import CapabilityResult
    from ..capabilities.toolbox import Toolbox
    from ..configuration.config import Config, Settings
    from ..records import ExecResult, HistoryEntry, LastError
    from .completion import Completion

__all__ = ["Interpreter", "KernelUnavailable", "LocalRuntime", "Runtime", "Tools", "as_runtime"]


class Interpreter(Protocol):
    """The session as an interpreter: runs inputs, completes them, numbers them and keeps the last error.
    What the prompt, piped input and what lasts (``--resume``) use."""

    def run(self, source: str) -> ExecResult:
        """Run one input as the interactive interpreter would, printing its output here."""
        ...

    def complete(self, text: str, cursor: int) -> list[Completion]:
        """Completions for ``text`` at ``cursor`` (names, attributes, keys), computed without side effects."""
        ...

    def is_complete(self, text: str) -> bool:
        """Would Enter run ``text``, or does it need more lines?"""
        ...

    @property
    def history(self) -> Sequence[HistoryEntry]:
        """Numbered inputs with short summaries of what they did, oldest first."""
        ...

    @property
    def last_error(self) -> LastError | None:
        """The last exception an input run through this runtime raised."""
        ...

    @property
    def last_input_number(self) -> int:
        """The number of the last input (0 before any), known here without asking the kernel."""
        ...

    @property
    def keeps_inputs(self) -> bool:
        """Whether the resume file should keep this session's inputs: only where a resumed session can
        number on after them (a plain session here; not IPython's or a kernel's, which number their own)."""
        ...

    def adopt_history(self, entries: list[HistoryEntry]) -> bool:
        """Take a resumed session's inputs as this one's first (numbering continues after them); False
        where it cannot (inputs already ran, or the kernel or IPython numbers its own)."""
        ...


class Tools(Protocol):
    """The session as the assistant and the person's commands see it: capabilities (``call``), the session
    picture, the tools' descriptions, proposals (preview, run, undo) and snapshots — each run where the data
    is, bounded, masked and audited there."""

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        origin: str = "assistant",
        images: bool = False,
    ) -> CapabilityResult:
        """Run capability ``name`` where the data lives: bounded, masked, audited; never raises. ``images``:
        the model can see pictures, so a capability may add some (``CapabilityResult.images``)."""
        ...

    def picture(self) -> str:
        """The bounded picture of the session for the next question (an error new since the previous
        picture is marked as such)."""
        ...

    def tools(self) -> Toolbox:
        """The tools a model may use here, described where they run (see the module's docstring)."""
        ...

    def sandbox_walls(self) -> list[str]:
        """Which walls stand around ``run_python`` where it runs, one line each (``/tools``)."""
        ...

    def audit_log(self, count: int) -> tuple[str, list[dict[str, Any]]]:
        """Where the audit log of this runtime's calls is, and its last ``count`` entries, oldest first."""
        ...

    def user_names(self) -> list[tuple[str, str]]:
        """The user's variables with their type names (``@name`` completion)."""
        ...

    def suggestion_facts(self, before: str, after: str = "") -> dict[str, list[str]]:
        """For a ghost-text suggestion at the cursor between ``before`` and ``after``: ``{"facts": [...],
        "inputs": [...]}``, one masked, bounded line per name the code uses and the last few inputs
        (``facts.suggestion_facts``). Called from a background thread; never raises (nothing when the
        session cannot answer at once)."""
        ...

    def preview(self, source: str) -> dict[str, Any]:
        """What running the proposed ``source`` would do (``Preview.to_dict()``), found in a walled, forked
        copy of the session; nothing runs in the session itself. For the user's eyes only."""
        ...

    def begin_proposal(self, source: str) -> None:
        """Approved ``source`` is about to run: remember what ``undo`` would put back (IPython runs the
        approved cell itself and calls this and ``end_proposal`` around it)."""
        ...

    def end_proposal(self) -> None:
        """The approved code ran (or failed part-way): find what it created, rebound, deleted or changed."""
        ...

    def run_proposal(self, source: str) -> ExecResult:
        """Run approved code as ``run`` does, keeping what ``undo`` needs: the old objects of the names it
        creates, rebinds or deletes (kept, not copied, until the next proposal or ``undo``)."""
        ...

    def undo(self) -> tuple[bool, str]:
        """Put the last approved proposal's names back, or refuse and change nothing; one sentence either
        way (``ok`` is whether anything was undone)."""
        ...

    def save_variables(self, path: str | None, include_secrets: bool = False) -> str:
        """Snapshot the session's variables (``persist.snapshot``); one sentence with the size and time
        and what could not be saved. Raises ``PyAIChatError`` (one sentence) when nothing was written."""
        ...

    def load_variables(self, path: str | None) -> str:
        """Load a snapshot this user saved into the session, all or nothing; one sentence saying what came
        back. Raises ``PyAIChatError`` (one sentence) when nothing was loaded."""
        ...


class Runtime(Interpreter, Tools, Protocol):
    """The user's session, wherever it runs: an ``Interpreter`` and its ``Tools``, with the session's
    settings. Nothing here raises for a problem the user can fix: a runtime that cannot answer (a dead kernel)
    raises ``PyAIChatError`` from ``run`` and degrades everywhere else."""

    @property
    def settings(
        self,
    ) -> Settings:  # the session's one holder of its configuration (the controller changes it)
        ...

    @property
    def config(self) -> Config:
        """The current configuration (``settings.current()``): it bounds what capabilities reveal."""
        ...

    def describe(self) -> str | None:
        """One line saying where the session runs, when it is not simply this process."""
        ...

    def status_lines(self) -> list[str]:
        """``/status``: where the session runs and, for a kernel, its state and how it is reached (the link's
        round trip measured now)."""
        ...

    def audit_key(self) -> object:
        """Whom the audit log's records of work done here name (``capabilities.audit.session_id``): one
        object for all of this session's records, so an MCP tool's call and a capability's share an id."""
        ...

    def know_secrets(self) -> tuple[list[str], list[str]]:
        """Have this process's masker know the session's secret values now (``capabilities.secret_values``),
        so that a file written here (``/save``, the resume file) masks them by value, also one that no saved
        text binds to a name; returns them (those in variables, those of copies of the environment). A
        kernel's come from the kernel, where its namespace is: the host writes the files."""
        ...

    def close(self) -> None:
        """Let go of what the runtime holds (a kernel it started is shut down)."""
        ...


def as_runtime(target: Runtime | Session) -> Runtime:
    """``target`` as a runtime: a ``Session`` (the public Python API) runs in this process."""
    if isinstance(target, Session):
        return LocalRuntime(target)
    return target


class KernelUnavailable(PyAIChatError):
    """The kernel cannot be reached, died, restarted, or cannot host pyaichat's helper (one sentence)."""
