"""Completion when the namespace lives in a Jupyter kernel: the kernel completes (``complete_request``).

Used by the REPL instead of ``completion.PythonCompleter`` when the session is a ``KernelSession``: the values
are in the kernel, so only the kernel can complete names, attributes and keys (IPython's own completer).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from .completion import MENTION_PATTERN


class KernelCompleter(Completer):
    """Python mode: the kernel's own completions for the text before the cursor."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        try:
            matches, start, _end = self.session.complete(document.text, document.cursor_position)
        except Exception:  # completion must never break the prompt (a dead kernel completes nothing)
            return
        cursor = document.cursor_position
        for match in matches:
            yield Completion(match, start_position=start - cursor)


class KernelMentionCompleter(Completer):
    """Assistant mode: ``@name`` completes the kernel's variable names, with their type names."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        match = MENTION_PATTERN.search(document.current_line_before_cursor)
        if not match:
            return
        prefix = match.group("prefix")
        try:
            names = self.session.user_names()
        except Exception:
            return
        for name, kind in sorted(names, key=lambda item: item[0].lower()):
            if name.startswith(prefix):
                yield Completion(name, start_position=-len(prefix), display_meta=kind)
