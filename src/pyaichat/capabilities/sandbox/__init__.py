"""The sandbox behind ``run_python`` and ``eval_expr``: RestrictedPython with every guard supplied, run in a
forked child where the platform can fork, in-process behind read-only guards elsewhere.

Entry point: ``run(ctx, source, mode)``; it returns the result text or raises a ``CapabilityError``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ...errors import CapabilityError, CapabilityTimeout, SandboxViolation
from .compiler import compile_snippet
from .isolation import fork_available, run_forked
from .modules import preimport
from .runner import Request, Secrets, execute

if TYPE_CHECKING:
    from ..registry import CapabilityContext

__all__ = ["isolation_mode", "run", "secrets_for"]


def isolation_mode(setting: str) -> str:
    """``auto`` → ``fork`` where the platform can fork, else ``inprocess``."""
    if setting == "inprocess" or not fork_available():
        return "inprocess"
    return "fork"


def own_deadline(tool_timeout: float) -> float:
    """The sandbox stops a little before ``call``'s own deadline so the user gets our clearer message."""
    return max(tool_timeout * 0.8, tool_timeout - 0.15)


def secrets_for(ctx: CapabilityContext) -> Secrets:
    from ..redact import Masker

    masker = Masker.from_config(ctx.config)
    return Secrets(masker.is_secret_name, lambda text: masker.mask_text(text) != text)


def run(ctx: CapabilityContext, source: str, mode: str = "exec") -> str:
    """Run ``source`` (``mode="exec"``) or evaluate one expression (``mode="eval"``) in the sandbox."""
    if ctx.privacy == "names":
        raise SandboxViolation(
            "Running code is not allowed at privacy level 'names' (it would reveal values); "
            "raise the privacy setting to 'schema' or higher."
        )
    isolation = isolation_mode(ctx.config.sandbox_isolation)
    compiled = compile_snippet(source, inprocess=isolation == "inprocess", mode=mode)  # fail fast, in the parent
    req = Request(
        source=source,
        mode=mode,
        isolation=isolation,
        timeout=own_deadline(ctx.config.tool_timeout),
        privacy=ctx.privacy,
        limit=ctx.config.max_output_chars,
    )
    secrets = secrets_for(ctx)
    namespace = ctx.namespace
    if isolation == "fork":
        preimport(set(compiled.imports))
        started = time.monotonic()
        try:
            outcome = run_forked(lambda: execute(req, namespace, secrets), req.timeout)
        except CapabilityTimeout:
            raise CapabilityTimeout(
                f"The code did not finish within {time.monotonic() - started:.1f} s and was stopped "
                "(its process was killed)."
            ) from None
    else:
        outcome = execute(req, namespace, secrets)
    if not outcome.get("ok"):
        message = str(outcome.get("error") or "the code failed")
        output = str(outcome.get("text") or "")
        if output:
            message += "\nOutput before the error:\n" + output[: req.limit // 2]
        raise CapabilityError(message)
    return str(outcome.get("text", ""))
