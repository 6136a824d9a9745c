"""The ``--server`` menu: what Enter takes is what the prompt shows."""

from __future__ import annotations

import pytest

from pyaichat.runtime.jupyter_server.access import _menu
from pyaichat.runtime.jupyter_server.kernels import KernelEntry
from pyaichat.runtime.jupyter_server.rest import ServerError


def choose(entries: list[KernelEntry], *answers: str) -> tuple[KernelEntry | None, list[str]]:
    shown: list[str] = []
    left = list(answers)

    def ask(prompt: str) -> str:
        shown.append(prompt)
        return left.pop(0)

    return _menu("http://127.0.0.1:8888/", entries, "python3", ask, shown.append), shown


def test_no_kernel_running_asks_yes_or_no_and_enter_is_the_capital_yes() -> None:
    choice, shown = choose([], "")
    assert choice is None  # a new kernel
    prompt = shown[-1]
    assert prompt.endswith("? [Y/n]: ") and "a new python3 kernel" in prompt
    assert "[n]" not in prompt


def test_no_says_no_and_starts_nothing() -> None:
    with pytest.raises(ServerError, match="nothing was started"):
        choose([], "n")


def test_with_kernels_the_prompt_says_enter_takes_the_first() -> None:
    entries = [KernelEntry("a" * 32, "python3", "idle", ""), KernelEntry("b" * 32, "python3", "idle", "")]
    choice, shown = choose(entries, "")
    assert choice is entries[0]
    assert shown[-1] == "Attach to [1-2, n] (Enter: 1): "
    assert choose(entries, "n")[0] is None
    assert choose(entries, "2")[0] is entries[1]
