"""Ghost text at the prompt: a prompt_toolkit buffer connected to the suggestion engine (``agent.suggest``).

Where the cursor ends a line of Python, the suggestion shows dimmed after it: first the user's own history
(instant, the way fish and ptpython do it), else what the engine knows for this position, else — once the
user pauses — the model's answer, which arrives from the engine's thread and is shown only if the text is
still the one it was asked for. Each change of the text is one cheap call to the engine; nothing here waits.

- **REPL**: ``GhostText`` sets ``buffer.suggestion`` itself on every change (so deleting a character shows a
  suggestion too), ``ghost_bindings`` take it (→, End, Ctrl-E, Ctrl-F: all of it; Alt-→, Alt-F: one word),
  ``GhostLineProcessor`` draws it at the end of a line that is not the last one.
- **Terminal IPython** keeps its own history suggestions, keys and drawing: ``ipython.suggest`` asks this
  module only for the model's part (``GhostText(..., own_history=False)``).

One line is shown at a time; the rest of a block the model answered follows line by line as the user
accepts and presses Enter (the engine keeps the answer).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import get_app
from prompt_toolkit.auto_suggest import AutoSuggest, Suggestion
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput

from ..modes import Mode

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document
    from prompt_toolkit.key_binding import KeyPressEvent

    from ..agent.suggest import Suggester
    from ..configuration.config import Config

HISTORY_LINES = 5000  # history lines searched for a match, newest first
_WORD = re.compile(r"\s*(?:[A-Za-z_]\w*|\d[\w.]*|[^\w\s]+[A-Za-z_]\w*|[^\w\s]+)")


def position(document: Document) -> tuple[str, str] | None:
    """(text before, text after) the cursor when a suggestion fits there: the cursor ends its line, the line
    has code (or is an empty line inside a block), and it is not a slash command."""
    if not document.is_cursor_at_the_end_of_line:
        return None
    text = document.text
    if not text.strip() or text.lstrip().startswith(("/", "?", "!", "%")):
        return None
    line = document.current_line_before_cursor
    if not line.strip() and document.cursor_position_row == 0:
        return None
    before = document.text_before_cursor
    return before, document.text_after_cursor


class GhostTextLoop:
    """The prompt's own event loop as the suggestion engine uses it (``agent.suggest.GhostTextLoop``): its
    timers, and work to do once the key being handled is drawn (after the application's next render)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop: asyncio.AbstractEventLoop | None = None
        self._queued: list[Callable[[], None]] = []
        app.after_render += self._rendered

    def call_later(self, delay: float, func: Callable[[], None]) -> object:
        assert self.loop is not None
        return self.loop.call_later(delay, func)

    def after_echo(self, func: Callable[[], None]) -> None:
        self._queued.append(func)

    def _rendered(self, app: Any) -> None:
        queued, self._queued = self._queued, []
        for func in queued:
            func()

    def detach(self) -> None:
        """Run what waits now (the prompt is going away) and stop listening to its renders."""
        self._rendered(self.app)
        self.app.after_render -= self._rendered


class RaisedLines:
    """The lines of a session's inputs whose last run raised (an input that later ran fine is forgiven),
    recomputed only when the session's history grows."""

    def __init__(self, history: Callable[[], Sequence[Any]]) -> None:
        self._history = history
        self._seen = -1
        self._lines: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        entries = self._history()
        if len(entries) != self._seen:
            self._seen = len(entries)
            failed: dict[str, bool] = {}
            for entry in entries:
                failed[entry.source.strip()] = not entry.ok
            lines: dict[bool, set[str]] = {True: set(), False: set()}
            for source, bad in failed.items():
                lines[bad].update(line for line in source.splitlines() if line.strip())
            self._lines = frozenset(lines[True] - lines[False])  # a line that also ran fine is still offered
        return self._lines


def first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def first_word(text: str) -> str:
    """The next word of a suggestion for Alt-→: a name, a number, or punctuation with the name after it."""
    match = _WORD.match(text)
    return match.group(0) if match and match.group(0) else text[:1]


class HistoryLines:
    """The prompt's history as lines, newest first and without repeats, for fish-style suggestions; built
    once and extended as inputs are added (a few microseconds per keystroke). ``raised`` gives this session's
    inputs whose last run raised: their lines are not offered again (a line that failed is not one to repeat;
    ↑ still recalls it, to fix it)."""

    def __init__(self, raised: Callable[[], Collection[str]] = frozenset) -> None:
        self._seen_strings = 0
        self._lines: list[str] = []
        self._raised = raised

    def match(self, history: Any, line: str) -> str | None:
        """The rest of the newest history line that starts with ``line`` (which has code in it)."""
        if not line.strip():
            return None
        self._refresh(history)
        raised = self._raised()
        for candidate in self._lines:
            if len(candidate) > len(line) and candidate.startswith(line) and candidate not in raised:
                return candidate[len(line) :]
        return None

    def _refresh(self, history: Any) -> None:
        strings = history.get_strings()  # oldest first; prompt_toolkit keeps them in memory
        if len(strings) == self._seen_strings:
            return
        new = strings[self._seen_strings :]
        self._seen_strings = len(strings)
        fresh = [line for string in reversed(new) for line in reversed(string.splitlines()) if line.strip()]
        merged = fresh + self._lines
        self._lines = list(dict.fromkeys(merged))[:HISTORY_LINES]


class GhostText(AutoSuggest):
    """Connects one buffer to the suggestion engine. ``engine`` returns the session's ``Suggester`` (or
    ``None`` when suggestions are off); ``allowed`` says whether the prompt is in Python mode."""

    def __init__(
        self,
        engine: Callable[[], Suggester | None],
        allowed: Callable[[], bool],
        *,
        own_history: bool = True,
        raised: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        self.engine = engine
        self.allowed = allowed
        self.own_history = own_history
        self.history = HistoryLines(raised)
        self._buffer: Buffer | None = None
        self._last: tuple[str, str] | None = None
        self._known: tuple[tuple[str, str], str] | None = None  # what the engine knew at the last change
        self._shown: tuple[tuple[str, str] | None, str] | None = None  # what is on the buffer, and where
        self._app: Any = None
        self._browsing: tuple[Any, int] | None = None  # the buffer's history lines, and the place in them
        self._recalled = False  # the text is a history line as recalled (↑, Ctrl-R), not edited since
        self._prompt: GhostTextLoop | None = None  # the prompt's loop, as the engine uses it

    # -- wiring ----------------------------------------------------------------------------------------------
    def attach(self, buffer: Buffer) -> None:
        self._buffer = buffer
        buffer.on_text_changed += self._changed
        buffer.on_cursor_position_changed += self._moved

    def detach(self) -> None:
        buffer, self._buffer = self._buffer, None
        if buffer is not None:
            buffer.on_text_changed -= self._changed
            buffer.on_cursor_position_changed -= self._moved
        prompt, self._prompt = self._prompt, None
        if prompt is not None:
            prompt.detach()
        self.cancel()

    def cancel(self) -> None:
        self._last = self._known = self._shown = None
        engine = self.engine()
        if engine is not None:
            engine.cancel()

    def quiet(self) -> None:
        """Before the user's code runs: nothing pending, and the session no longer being read."""
        self._last = None
        engine = self.engine()
        if engine is not None:
            engine.quiet()

    # -- the buffer's events (the prompt's event loop) -------------------------------------------------
    def _changed(self, buffer: Buffer) -> None:
        self._recalled = self._navigated(buffer)
        self._update(buffer)

    def _navigated(self, buffer: Buffer) -> bool:
        """Did this change of the text come from moving through the history (↑/↓, Ctrl-R) rather than from
        an edit? prompt_toolkit keeps the history as working lines with an index into them: a move changes
        the place counted from the newest line (loading the history adds lines at the old end and keeps
        it); a new prompt has new working lines."""
        lines = getattr(buffer, "_working_lines", None)
        if lines is None:
            return False
        place = (lines, len(lines) - 1 - buffer.working_index)
        previous, self._browsing = self._browsing, place
        return previous is not None and previous[0] is lines and previous[1] != place[1]

    def _update(self, buffer: Buffer) -> None:
        self._app = get_app()  # the prompt's app, for answers that arrive from the engine's thread
        text = self.suggest(buffer)
        if self.own_history and text:
            buffer.suggestion = Suggestion(text)
            self._shown = (self._last, text)
            buffer.on_suggestion_set.fire()

    def get_suggestion(self, buffer: Buffer, document: Document) -> Suggestion | None:
        """``AutoSuggest``'s question (prompt_toolkit asks it after each typed key): what is shown for
        ``document`` already, so its answer never clears the ghost text."""
        shown = self._shown
        where = (document.text_before_cursor, document.text_after_cursor)
        return Suggestion(shown[1]) if shown is not None and shown[0] == where else None

    async def get_suggestion_async(self, buffer: Buffer, document: Document) -> Suggestion | None:
        return self.get_suggestion(buffer, document)

    def _moved(self, buffer: Buffer) -> None:
        where = position(buffer.document)
        if where is None:
            if self._last is not None:
                self.cancel()
            return
        if where != self._last:  # moved to the end of a line without typing (End, ↓)
            self._update(buffer)

    def suggest(self, buffer: Buffer) -> str | None:
        """What to show now for the buffer's text (history first, then what the engine knows), and tell the
        engine where the cursor is. ``None``: nothing yet."""
        where = position(buffer.document) if self.allowed() else None
        engine = self.engine() if where is not None else None
        if where is None or engine is None:
            self.cancel()
            return None
        self._last = where
        if self.own_history:
            line = buffer.document.current_line_before_cursor
            found = self.history.match(buffer.history, line)
            if found:
                engine.cancel()
                return found
        # A line recalled from history is not an edit: what is known for it shows, nothing is asked. The
        # prompt's own loop times the pause and aborts a stale request, so that no key wakes the engine.
        asked = not self._recalled
        known = engine.edit(where[0], where[1], self._deliver, ask=asked, prompt=self._prompt_loop())
        shown = first_line(known) if known else None
        self._known = (where, shown) if shown else None
        return shown

    def _prompt_loop(self) -> GhostTextLoop | None:
        """The running prompt's loop, for the engine (``None`` outside a running application)."""
        app = self._app
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        if app is None or getattr(app, "after_render", None) is None:
            return None
        prompt = self._prompt
        if prompt is None or prompt.app is not app:
            if prompt is not None:
                prompt.detach()
            prompt = self._prompt = GhostTextLoop(app)
        prompt.loop = loop
        return prompt

    def known_for(self, document: Document) -> str | None:
        """What the engine knew for ``document`` at its last change (IPython's auto-suggest asks this after
        its own history found nothing)."""
        known = self._known
        if known is None or not self.allowed():
            return None
        where = (document.text_before_cursor, document.text_after_cursor)
        return known[1] if known[0] == where else None

    def _deliver(self, before: str, after: str, text: str) -> None:
        """From the engine's thread: show ``text`` if the buffer is still where it was asked."""
        app = self._app
        loop = getattr(app, "loop", None)
        if loop is None or not app.is_running:
            return
        try:
            loop.call_soon_threadsafe(self._show, before, after, text)
        except RuntimeError:  # the prompt's loop has closed meanwhile
            pass

    def _show(self, before: str, after: str, text: str) -> None:
        buffer = self._buffer
        shown = first_line(text)
        if buffer is None or not shown or not self.allowed():
            return
        document = buffer.document
        if (document.text_before_cursor, document.text_after_cursor) != (before, after):
            return
        if buffer.suggestion is not None and buffer.suggestion.text:
            return  # history got there first
        buffer.suggestion = Suggestion(shown)
        self._shown = ((before, after), shown)
        buffer.on_suggestion_set.fire()
        if self._app is not None:
            self._app.invalidate()


# -- taking a suggestion ---------------------------------------------------------------------------------
@Condition
def suggestion_shown() -> bool:
    buffer = get_app().current_buffer
    suggestion = buffer.suggestion
    return bool(suggestion and suggestion.text) and buffer.document.is_cursor_at_the_end_of_line


def ghost_bindings() -> KeyBindings:
    """→, End, Ctrl-E and Ctrl-F take the whole suggestion, Alt-→ and Alt-F one word; only while one is
    shown at the cursor (otherwise the keys do what they always do)."""
    kb = KeyBindings()

    @kb.add("right", filter=suggestion_shown)
    @kb.add("end", filter=suggestion_shown)
    @kb.add("c-e", filter=suggestion_shown)
    @kb.add("c-f", filter=suggestion_shown)
    def _accept(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.suggestion:
            buffer.insert_text(buffer.suggestion.text)

    @kb.add("escape", "right", filter=suggestion_shown)
    @kb.add("escape", "f", filter=suggestion_shown)
    def _accept_word(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.suggestion:
            buffer.insert_text(first_word(buffer.suggestion.text))

    return kb


class GhostLineProcessor(Processor):
    """Draws the suggestion at the end of the cursor's line when it is not the buffer's last line
    (prompt_toolkit's own ``AppendAutoSuggestion`` draws it on the last line)."""

    def __init__(self, style: str = "class:auto-suggestion") -> None:
        self.style = style

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        document = ti.document
        suggestion = ti.buffer_control.buffer.suggestion
        if (
            suggestion
            and suggestion.text
            and ti.lineno == document.cursor_position_row
            and ti.lineno != document.line_count - 1
            and document.is_cursor_at_the_end_of_line
        ):
            return Transformation(fragments=[*ti.fragments, (self.style, first_line(suggestion.text))])
        return Transformation(fragments=ti.fragments)


# -- the toolbar --------------------------------------------------------------------------------------------
def toolbar_part(config: Config, engine: Suggester | None, mode: Mode) -> list[tuple[str, str]]:
    """``suggest: MODEL (this machine)`` or ``suggest: MODEL → host``: what the user types in Python mode
    goes there. Empty when suggestions are off or in Assistant mode."""
    model = config.suggest_model
    if not model or mode is not Mode.PYTHON:
        return []
    from ..agent.suggest.route import destination  # standard library; only with suggestions on

    host, local = destination(config)
    if engine is not None and engine.stopped_by is not None:
        return [("class:bottom-toolbar.remote", f"suggest: {model} ✗ (see /suggest)"), ("", " │ ")]
    if engine is not None and engine.stats.failing:  # the last request failed: say so, not only in /suggest
        return [("class:bottom-toolbar.remote", f"suggest: {model} ✗ failing (see /suggest)"), ("", " │ ")]
    if local:
        return [("", f"suggest: {model} (this machine) │ ")]
    return [("class:bottom-toolbar.remote", f"suggest: {model} → {host}"), ("", " │ ")]
