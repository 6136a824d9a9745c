"""Where the user's namespace lives: the runtime seam.

Two runtimes answer the same questions:

- **local** — a ``pyaichat.Session`` in this process (the REPL, piped mode, the IPython extension).
  Capabilities and the session digest run directly over its namespace.
- **kernel** — a Jupyter kernel reached with ``jupyter_client`` (``runtime.kernel.KernelSession``, host side),
  with a small helper loaded into the kernel (``ipython.kernel_helper``, a front end inside the kernel)
  that runs the very same capability and digest code over the kernel's ``user_ns``, so masking and bounds
  apply before anything leaves the kernel. This package imports neither the capabilities nor the agent.

The seam is one small protocol, checked by attribute (no import of this package's heavy parts): a session
object that has ``remote_call`` is *remote*. ``capabilities.call`` forwards to it and the digest asks it, so
the agent, the controller, the commands and every front end use a remote session exactly like a local one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import PyAIChatError

if TYPE_CHECKING:
    from ..config import Config


class RemoteRuntime(Protocol):
    """A session whose namespace lives in another process."""

    def remote_call(
        self, name: str, args: Mapping[str, Any] | None, config: Config | None, origin: str
    ) -> dict[str, Any]:
        """Run capability ``name`` where the data lives and return the fields of its ``CapabilityResult``;
        never raises (failures are ``ok: False`` with a sentence in ``error``)."""
        ...

    def remote_digest(self, config: Config | None, max_vars: int) -> str:
        """The bounded session digest, built where the data lives."""
        ...


def remote(session: Any) -> RemoteRuntime | None:
    """``session`` itself when it is a remote runtime, else ``None`` (one attribute lookup: cheap enough for
    every capability call)."""
    return session if getattr(type(session), "remote_call", None) is not None else None


# The comm target of pyaichat's helper inside a kernel (``ipython.kernel_helper``) and its request protocol.
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


def capability_settings(config: Config | None) -> dict[str, Any]:
    """The part of ``config`` that bounds a capability call, as plain JSON values."""
    if config is None:
        return {}
    return {key: getattr(config, key) for key in CAPABILITY_SETTINGS if hasattr(config, key)}


class KernelUnavailable(PyAIChatError):
    """The kernel cannot be reached, died, restarted, or cannot host pyaichat's helper (one sentence)."""
