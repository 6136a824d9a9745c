"""The sandbox behind ``run_python`` and ``eval_expr``: RestrictedPython with every guard supplied, run in a
forked child where the platform can fork, in-process behind read-only guards elsewhere.

Entry point: ``run(ctx, source, mode, render)`` returns the result text or raises a ``CapabilityError``
(``eval_expr`` and the introspection capabilities come here through ``expression`` for what they cannot read
in-process).

How runs are bounded (the README's "Sandbox" section says the same):

* fork (Linux/macOS, ``sandbox_isolation = "auto"|"fork"``): the parent waits on a pipe with a deadline of
  ``0.8 × tool_timeout`` and SIGKILLs the child; the child has RLIMIT_CPU, RLIMIT_AS (+4 GiB over the parent's
  address space), RLIMIT_FSIZE 0, a small RLIMIT_NOFILE, no environment variables, stdio on /dev/null and no
  inherited descriptors. Anything — a C loop, catastrophic regex backtracking, a deadlock — ends at the
  deadline. The user's objects are a copy-on-write copy: the snippet may change them; the session never sees
  it. On Linux the child then walls itself in (``confine``: Landlock + seccomp, detected at run time) before
  the snippet runs; with both walls up the guards relax what only they stood in for (calling the session's
  own functions, methods and classes; ordinary dunder methods and ``obj.attr op= v`` in the snippet's
  classes). ``walls_report`` says which walls stand here.
* in-process (Windows, or ``sandbox_isolation = "inprocess"``): the compiler injects ``_tick_()`` — a clock
  check that raises a ``BaseException`` past the deadline — at the top of every loop body, every function,
  every comprehension and lambda; infinite ``itertools`` iterators tick too. Limits: a single long C-level
  call (``sorted`` of a huge list, a pathological regex, a big numpy operation) cannot be interrupted; sizes
  are refused up front where obvious (``*``, ``**``, ``<<``, ``range``, ``bytes(n)``, materialising
  builtins), and ``capabilities.call`` abandons a run that overstays, returning a clear message while the
  worker thread finishes in the background. Writes to the user's objects are refused by the guards
  (``_write_``, mutating methods, ``inplace=True``, ``out=``) and a fingerprint of every user variable the
  snippet named is compared before and after as a safety net.

Each of the two is one policy object (``policy``: ``ForkedChild``, ``InProcess``), chosen once per setting by
``policy_for``; the compiler, the guards, the runner and the preview ask it whatever differs, and nothing
else asks which mode it is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import CapabilityError, CapabilityTimeout, SandboxViolation
from ..adapters import load_imported
from ..redact import masker_for
from ..secret_values import _generation as generation
from .confine import probe as probe_walls
from .isolation import fork_available, run_forked
from .policy import IN_PROCESS, InProcess, SandboxPolicy, forked
from .policy_base import Request, Secrets

if TYPE_CHECKING:
    from ..catalog import CapabilityContext
    from .preview import Preview

__all__ = [
    "ask_in_child",
    "isolation_mode",
    "policy_for",
    "preview_code",
    "run",
    "secrets_for",
    "walls_report",
]


def policy_for(setting: str) -> SandboxPolicy:
    """The sandbox's policy for ``sandbox_isolation = setting`` (``policy``): ``auto`` and ``fork`` give the
    forked child where the platform can fork (one object per kernel's walls), else the in-process policy."""
    if setting == "inprocess":
        return IN_PROCESS
    if not fork_available():
        return _NO_FORK
    return forked(probe_walls())


_NO_FORK = InProcess(f"no fork on {sys.platform}")


def isolation_mode(setting: str) -> str:
    """``auto`` → ``fork`` where the platform can fork, else ``inprocess``."""
    return policy_for(setting).name


def walls_report(setting: str) -> list[str]:
    """Which walls stand around ``run_python`` here, one line each (``/tools``, the README)."""
    return policy_for(setting).report(setting)


def own_deadline(tool_timeout: float) -> float:
    """The sandbox stops a little before ``call``'s own deadline so the user gets our clearer message."""
    return max(tool_timeout * 0.8, tool_timeout - 0.15)


_secrets_cache: tuple[object, Secrets] | None = None


def secrets_for(ctx: CapabilityContext) -> Secrets:
    """The masker's notion of a secret, for the masker of the current settings and environment (reused while
    they stay the same, see ``redact.masker_for``)."""
    global _secrets_cache
    masker = masker_for(ctx.config)
    cached = _secrets_cache
    if cached is not None and cached[0] is masker:
        return cached[1]
    found = Secrets(masker.is_secret_name, lambda text: masker.mask_text(text) != text, masker)
    _secrets_cache = (masker, found)
    return found


def run(
    ctx: CapabilityContext,
    source: str,
    mode: str = "exec",
    render: Callable[[Any], str] | None = None,
) -> str:
    """Run ``source`` (``mode="exec"``) or evaluate one expression (``mode="eval"``) in the sandbox.
    ``render`` turns an expression's value into the text returned, where the value is (in the child): the
    introspection capabilities' own description instead of ``eval_expr``'s summary."""
    if ctx.privacy == "names":
        raise SandboxViolation(
            "Running code is not allowed at privacy level 'names' (it would reveal values); "
            "raise the privacy setting to 'schema' or higher."
        )
    policy = policy_for(ctx.config.sandbox_isolation)
    secret_names = tuple(ctx.config.secret_names)
    policy.compile(source, mode, secret_names)  # fail fast, in the parent
    req = Request(
        source=source,
        mode=mode,
        policy=policy,
        timeout=own_deadline(ctx.config.tool_timeout),
        privacy=ctx.privacy,
        limit=ctx.config.max_output_chars,
        secret_names=secret_names,
        render=render,
        stamp=generation(ctx.session),
        roots=(ctx.config,),  # the settings' own secrets (the API key) are replaced in the child too
    )
    outcome = policy.execute(req, ctx.namespace, secrets_for(ctx))
    if not outcome.get("ok"):
        message = str(outcome.get("error") or "the code failed")
        output = str(outcome.get("text") or "")
        if output:
            message += "\nOutput before the error:\n" + output[: req.limit // 2]
        raise CapabilityError(message)
    return str(outcome.get("text", ""))


FORK_ALLOWANCE = 0.2  # seconds the fork itself may take before an ask's budget starts (busy cores)


def ask_in_child(
    setting: str, asks: list[Callable[[], str]], budget: float, each: float
) -> list[str | None] | None:
    """Each of ``asks`` — a description that runs the session's own code (a ``__repr__``, a ``__len__``, a
    third party's adapter), ``each`` seconds at most — in one walled, forked child, all within ``budget``
    seconds from the child's start (the fork itself may take ``FORK_ALLOWANCE`` more): what each answered
    (``None`` for those the budget left no time for). ``None`` when no walled child can run here (no fork,
    or the kernel walls are down: then nothing would keep that code from writing) or it did not answer in
    time."""
    policy = policy_for(setting)
    walls = getattr(policy, "walls", None)
    if not policy.walled or walls is None or not asks:
        return None
    load_imported()  # the adapters the asks may use: a child must import nothing

    def job() -> dict[str, Any]:
        # counted from the child's start: a fork of a large session on busy cores can take longer than the
        # whole budget, and then no ask ever started (the picture said "polars.LazyFrame object")
        last_start = time.monotonic() + budget * 0.8 - each  # an ask started later could miss the answer
        answers: list[str | None] = []
        for ask in asks:
            if time.monotonic() > last_start:
                answers.append(None)
                continue
            try:
                answer = ask()
            except BaseException as exc:  # the object's own failure, said in a few words
                answer = f"<{type(exc).__name__}>"
            answers.append(answer if type(answer) is str else None)
        return {"ok": True, "answers": answers}

    try:
        result = run_forked(job, budget + FORK_ALLOWANCE, walls, require_walls=True)
    except CapabilityTimeout:
        return None
    answers = result.get("answers")
    if not result.get("ok") or type(answers) is not list or len(answers) != len(asks):
        return None
    return [a if type(a) is str else None for a in answers]


def preview_code(
    config: Any, namespace: dict[str, Any], source: str, transform: Callable[[str], str] | None = None
) -> Preview:
    """What running ``source`` (proposed code, ordinary Python) would do to ``namespace``, found in a walled,
    forked child with ``run_python``'s deadline and limits (``preview.preview``); for the user's eyes only."""
    from .preview import preview  # the preview engine loads with the first proposal, not with run_python

    return preview(
        namespace,
        source,
        timeout=own_deadline(config.tool_timeout),
        policy=policy_for(config.sandbox_isolation),
        max_output_chars=config.max_output_chars,
        transform=transform,
    )
