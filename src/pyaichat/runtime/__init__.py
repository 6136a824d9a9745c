"""Where the user's namespace lives: the ``Runtime`` protocol, the one way every front end, slash command and
the assistant reach the user's session.

Two runtimes implement it:

- ``local.LocalRuntime`` — a ``pyaichat.Session`` in this process (the REPL, piped mode, the IPython
  extension); capabilities and the session digest run directly over its namespace.
- ``kernel.KernelRuntime`` — a Jupyter kernel reached with ``jupyter_client`` (``--existing``/``--kernel``).
  ``kernel_helper``, loaded into the kernel, runs the very same capability and digest code over the kernel's
  ``user_ns``, so masking and bounds apply before anything leaves the kernel. Its modules load only with those
  flags (``connect``).

``capabilities.call(session, name, args)`` stays the public entry point for a local ``Session``; a runtime's
``call`` adds nothing a caller has to know about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import PyAIChatError
from ..session import Session
from .local import LocalRuntime

if TYPE_CHECKING:
    from ..capabilities.registry import CapabilityResult
    from ..config import Config
    from ..records import ExecResult, HistoryEntry, LastError
    from .completion import Completion

__all__ = ["KernelUnavailable", "LocalRuntime", "Runtime", "as_runtime"]


class Runtime(Protocol):
    """The user's session, wherever it runs. Nothing here raises for a problem the user can fix: a runtime
    that cannot answer (a dead kernel) raises ``PyAIChatError`` from ``run`` and degrades everywhere else."""

    config: Config  # bounds what capabilities reveal; the same object the front end shows and changes

    def run(self, source: str) -> ExecResult:
        """Run one input as the interactive interpreter would, printing its output here."""
        ...

    @property
    def history(self) -> Sequence[HistoryEntry]:
        """Numbered inputs with short summaries of what they did, oldest first."""
        ...

    @property
    def last_error(self) -> LastError | None:
        """The last exception an input run through this runtime raised."""
        ...

    def complete(self, text: str, cursor: int) -> list[Completion]:
        """Completions for ``text`` at ``cursor`` (names, attributes, keys), computed without side effects."""
        ...

    def is_complete(self, text: str) -> bool:
        """Would Enter run ``text``, or does it need more lines?"""
        ...

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

    def digest(self) -> str:
        """The bounded picture of the session for the next question (an error new since the previous
        digest is marked as such)."""
        ...

    def user_names(self) -> list[tuple[str, str]]:
        """The user's variables with their type names (``@name`` completion)."""
        ...

    def describe(self) -> str | None:
        """One line saying where the session runs, when it is not simply this process."""
        ...

    def close(self) -> None:
        """Let go of what the runtime holds (a kernel it started is shut down)."""
        ...

    # -- proposals and the work that lasts: each runs where the data is ------------------------------------
    def preview(self, source: str) -> dict[str, Any]:
        """What running the proposed ``source`` would do (``Preview.to_dict()``), found in a walled, forked
        copy of the session; nothing runs in the session itself. For the user's eyes only."""
        ...

    def run_proposal(self, source: str) -> ExecResult:
        """Run approved code as ``run`` does, keeping what ``undo`` needs: the old objects of the names it
        creates, rebinds or deletes (kept, not copied, until the next proposal or ``undo``)."""
        ...

    def undo(self) -> tuple[bool, str]:
        """Put the last approved proposal's names back, or refuse and change nothing; one sentence either
        way (``ok`` is whether anything was undone)."""
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

    def save_variables(self, path: str | None, include_secrets: bool = False) -> str:
        """Snapshot the session's variables (``persist.snapshot``); one sentence with the size and time
        and what could not be saved. Raises ``PyAIChatError`` (one sentence) when nothing was written."""
        ...

    def load_variables(self, path: str | None) -> str:
        """Load a snapshot this user saved into the session, all or nothing; one sentence saying what came
        back. Raises ``PyAIChatError`` (one sentence) when nothing was loaded."""
        ...


def as_runtime(target: Runtime | Session) -> Runtime:
    """``target`` as a runtime: a ``Session`` (the public Python API) runs in this process."""
    return LocalRuntime(target) if isinstance(target, Session) else target


# The comm target of pyaichat's helper inside a kernel (``kernel_helper``) and its request protocol.
COMM_TARGET = "pyaichat"
PROTOCOL = 1

# Settings the capabilities read; only these travel to the kernel (never the model, the API key or the base).
CAPABILITY_SETTINGS = (
    "privacy",
    "max_output_chars",
    "tool_timeout",
    "sandbox_isolation",
    "secret_names",
    "secret_patterns",
)


def capability_settings(config: Config) -> dict[str, Any]:
    """The part of ``config`` that bounds a capability call, as plain JSON values."""
    return {key: getattr(config, key) for key in CAPABILITY_SETTINGS}


class KernelUnavailable(PyAIChatError):
    """The kernel cannot be reached, died, restarted, or cannot host pyaichat's helper (one sentence)."""
