"""prompt_toolkit completers over the runtime: the runtime completes (a local namespace or a Jupyter kernel),
these only adapt its answers to the prompt. Loaded on the first TAB, not at start-up."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from ..runtime import Interpreter, Tools

MENTION_PATTERN = re.compile(r"(?<![\w@])@(?P<prefix>\w*)$")


class RuntimeCompleter(Completer):
    """Python mode: the runtime's completions for the text before the cursor."""

    def __init__(self, runtime: Interpreter) -> None:
        self.runtime = runtime

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        try:
            found = self.runtime.complete(document.text, document.cursor_position)
        except Exception:  # completion must never break the prompt (a dead kernel completes nothing)
            return
        for item in found:
            yield Completion(
                item.text, start_position=item.start, display=item.display, display_meta=item.meta
            )


class MentionCompleter(Completer):
    """Assistant mode: ``@name`` completes the runtime's variable names, with their type names."""

    def __init__(self, runtime: Tools) -> None:
        self.runtime = runtime

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        match = MENTION_PATTERN.search(document.current_line_before_cursor)
        if not match:
            return
        prefix = match.group("prefix")
        try:
            names = self.runtime.user_names()
        except Exception:
            return
        for name, kind in sorted(names, key=lambda item: item[0].lower()):
            if name.startswith(prefix):
                yield Completion(name, start_position=-len(prefix), display_meta=kind)


class SlashCommandCompleter(Completer):
    """``/mo<TAB>`` completes slash-command names (in both modes); any other input goes to ``inner``."""

    def __init__(self, inner: Completer, names: Callable[[], Iterable[str]]) -> None:
        self.inner = inner
        self.names = names

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and not any(ch.isspace() for ch in text):
            prefix = text[1:]
            try:
                names = sorted(self.names())
            except Exception:
                return
            for name in names:
                if name.startswith(prefix):
                    yield Completion(name, start_position=-len(prefix), display=f"/{name}")
            return
        yield from self.inner.get_completions(document, complete_event)
