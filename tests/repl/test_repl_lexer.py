"""Python highlighting: its lexer (~80 ms of compiling regular expressions, holding the GIL) is built once the
prompt is idle, never in the way of keys that keep coming (type-ahead, a paste, one line and Ctrl-D)."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest

from pyaichat.modes import Mode
from pyaichat.repl.prompt_session import LEXER_IDLE, _ModeLexer


class FakeApp:
    is_running = True

    def __init__(self) -> None:
        self.invalidated = threading.Event()

    def invalidate(self) -> None:
        self.invalidated.set()


def test_the_lexer_is_built_once_the_prompt_is_idle_not_while_keys_keep_coming(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = threading.Event()
    load = _ModeLexer._load

    def watched_load(self: _ModeLexer, app: object) -> None:
        started.set()
        load(self, app)  # type: ignore[arg-type]

    monkeypatch.setattr(_ModeLexer, "_load", watched_load)
    ctrl = SimpleNamespace(mode=Mode.PYTHON)
    lexer = _ModeLexer(ctrl)  # type: ignore[arg-type]
    app = FakeApp()

    async def typing_then_idle() -> None:
        for _ in range(4):  # a key, and so a redraw, every half of the idle time
            lexer.on_render(app)  # type: ignore[arg-type]
            await asyncio.sleep(LEXER_IDLE / 2)
        assert not started.is_set()  # nothing competes with the keys
        await asyncio.sleep(LEXER_IDLE * 2)  # the person stops typing
        assert started.is_set()

    asyncio.run(typing_then_idle())
    assert app.invalidated.wait(30)  # redrawn highlighted
    assert lexer() is not None
    ctrl.mode = Mode.ASSISTANT
    assert lexer() is None  # questions are not Python


def test_drawn_outside_an_event_loop_the_lexer_is_built_at_once() -> None:
    lexer = _ModeLexer(SimpleNamespace(mode=Mode.PYTHON))  # type: ignore[arg-type]
    app = FakeApp()
    lexer.on_render(app)  # type: ignore[arg-type]
    assert app.invalidated.wait(30) and lexer() is not None
