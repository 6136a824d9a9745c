"""Outside calls and the person's own work, in a served session: a call never sees an input half-done, it
waits its bound and is told the session is busy, and it runs as soon as the input ends. In IPython, each
cell holds the session the same way.

Ordered by events: user code that blocks until the test lets it go stands for "code still running".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Served

from pyaichat.mcpserve.gate import BUSY

pytestmark = pytest.mark.e2e

WAIT = 30.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = Served(
        tmp_path_factory.mktemp("mcp") / "state",
        "import threading\nstarted = threading.Event()\ngo = threading.Event()\nx = 0\ny = 0",
        audit=False,
    )
    yield served
    served.stop()


def call(served: Served, expr: str, wait: float) -> dict[str, Any]:
    backend = served.service.backend
    assert backend is not None
    backend._busy_wait = lambda: wait
    return backend.call("eval_expr", {"expr": expr}, backend.clients.seen("t", "agent", "test"))


def test_a_call_during_the_persons_code_waits_then_sees_it_whole(served: Served) -> None:
    served.ctrl.handle("started.clear(); go.clear()")
    person = threading.Thread(target=served.ctrl.handle, args=("x = 1\nstarted.set()\ngo.wait(30)\ny = 2",))
    person.start()
    try:
        assert served.session.namespace["started"].wait(WAIT)
        busy = call(served, "(x, y)", 0.05)
        assert busy.ok is False and busy.error == BUSY
        box: list = []
        waiting = threading.Thread(target=lambda: box.append(call(served, "(x, y)", WAIT)))
        waiting.start()
        served.session.namespace["go"].set()
        waiting.join(WAIT)
    finally:
        served.session.namespace["go"].set()
        person.join(WAIT)
    assert box and box[0].ok and "(1, 2)" in box[0].text  # never (1, 0): the input was whole


def test_the_person_is_never_refused_and_the_session_answers_right_after(served: Served) -> None:
    served.ctrl.handle("z = 5")
    assert served.session.namespace["z"] == 5
    assert "5" in call(served, "z", 1.0).text


@pytest.fixture
def ipython_served(tmp_path: Path) -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell
    from serve_helpers import environment

    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext pyaichat")
    with environment(tmp_path / "state"):
        shell.run_cell("%ai /mcp on")
    yield shell
    shell.run_cell("%ai /mcp off")
    import pyaichat

    pyaichat.unload_ipython_extension(shell)
    InteractiveShell.clear_instance()


def test_in_ipython_each_cell_holds_the_session_and_the_served_namespace_is_the_shells(
    ipython_served,
) -> None:
    from pyaichat.ipython.extension import get

    shell = ipython_served
    extension = get(shell)
    assert extension is not None
    service = extension.controller.mcp(create=False)
    assert service is not None and service.serving and service.where == "IPython (no terminal prompt)"
    backend = service.backend
    assert backend is not None and service.show is None and backend.proposer is None  # no terminal here
    me = backend.clients.seen("t", "agent", "test")
    shell.run_cell("answer = 42")
    assert "42" in backend.call("eval_expr", {"expr": "answer"}, me).text

    seen: list = []

    def during_a_cell() -> None:
        backend._busy_wait = lambda: 0.05
        seen.append(backend.call("eval_expr", {"expr": "answer"}, me))

    shell.user_ns["probe"] = during_a_cell
    shell.run_cell("probe()")  # an outside call made while a cell runs is told the session is busy
    assert seen[0].error == BUSY
    backend._busy_wait = lambda: 1.0
    assert backend.call("eval_expr", {"expr": "answer"}, me).ok
