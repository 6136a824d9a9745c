"""How a runtime operation travels to a Jupyter kernel: the one declared table, and both ends of the link.

A kernel session runs pyaichat's own *local* runtime inside the kernel, over the kernel's ``user_ns``
(``kernel_helper``). The host's ``KernelRuntime`` sends it each operation declared in ``OPERATIONS`` as one
request over a comm (``LinkedRuntime``, here) and the kernel's end runs it on that local runtime (``answer``):
nothing is written twice. Masking, bounds, privacy and the audit therefore happen once, in the kernel, where
the capability runs; the host carries the answer.

What the kernel runtime does itself is listed in ``AT_THE_HOST``, each with its reason: what Jupyter itself
offers (an input as an ``execute_request``, the kernel's completion, interrupts, restarts, liveness) and what
the host knows without asking.

**Adding an operation**: write it on ``LocalRuntime`` (its arguments must be JSON values), declare it in the
``Runtime`` protocol (``Interpreter`` or ``Tools``), add one ``Operation`` to ``OPERATIONS`` — how its answer
crosses the wire (``Wire``; plain JSON needs nothing), how long the host waits for it, and what it answers
when the kernel cannot (or ``None``: it raises the one sentence) — and its one-line member on
``LinkedRuntime``, with the local member's signature. ``tests/core/test_runtime_link.py`` fails until the
protocol, the local runtime, the linked one and this table agree, and until the operation has an example
call there.

The wire: a request is ``{"op": name, "args": {parameter: value}, "settings": {...}, "id": n}``, where
``settings`` are the host's capability settings (``SETTINGS``: never the model, the key or the base), which
the kernel's runtime takes as its own when they changed; the reply is ``{"value": answer}`` or
``{"error": sentence}``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import PyAIChatError
from . import KernelUnavailable
from .local import LocalRuntime

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..capabilities.catalog import CapabilityResult
    from ..capabilities.toolbox import Toolbox
    from ..configuration.config import Config
    from ..records import HistoryEntry

# The comm target of pyaichat's helper inside a kernel (``kernel_helper``) and the version of this protocol:
# a helper that speaks another one is told to match the host's pyaichat.
COMM_TARGET = "pyaichat"
PROTOCOL = 2

# Settings the capabilities read; only these travel to the kernel (never the model, the API key or the base).
SETTINGS = (
    "privacy",
    "max_output_chars",
    "tool_timeout",
    "sandbox_isolation",
    "secret_names",
    "secret_patterns",
    "audit",
)

WHERE = "The session's variables live in a Jupyter kernel; every tool runs there."


def settings_of(config: Config) -> dict[str, Any]:
    """The part of ``config`` that bounds an operation in the kernel, as plain JSON values."""
    return {key: getattr(config, key) for key in SETTINGS}


# -- how an answer crosses the wire --------------------------------------------------------------------------
def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Wire:
    """How an operation's answer crosses the wire: ``encode`` (in the kernel) makes JSON values of it,
    ``decode`` (on the host) makes the answer again. Each may bound what it carries."""

    encode: Callable[[Any], Any] = _same
    decode: Callable[[Any], Any] = _same


JSON = Wire()
TUPLE = Wire(decode=tuple)
HISTORY_KEPT = 200  # the host shows and saves a kernel's recent inputs, not all of a long session's
NAMES_KEPT = 5000  # @name completion of a namespace with more names completes the first ones


def _history_out(entries: Any) -> list[dict[str, Any]]:
    return [asdict(entry) for entry in list(entries)[-HISTORY_KEPT:]]


def _history_in(data: list[dict[str, Any]]) -> list[Any]:
    from ..records import HistoryEntry  # with the first history read

    return [HistoryEntry(**entry) for entry in data]


def _result_in(data: dict[str, Any]) -> Any:
    from ..capabilities.catalog import CapabilityResult  # pydantic: with the first question

    return CapabilityResult.model_validate(data)


def _toolbox_in(data: dict[str, Any]) -> Toolbox:
    from ..capabilities.toolbox import Toolbox  # with the first question

    return Toolbox.from_dict(data)


HISTORY = Wire(_history_out, _history_in)
NAMES = Wire(lambda pairs: [list(pair) for pair in pairs[:NAMES_KEPT]], lambda data: [tuple(p) for p in data])
CAPABILITY_RESULT = Wire(lambda result: result.model_dump(mode="json"), _result_in)
TOOLBOX = Wire(lambda box: box.to_dict(), _toolbox_in)


# -- how long the host waits, and what it answers when the kernel cannot -------------------------------------
def _briefly(config: Config) -> float:
    return 10.0


def _a_tool(config: Config) -> float:
    """A capability stops itself at ``tool_timeout``; the kernel may first finish another request."""
    return float(config.tool_timeout) * 2 + 5.0


def _work(config: Config) -> float:
    """A preview forks the kernel; a snapshot writes every variable."""
    return float(config.tool_timeout) * 2 + 30.0


Otherwise = Callable[[str, Mapping[str, Any]], Any]


def _failed_call(sentence: str, arguments: Mapping[str, Any]) -> Any:
    from ..capabilities.catalog import CapabilityResult  # pydantic: with the first question

    return CapabilityResult(name=str(arguments.get("name")), ok=False, error=sentence)


def _picture_without_kernel(sentence: str, arguments: Mapping[str, Any]) -> str:
    return f"## Session\n{WHERE}\n{sentence}"


def _nothing(sentence: str, arguments: Mapping[str, Any]) -> list[Any]:
    return []


def _gates_only(sentence: str, arguments: Mapping[str, Any]) -> Toolbox:
    """No tool runs in a kernel that cannot answer; the approval gate (``propose_code``) runs here, in the
    assistant, and an approved proposal runs as an ordinary input, so it is still offered."""
    from ..capabilities import all_capabilities  # pydantic: with the first question
    from ..capabilities.toolbox import Toolbox

    return Toolbox(tuple(cap.tool() for cap in all_capabilities() if not cap.executable), (sentence,))


def _walls_unknown(sentence: str, arguments: Mapping[str, Any]) -> list[str]:
    return [f"run_python runs in the kernel, which cannot say now which walls stand there: {sentence}"]


def _a_moment(config: Config) -> float:
    """A suggestion, or the secret values asked between inputs, is worth a second of the kernel's time."""
    return 1.0


def _no_values(sentence: str, arguments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    return [], []  # the files written here mask by rule and by what their own texts bind


def _no_facts(sentence: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"facts": [], "inputs": [], "note": sentence}


@dataclass(frozen=True)
class Operation:
    """One runtime operation that the kernel runtime sends to the local runtime inside the kernel. Its
    arguments are those of the ``LocalRuntime`` member of the same name (a property takes none)."""

    name: str
    wire: Wire = JSON
    wait: Callable[[Config], float] = _briefly  # seconds the host waits for the answer
    otherwise: Otherwise | None = None  # the answer when the kernel cannot give one; None: raise the sentence
    # asked from a background thread: gives way (answers ``otherwise`` at once) while the link is busy
    gives_way: bool = False


OPERATIONS: tuple[Operation, ...] = (
    # the assistant's view
    Operation("call", CAPABILITY_RESULT, wait=_a_tool, otherwise=_failed_call),
    Operation("tools", TOOLBOX, otherwise=_gates_only),
    Operation("sandbox_walls", otherwise=_walls_unknown),
    Operation("picture", otherwise=_picture_without_kernel),
    Operation("history", HISTORY, otherwise=_nothing),
    Operation("user_names", NAMES, otherwise=_nothing),
    Operation("audit_log", TUPLE),
    # the kernel's secret values, so that the files the host writes (/save, the resume file) mask them; asked
    # between inputs, so a kernel busy with another client's cell is not waited for long
    Operation("know_secrets", TUPLE, wait=_a_moment, otherwise=_no_values),
    # ghost-text suggestions: the facts about the names on the line, or none rather than a wait
    Operation("suggestion_facts", wait=_a_moment, otherwise=_no_facts, gives_way=True),
    # proposals and the work that lasts
    Operation("preview", wait=_work),
    Operation("begin_proposal", wait=_work),
    Operation("end_proposal", wait=_work),
    Operation("undo", TUPLE, wait=_work),
    Operation("save_variables", wait=_work),
    Operation("load_variables", wait=_work),
)
BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}

# The members of ``Runtime`` the kernel runtime answers itself, and why none of them is a request to the
# kernel's runtime.
AT_THE_HOST: dict[str, str] = {
    "settings": "the host's holder of the session's settings; their capability part travels with a request",
    "config": "the host's current settings (``settings.current()``)",
    "run": "an execute_request: output streams here as it comes, input() is answered here, Ctrl-C interrupts",
    "last_error": "read from the execute reply of the inputs run from here",
    "complete": "the kernel's own complete_request (it knows its magics)",
    "is_complete": "the kernel's own is_complete_request (it knows cell magics)",
    "describe": "which kernel this is and how it was reached",
    "status_lines": "the kernel's state and the link's round trip, as the host's connection measures them",
    "audit_key": "the records the host writes (its MCP servers' calls) are the host's",
    "close": "stops the channels, and the kernel when pyaichat started it",
    "run_proposal": "begin_proposal and end_proposal travel; the code runs as run runs it",
    "last_input_number": "the execution count of the inputs run from here, known without a request",
    "keeps_inputs": "the kernel numbers its own inputs",
    "adopt_history": "the kernel numbers its own inputs",
}


def is_attribute(name: str) -> bool:
    """Whether runtime member ``name`` is read as a property rather than called."""
    return isinstance(inspect.getattr_static(LocalRuntime, name, None), property)


# -- the kernel's end ----------------------------------------------------------------------------------------
def answer(runtime: LocalRuntime, request: Mapping[str, Any]) -> dict[str, Any]:
    """Run one request's operation on ``runtime`` (the local runtime over the kernel's namespace), configured
    by the host's settings: they travel with every request, and the kernel's runtime takes them into its
    own ``Settings`` only when they differ from what it holds. Never raises: a refusal or a failure is an
    ``error`` sentence for the host."""
    name = request.get("op")
    op = BY_NAME.get(name) if isinstance(name, str) else None
    if op is None:
        return {"error": f"pyaichat's kernel helper does not know the request {name!r}."}
    try:
        runtime.settings.replace(**dict(request.get("settings") or {}))  # the same: nothing changes
        member = getattr(runtime, op.name)
        value = member if is_attribute(op.name) else member(**dict(request.get("args") or {}))
        return {"value": op.wire.encode(value)}
    except PyAIChatError as exc:  # a refusal for the user (a foreign snapshot, a full disk): one sentence
        return {"error": str(exc)}
    except Exception as exc:  # a bug here must not break the kernel's shell loop
        return {"error": f"pyaichat's kernel helper failed: {type(exc).__name__}: {exc}"}


# -- the host's end ------------------------------------------------------------------------------------------
class LinkedRuntime:
    """The operations of ``OPERATIONS``, each a member that sends one request and returns the answer, with
    the signature of the ``LocalRuntime`` member it stands for (the ``Runtime`` protocol documents them). A
    subclass supplies ``config`` and ``exchange``."""

    config: Config

    def exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``request`` to the kernel's runtime and return its reply (``KernelUnavailable`` when the
        kernel cannot answer)."""
        raise NotImplementedError

    def send(self, op: Operation, arguments: dict[str, Any]) -> Any:
        """One operation through the link: its answer, its ``otherwise`` answer when the kernel could not
        give one, or the one sentence raised (``PyAIChatError``)."""
        request = {"op": op.name, "args": arguments, "settings": settings_of(self.config)}
        try:
            reply = self.exchange(request, op.wait(self.config))
        except KernelUnavailable as exc:
            if op.otherwise is None:
                raise
            return op.otherwise(str(exc), arguments)
        except (TypeError, ValueError) as exc:  # an argument that is not a JSON value never left
            sentence = f"The arguments of {op.name} cannot be sent to the kernel ({exc})."
            return self._refused(op, sentence, arguments)
        if "error" in reply or "value" not in reply:
            return self._refused(op, str(reply.get("error") or "The kernel sent no answer."), arguments)
        try:
            return op.wire.decode(reply["value"])
        except Exception as exc:  # a malformed answer is a failed operation, not a crash
            sentence = f"The kernel's answer to {op.name} could not be read ({type(exc).__name__}: {exc})."
            return self._refused(op, sentence, arguments)

    @staticmethod
    def _refused(op: Operation, sentence: str, arguments: Mapping[str, Any]) -> Any:
        if op.otherwise is None:
            raise PyAIChatError(sentence)
        return op.otherwise(sentence, arguments)

    # -- the operations, one request each (``tests/core/test_runtime_link.py`` holds them to the table) ------
    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        origin: str = "assistant",
        images: bool = False,
    ) -> CapabilityResult:
        return self.send(BY_NAME["call"], {"name": name, "args": args, "origin": origin, "images": images})

    def tools(self) -> Toolbox:
        return self.send(BY_NAME["tools"], {})

    def sandbox_walls(self) -> list[str]:
        return self.send(BY_NAME["sandbox_walls"], {})

    def picture(self) -> str:
        return self.send(BY_NAME["picture"], {})

    @property
    def history(self) -> Sequence[HistoryEntry]:
        return self.send(BY_NAME["history"], {})

    def user_names(self) -> list[tuple[str, str]]:
        return self.send(BY_NAME["user_names"], {})

    def audit_log(self, count: int) -> tuple[str, list[dict[str, Any]]]:
        return self.send(BY_NAME["audit_log"], {"count": count})

    def suggestion_facts(self, before: str, after: str = "") -> dict[str, list[str]]:
        return self.send(BY_NAME["suggestion_facts"], {"before": before, "after": after})

    def know_secrets(self) -> tuple[list[str], list[str]]:
        from ..capabilities.redact import set_known_values  # with the first file that lasts

        found, environment = self.send(BY_NAME["know_secrets"], {})
        if found or environment:  # none (or no answer in time): the values known from before stay known
            set_known_values(found, environment)  # this process writes the files that must mask them
        return found, environment

    def preview(self, source: str) -> dict[str, Any]:
        return self.send(BY_NAME["preview"], {"source": source})

    def begin_proposal(self, source: str) -> None:
        return self.send(BY_NAME["begin_proposal"], {"source": source})

    def end_proposal(self) -> None:
        return self.send(BY_NAME["end_proposal"], {})

    def undo(self) -> tuple[bool, str]:
        return self.send(BY_NAME["undo"], {})

    def save_variables(self, path: str | None, include_secrets: bool = False) -> str:
        return self.send(BY_NAME["save_variables"], {"path": path, "include_secrets": include_secrets})

    def load_variables(self, path: str | None) -> str:
        return self.send(BY_NAME["load_variables"], {"path": path})
