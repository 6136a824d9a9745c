"""How the sandbox differs between a forked child and this process: one policy object, chosen once. This
module holds the two policies; what every policy answers (``SandboxPolicy``) is ``policy_base``.

``policy_for(setting)`` (in the package) picks ``ForkedChild`` where the platform can fork — the code runs on
a copy-on-write copy of the session, killed at its deadline, walled in by Landlock + seccomp where the kernel
has them — or an ``InProcess`` policy (Windows, or ``sandbox_isolation = "inprocess"``) — the code runs next
to the real objects, so the guards also protect everything reachable from the user's variables. Every rule
and every guard is shared; what differs is a member of the policy, and nothing else in the sandbox asks
which mode it is in. Forked child | in-process:

- ``dialect`` (the compiler's transformer): plain, or ``WalledTransformer`` behind the wall |
  ``TickingTransformer`` (a deadline check in every loop, function and comprehension);
- ``execute``: ``run_forked`` (deadline, resource limits, walls) | here (``invoke.call`` abandons it);
- ``watch`` (what one run must leave as it found it): nothing, the child's objects are its own |
  ``SessionWatch``: the user's objects the code names, their arrays frozen, fingerprints, a recursion cap;
- the guard hooks — ``library_call``, ``memory_view``, ``mutator_refused``, ``pandas_method``,
  ``module_overrides``, ``getattr_special``: everything as is | a library call writing into a user argument,
  a writable view of the session's memory, a mutating method of a user object or class, ``inplace=True`` on
  a user frame refused; ``numpy.random`` private and infinite iterators ticking;
- ``report`` and ``preview_unavailable`` (what the user is told): the walls that stand | "in-process, behind
  the guards only", and no preview.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...errors import CapabilityTimeout
from ..adapters import load_imported
from . import limits, scrub
from .compiler import SandboxTransformer, TickingTransformer, WalledTransformer
from .confine import Walls, status
from .isolation import run_forked
from .modules import preimport
from .ownership import UserObjects, fingerprint, thaw
from .placeholders import Hidden
from .policy_base import Owns, Request, SandboxPolicy, Secrets, Watch
from .rules import MUTATING_METHODS
from .runner import execute, prepare
from .shared_memory import listable
from .wrapped_calls import ARG_WRITERS_ROOTS, IN_PLACE_FIRST_ARG, UfuncGuard, arg_guard, no_inplace


class SessionWatch(Watch):
    """In-process: the user's objects the snippet names (``owns``) — writes to them are refused by the
    guards; their numpy arrays are read-only while the code runs; a fingerprint of each is compared after."""

    def __init__(self, namespace: Mapping[str, Any], view: Mapping[str, Any]) -> None:
        self.namespace = namespace
        originals = {n: namespace[n] for n in view if type(view[n]) is not Hidden}
        self.owns = UserObjects(originals.values())
        self.before = {n: fingerprint(v) for n, v in originals.items()}
        self.frozen: list[tuple[int, Any]] = []

    @contextmanager
    def running(self) -> Iterator[None]:
        old_limit = sys.getrecursionlimit()
        self.frozen = self.owns.freeze()
        try:
            sys.setrecursionlimit(min(old_limit, 2000))
            yield
        finally:
            thaw(self.frozen)
            sys.setrecursionlimit(old_limit)

    def explain(self, exc: BaseException) -> str | None:
        if self.frozen and isinstance(exc, ValueError) and "read-only" in str(exc):
            return "this would write into the session's array; work on a copy (x.copy())"
        return None

    def changed(self) -> list[str]:
        return [n for n, fp in self.before.items() if fingerprint(self.namespace[n]) != fp]


class ForkedChild(SandboxPolicy):
    """The code runs in a forked child on a copy-on-write copy of the session (``isolation``); behind the
    kernel walls (``walls.complete``) the guards relax what only they stood in for."""

    name = "fork"

    def __init__(self, walls: Walls) -> None:
        self.walls = walls
        self.walled = walls.complete
        self.dialect = WalledTransformer if self.walled else SandboxTransformer

    def execute(self, req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> dict[str, Any]:
        compiled = self.compile(req.source, req.mode, req.secret_names)
        preimport(set(compiled.imports))
        load_imported()  # the adapters that may describe its result: a child must import nothing
        started = time.monotonic()
        try:
            # The secrets the child will replace are found here, before the fork, by a walk that runs none
            # of the session's code: its variables, and those the code names walked in full.
            # (keys compared only when they are exact strings: a key's own ``__eq__`` is session code)
            wanted = frozenset(compiled.names)
            items = dict.items(namespace) if type(namespace) is dict else ()
            named = {key: value for key, value in items if type(key) is str and key in wanted}
            places = scrub.plan(
                namespace, secrets.is_secret_name, secrets.masker, req.stamp, req.roots, named
            )
            # Prepared in the child, after its secrets are replaced: the view of the session's variables reads
            # them (a dict's keys, a frame's columns, a copy with secret columns hidden whose ``attrs`` are
            # deep-copied), and none of that may run the session's code in its own process.
            job = scrub.scrubbed(lambda: prepare(req, namespace, secrets)(), places)
            return run_forked(job, req.timeout, self.walls, require_walls=self.walled)
        except CapabilityTimeout:
            raise CapabilityTimeout(
                f"The code did not finish within {time.monotonic() - started:.1f} s and was stopped "
                "(its process was killed)."
            ) from None

    def report(self, setting: str) -> list[str]:
        lines = ["run_python: a forked child (copy-on-write view of your data, deadline, resource limits)"]
        lines += [f"  {line}" for line in status()]
        if self.walled:
            lines.append("  both walls up: the session's own functions, methods and classes may be called")
        else:
            lines.append("  a wall is down: the guards refuse calling the session's own functions")
        where = "made private in the child" if listable() else "stays shared on this OS (no /proc)"
        lines.append(f"  shared memory (memmap, mmap, multiprocessing): {where}")
        return lines

    def preview_unavailable(self) -> str | None:
        if self.walled:
            return None
        why = "; ".join(self.walls.why_not) or "the kernel walls are not up"
        return f"No preview: the kernel walls it needs are not up here ({why}); nothing unapproved runs."


class InProcess(SandboxPolicy):
    """The code runs in this process, next to the user's objects: the compiler adds deadline ticks, and the
    guards refuse every write into what the user's variables reach (``SessionWatch``)."""

    name = "inprocess"
    dialect = TickingTransformer
    getattr_special = frozenset({"format", "format_map"} | MUTATING_METHODS)

    def __init__(self, why: str = "sandbox_isolation = 'inprocess'") -> None:
        self.why = why  # the setting, or the platform that has no fork

    def execute(self, req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> dict[str, Any]:
        return execute(req, namespace, secrets)

    def watch(self, namespace: Mapping[str, Any], view: Mapping[str, Any], reading: bool = False) -> Watch:
        return SessionWatch(namespace, view)

    def library_call(self, value: Any, where: str, owns: Owns) -> Any:
        """Library functions that write into an argument (``np.copyto(a, …)``, ``out=a``,
        ``random.shuffle(a)``, ``heapq.heappush(a, …)``) are refused when it is the user's."""
        if where and not where.startswith("."):
            root = where.split(".")[0]
        else:
            module = getattr(value, "__module__", None) or getattr(type(value), "__module__", "") or ""
            root = module.split(".")[0]
        if root not in ARG_WRITERS_ROOTS:
            return value
        if type(value).__name__ == "ufunc":
            return UfuncGuard(value, owns)
        first = getattr(value, "__name__", "") in IN_PLACE_FIRST_ARG
        return arg_guard(value, owns, first)

    def memory_view(self, view: memoryview) -> Any:
        # a view of the session's memory (shared memory's ``.buf``): look only
        return view if view.readonly else view.toreadonly()

    def mutator_refused(self, obj: Any, owns: Owns) -> bool:
        return isinstance(obj, type) or owns(obj)

    def pandas_method(self, method: Any, name: str, obj: Any, owns: Owns) -> Any:
        return no_inplace(method, name) if owns(obj) else method

    def module_overrides(
        self, name: str, mod: Any, found: dict[str, Any], owns: Owns, deadline: float
    ) -> dict[str, Any]:
        found = dict(found)
        if name == "numpy.random":  # the module's global state is the session's: a private one instead
            state, public = mod.RandomState(), set(dir(mod))
            found.update({n: getattr(state, n) for n in dir(state) if not n.startswith("_") and n in public})
        if name == "itertools":  # infinite iterators a C consumer would exhaust past any tick
            found.update({n: _ticking(getattr(mod, n), deadline) for n in ("count", "cycle", "repeat")})
        for key in IN_PLACE_FIRST_ARG & found.keys():
            found[key] = arg_guard(found[key], owns, True)
        return found

    def report(self, setting: str) -> list[str]:
        return [
            "run_python: in-process, behind the RestrictedPython guards only (no kernel wall; "
            f"sandbox_isolation = {setting!r})"
        ]

    def preview_unavailable(self) -> str | None:
        where = f"a forked child behind the kernel walls ({self.why})"
        return f"No preview: it needs {where}; nothing unapproved runs."


IN_PROCESS = InProcess()


_forked: list[ForkedChild] = []


def forked(walls: Walls) -> ForkedChild:
    """The forked-child policy for ``walls`` (``confine.probe``'s, cached there: one policy object)."""
    for known in _forked:
        if known.walls is walls:
            return known
    found = ForkedChild(walls)
    _forked[:] = [*_forked[-3:], found]
    return found


def _ticking(make: Callable[..., Iterable[Any]], deadline: float) -> Callable[..., Iterable[Any]]:
    """An infinite iterator as a generator that checks the deadline, so a C consumer (``sum(count())``) can be
    stopped in-process."""
    tick = limits.make_tick(deadline)

    def wrapper(*args: Any, **kwargs: Any) -> Iterable[Any]:
        for n, item in enumerate(make(*args, **kwargs), 1):
            if not n & 1023:
                tick()
            yield item

    wrapper.__name__ = getattr(make, "__name__", "iterator")
    return wrapper
