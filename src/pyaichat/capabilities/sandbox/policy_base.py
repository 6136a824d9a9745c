"""What every sandbox policy answers (``SandboxPolicy``, with the defaults a forked child keeps), what one run
must leave as it found it (``Watch``), and what one run is (``Request``, ``Secrets``): the interface the
runner, the guards and the preview are written against, apart from the two policies (``policy``:
``ForkedChild`` and ``InProcess``) that fill it in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import scrub
from .compiler import Compiled, SandboxTransformer, compile_snippet
from .ownership import UserObjects, fingerprint
from .placeholders import Hidden

Owns = Callable[[Any], bool]  # "is this object the session's?" for the run at hand
_NOBODY = UserObjects(())


class Watch:
    """What one run must leave as it found it, and how it is held so: nothing in a forked child (the child's
    objects are its own copy)."""

    owns: UserObjects = _NOBODY

    @contextmanager
    def running(self) -> Iterator[None]:
        yield

    def explain(self, exc: BaseException) -> str | None:
        """A plainer message for an error the watch itself caused, else ``None``."""
        return None

    def changed(self) -> list[str]:
        """The user's variables the run changed although it must not have (the safety net)."""
        return []

    def refusal(self, names: list[str]) -> str:
        """What the tool says when ``changed`` found something."""
        return (
            f"the run changed the session's variable {', '.join(names)} although the sandbox is read-only; "
            "pyaichat could not undo it - check it before relying on it"
        )


class ReadWatch(Watch):
    """A reading tool (``eval_expr``, the ``expr`` of ``get_repr``…) in the forked child: the copy it runs on
    may be changed — ``sorted(xs, key=lst.append)``, ``arr.clip(0, 1, out=arr)`` — and the session never sees
    it, but the tool refuses the result, so that an expression that would write is told so rather than
    answered. A fingerprint of each variable it names, taken in the parent before the fork and compared in
    the child after."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = {n: v for n, v in view.items() if type(v) is not Hidden}
        self.before = {n: fingerprint(v) for n, v in self.view.items()}

    @contextmanager
    def running(self) -> Iterator[None]:
        if scrub.applied():  # the child hid the secrets in its copy first: that is not the tool's doing
            self.before = {n: fingerprint(v) for n, v in self.view.items()}
        yield

    def changed(self) -> list[str]:
        return [n for n, fp in self.before.items() if fingerprint(self.view[n]) != fp]

    def refusal(self, names: list[str]) -> str:
        return (
            f"it would change the session's {', '.join(names)}, and this tool only reads: it ran on a walled "
            "copy and the session is unchanged (to change the session, propose the code)"
        )


@dataclass(frozen=True)
class Request:
    source: str
    mode: str  # "exec" (run_python) or "eval" (eval_expr)
    policy: SandboxPolicy  # a forked child or this process (``policy``)
    timeout: float
    privacy: str
    limit: int
    secret_names: tuple[str, ...] = ()
    render: Callable[[Any], str] | None = None  # the text of an expression's value (introspection)
    stamp: Any = None  # the session's generation: where its secrets sit is found again when it changes
    roots: tuple[Any, ...] = ()  # more than the session's variables whose secrets the child replaces


@dataclass(frozen=True)
class Secrets:
    """How to recognise secrets (from the registry's ``Masker``), passed in so this module has no opinion;
    ``masker`` itself for what the forked child replaces (``scrub``)."""

    is_secret_name: Callable[[str], bool]
    looks_secret: Callable[[str], bool]
    masker: Any = None


class SandboxPolicy:
    """The members every policy has (see the module docstring); ``ForkedChild`` and ``InProcess`` fill them
    in."""

    name = ""  # the setting's word: "fork" or "inprocess"
    walled = False  # the kernel wall stands around the run: the session's own code may be called
    dialect: type[SandboxTransformer] = SandboxTransformer
    getattr_special: frozenset[str] = frozenset({"format", "format_map"})

    # -- one run ---------------------------------------------------------------------------------------------
    def compile(self, source: str, mode: str = "exec", secret_names: tuple[str, ...] = ()) -> Compiled:
        return compile_snippet(source, self.dialect, mode=mode, secret_names=secret_names)

    def execute(self, req: Request, namespace: Mapping[str, Any], secrets: Secrets) -> dict[str, Any]:
        """Run ``req`` against ``namespace``: ``runner.execute``'s dict; may raise ``CapabilityTimeout``."""
        raise NotImplementedError

    def watch(self, namespace: Mapping[str, Any], view: Mapping[str, Any], reading: bool = False) -> Watch:
        """What the run of the snippet (which sees ``view`` of ``namespace``) must leave as it found it;
        ``reading``: an expression of a reading tool, which must not change even its copy."""
        return ReadWatch(view) if reading else Watch()

    # -- guard hooks ---------------------------------------------------------------------------------------
    def library_call(self, value: Any, where: str, owns: Owns) -> Any:
        """A library function (or ufunc) entering the sandbox."""
        return value

    def memory_view(self, view: memoryview) -> Any:
        return view

    def mutator_refused(self, obj: Any, owns: Owns) -> bool:
        """Whether reading a mutating method (``append``, ``update`` …) of ``obj`` is refused."""
        return False

    def pandas_method(self, method: Any, name: str, obj: Any, owns: Owns) -> Any:
        """A pandas method read from ``obj``."""
        return method

    def module_overrides(
        self, name: str, mod: Any, found: dict[str, Any], owns: Owns, deadline: float
    ) -> dict[str, Any]:
        """The members of module ``name`` the sandbox replaces, given the ones every policy replaces."""
        return found

    # -- what the user is told -----------------------------------------------------------------------------
    def report(self, setting: str) -> list[str]:
        """Which walls stand around ``run_python`` here, one line each (``/tools``)."""
        raise NotImplementedError

    def preview_unavailable(self) -> str | None:
        """Why no preview of a proposal can run under this policy (``None``: it can)."""
        raise NotImplementedError
