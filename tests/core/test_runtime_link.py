"""The kernel link is transport only: every ``Runtime`` operation is written once, on the local runtime, and
either travels to the kernel by its declaration in ``runtime.kernel_link.OPERATIONS`` or is one of the few the
kernel runtime answers itself (``kernel_link.AT_THE_HOST``). Checked from the declarations, and by running
every operation through a loopback link (JSON on the wire, the kernel's end in this process) — no kernel
needed here; ``tests/kernel/test_kernel_link.py`` does the same through a real one."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from pyaichat.configuration.config import Config
from pyaichat.errors import PyAIChatError
from pyaichat.runtime import KernelUnavailable, LocalRuntime, Runtime
from pyaichat.runtime.kernel import KernelRuntime
from pyaichat.runtime.kernel_link import (
    AT_THE_HOST,
    BY_NAME,
    OPERATIONS,
    LinkedRuntime,
    Operation,
    answer,
    is_attribute,
)
from pyaichat.session import Session
from runtime_examples import invoke, steps, with_defaults


def protocol_members() -> set[str]:
    """The members of ``Runtime`` and of the protocols it is made of (``Interpreter``, ``Tools``)."""
    parts = [cls for cls in Runtime.__mro__ if cls.__module__ == Runtime.__module__]
    return {name for cls in parts for name in vars(cls) if not name.startswith("_")} | {
        name for cls in parts for name in getattr(cls, "__annotations__", {})
    }


# -- the declarations agree ----------------------------------------------------------------------------------
def test_every_runtime_operation_travels_or_is_answered_at_the_host_never_both() -> None:
    travelling, at_host = set(BY_NAME), set(AT_THE_HOST)
    assert len(BY_NAME) == len(OPERATIONS)  # no operation declared twice
    assert travelling & at_host == set()
    assert travelling | at_host == protocol_members(), (
        "a Runtime member is neither declared in kernel_link.OPERATIONS nor in kernel_link.AT_THE_HOST, or a "
        "declared one is not in the Runtime protocol"
    )


def test_the_local_runtime_implements_every_operation_the_kernels_end_runs() -> None:
    for name in protocol_members():
        assert inspect.getattr_static(LocalRuntime, name, None) is not None, name
    for name in BY_NAME:  # a property in the protocol is a property here, and travels as one
        assert isinstance(inspect.getattr_static(Runtime, name), property) == is_attribute(name), name


def test_the_kernel_runtime_sends_every_travelling_operation_and_writes_only_its_own() -> None:
    runtime = KernelRuntime(kernel=object(), settings=Config(audit=False))  # type: ignore[arg-type]
    for name in BY_NAME:
        member = inspect.getattr_static(KernelRuntime, name)
        assert member is vars(LinkedRuntime)[name], f"KernelRuntime re-implements {name}: declare it instead"
        if not is_attribute(name):
            local = inspect.signature(getattr(LocalRuntime, name))
            assert inspect.signature(getattr(KernelRuntime, name)) == local, name
    for name in AT_THE_HOST:
        assert name in vars(KernelRuntime) or name in vars(runtime), f"KernelRuntime does not answer {name}"


# -- every operation through a loopback link -----------------------------------------------------------------
class Recording:
    """The kernel's end of the link: a local runtime that records what each operation asked and answered."""

    def __init__(self, runtime: LocalRuntime) -> None:
        object.__setattr__(self, "runtime", runtime)
        object.__setattr__(self, "seen", [])

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.runtime, name)
        if not callable(value):
            self.seen.append((name, None, value))
            return value

        def record(**arguments: Any) -> Any:
            result = value(**arguments)
            self.seen.append((name, arguments, result))
            return result

        return record

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.runtime, name, value)


class Loopback(LinkedRuntime):
    """The host's end, over a wire that is JSON text to ``far`` in this process."""

    def __init__(self, far: Any, config: Config) -> None:
        self.far = far
        self.config = config

    def exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        return json.loads(json.dumps(answer(self.far, json.loads(json.dumps(request)))))


def test_every_operation_travels_to_the_local_runtime_and_its_answer_comes_back(tmp_path: Path) -> None:
    far = Recording(LocalRuntime(Session()))
    host = Loopback(far, Config(audit=True, max_output_chars=1500))
    examples = steps(tmp_path)
    assert {name for name, _ in examples if name != "code"} == set(BY_NAME), (
        "each operation in kernel_link.OPERATIONS needs an example in tests/runtime_examples.py"
    )
    for name, arguments in examples:
        if name == "code":
            assert far.runtime.session.run(arguments).ok
            continue
        through = invoke(host, name, arguments)
        asked, received, answered = far.seen[-1]
        assert asked == name
        if not is_attribute(name):  # the local method got the very arguments, defaults included
            assert received == with_defaults(getattr(LocalRuntime, name), arguments), name
        expected = list(answered) if name == "history" else answered
        assert type(through) is type(expected) and through == expected, name
    # the settings travelled: the kernel's end ran with the host's bounds
    assert far.runtime.config.max_output_chars == 1500 and far.runtime.config.audit


class Unreachable(LinkedRuntime):
    def __init__(self) -> None:
        self.config = Config(audit=False)

    def exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        raise KernelUnavailable("The kernel is gone.")


def _real_answers(tmp_path: Path) -> dict[str, tuple[dict[str, Any] | None, Any]]:
    """Each operation's example arguments and what a reachable runtime answers them."""
    runtime = LocalRuntime(Session(config=Config(audit=False)))
    found: dict[str, tuple[dict[str, Any] | None, Any]] = {}
    for name, arguments in steps(tmp_path):
        if name == "code":
            runtime.session.run(arguments)
        elif name not in found:
            found[name] = (arguments, invoke(runtime, name, arguments))
    return found


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_an_operation_the_kernel_cannot_answer_degrades_or_says_why(op: Operation, tmp_path: Path) -> None:
    arguments, real = _real_answers(tmp_path)[op.name]
    if op.otherwise is None:
        with pytest.raises(KernelUnavailable, match="The kernel is gone"):
            invoke(Unreachable(), op.name, arguments)
        return
    degraded = invoke(Unreachable(), op.name, arguments)
    assert type(degraded) is type(real)  # the same kind of answer, and it says why wherever it says anything
    # nothing (an empty answer, or a pair of empty ones), or it says why
    assert degraded in ([], ([], [])) or "The kernel is gone." in repr(degraded)


def test_a_refusal_in_the_kernel_is_the_same_sentence_here(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such.snapshot")
    local = LocalRuntime(Session())
    with pytest.raises(PyAIChatError) as there:
        local.load_variables(missing)
    with pytest.raises(PyAIChatError) as here:
        Loopback(LocalRuntime(Session()), Config(audit=False)).load_variables(missing)
    assert str(here.value) == str(there.value)


def test_a_failure_or_an_unreadable_answer_is_one_sentence_not_a_crash() -> None:
    class Broken(Loopback):
        def exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
            return {"value": {"not": "a result"}} if request["op"] == "call" else {"value": 7}

    broken = Broken(None, Config(audit=False))
    result = broken.call("get_type", {"expr": "x"})
    assert not result.ok and "could not be read" in (result.error or "")
    with pytest.raises(PyAIChatError, match="undo could not be read"):
        broken.undo()
    assert answer(LocalRuntime(Session()), {"op": "format_disk"}) == {
        "error": "pyaichat's kernel helper does not know the request 'format_disk'."
    }
    unsendable = Loopback(LocalRuntime(Session()), Config(audit=False)).call("get_type", {"expr": {1, 2}})
    assert not unsendable.ok and "cannot be sent to the kernel" in (unsendable.error or "")
