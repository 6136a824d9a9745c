"""Key bindings of the interactive prompt, each gated by a ``Condition`` (the ptpython way).

TAB on an empty buffer toggles the mode, TAB after only whitespace indents (Python mode), any other TAB
completes; Shift-TAB toggles and keeps the text; Enter runs complete Python input and otherwise opens an
auto-indented new line; Alt-Enter always opens a new line; Assistant-mode Enter sends the question.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from prompt_toolkit.application import get_app
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.completion.base import get_common_complete_suffix
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import (
    Condition,
    emacs_insert_mode,
    has_completions,
    has_focus,
    has_selection,
    vi_insert_mode,
)
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from ..controller import Mode

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document

    from ..controller import Controller

INDENT = "    "
_DEDENT_RE = re.compile(r"^\s*(return|pass|break|continue|raise)\b")


def next_indent(document: Document) -> str:
    """Indentation of a new line after the cursor's: kept, +4 after ``:``, -4 after ``return`` & co."""
    line = document.current_line_before_cursor
    indent = line[: len(line) - len(line.lstrip())]
    code = line.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + INDENT
    if _DEDENT_RE.match(line):
        return indent[: max(0, len(indent) - len(INDENT))]
    return indent


def newline_with_indent(buffer: Buffer) -> None:
    buffer.insert_text("\n" + next_indent(buffer.document))


def complete_now(buffer: Buffer) -> None:
    """TAB completion computed at once: one candidate is inserted, several insert their common part and open
    the menu. (Synchronous, so the result does not depend on when the next key arrives.)"""
    if buffer.complete_state:
        buffer.complete_next()
        return
    completer = buffer.completer
    if completer is None:
        return
    document = buffer.document
    completions = list(completer.get_completions(document, CompleteEvent(completion_requested=True)))
    if not completions:
        return
    if len(completions) == 1:
        buffer.apply_completion(completions[0])
        return
    common = get_common_complete_suffix(document, completions)
    if common:
        buffer.insert_text(common)
    buffer.start_completion(select_first=False)


def build_key_bindings(ctrl: Controller) -> KeyBindings:
    """The REPL's own bindings, added on top of prompt_toolkit's emacs/vi defaults."""
    # Only the main input buffer: Ctrl-R search and other widgets keep their own Enter and TAB.
    kb = KeyBindings()
    main = has_focus(DEFAULT_BUFFER)

    python_mode = Condition(lambda: ctrl.mode is Mode.PYTHON)
    inserting = emacs_insert_mode | vi_insert_mode

    @Condition
    def buffer_empty() -> bool:
        return get_app().current_buffer.text == ""

    @Condition
    def only_whitespace_before_cursor() -> bool:
        before = get_app().current_buffer.document.current_line_before_cursor
        return before == "" or before.isspace()

    @Condition
    def completion_selected() -> bool:
        state = get_app().current_buffer.complete_state
        return bool(state and state.current_completion)

    def _toggle(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        buffer.cancel_completion()
        ctrl.toggle_mode()

    kb.add("tab", filter=main & buffer_empty)(_toggle)

    indenting = python_mode & only_whitespace_before_cursor & ~has_completions

    @kb.add("tab", filter=main & ~buffer_empty & inserting & indenting)
    def _indent(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text(INDENT)

    @kb.add("tab", filter=main & ~buffer_empty & inserting & ~indenting)
    def _complete(event: KeyPressEvent) -> None:
        complete_now(event.current_buffer)

    @kb.add("s-tab", filter=main)
    def _backtab(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.complete_state:
            buffer.complete_previous()
        else:
            _toggle(event)

    @kb.add("enter", filter=main & has_completions & completion_selected)
    def _accept_completion(event: KeyPressEvent) -> None:
        event.current_buffer.complete_state = None

    @kb.add("enter", filter=main & ~(has_completions & completion_selected))
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        buffer.cancel_completion()
        if ctrl.kind(buffer.text) in ("command", "question"):
            buffer.validate_and_handle()  # a question or a slash command is always one line
            return
        document = buffer.document
        at_end = document.is_cursor_at_the_end or not document.text_after_cursor.strip()
        if (document.line_count == 1 or at_end) and ctrl.runtime.is_complete(document.text):
            if at_end:
                buffer.text = buffer.text.rstrip()  # drop the blank line and indentation that ended a block
            buffer.validate_and_handle()
        else:
            newline_with_indent(buffer)

    @kb.add("escape", "enter", filter=main)
    def _newline(event: KeyPressEvent) -> None:
        newline_with_indent(event.current_buffer)

    @kb.add(
        "backspace", filter=main & inserting & python_mode & only_whitespace_before_cursor & ~has_selection
    )
    def _dedent(event: KeyPressEvent) -> None:
        """Backspace in leading whitespace removes one indentation level, like ptpython and IPython."""
        buffer = event.current_buffer
        before = buffer.document.current_line_before_cursor
        if not before:
            buffer.delete_before_cursor(1)
            return
        remove = len(before) % len(INDENT) or len(INDENT)
        buffer.delete_before_cursor(min(remove, len(before)))

    return kb
