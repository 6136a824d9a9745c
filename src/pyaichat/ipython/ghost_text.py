"""Ghost text in terminal IPython, through IPython's own auto-suggestion.

IPython already shows fish-style suggestions from its history, with its own keys (→ or End take all of it,
Alt-F a word, Ctrl-→ a token, Alt-→ a character, Ctrl-↑/↓ another history match) and its drawing of
suggestions on any line. pyaichat keeps all of that and adds the model's suggestion where the history has
none: the shell's provider (``shell.auto_suggest``) becomes ``LiveAutoSuggest``, IPython's own
``NavigableAutoSuggestFromHistory`` with one more source, and the buffer reports each change to the
suggestion engine (``repl.suggest.GhostText``). ``%unload_ext`` puts IPython's provider back.

IPython's provisional LLM hook (``llm_provider_class``) is not used: it needs jupyter-ai's provider classes
and is asked only when a key is pressed, not when the user pauses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.terminal.shortcuts.auto_suggest import NavigableAutoSuggestFromHistory
from prompt_toolkit.auto_suggest import Suggestion

from ..modes import Mode
from ..repl.ghost_text import GhostText

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document

    from ..controller import Controller


class LiveAutoSuggest(NavigableAutoSuggestFromHistory):
    """IPython's history suggestions first (when the shell had them on), then the model's."""

    def __init__(self, ghost: GhostText, *, history: bool = True) -> None:
        super().__init__()
        self.ghost = ghost
        self.history = history

    def get_suggestion(self, buffer: Buffer, document: Document) -> Suggestion | None:
        if self.history:
            found = super().get_suggestion(buffer, document)
            if found is not None and found.text:
                self.ghost.cancel()  # the user's own line wins; no request for it
                return found
        text = self.ghost.known_for(document)
        return Suggestion(text) if text else None


class IPythonSuggestions:
    """Installs (and removes) the model's suggestions on a terminal IPython shell."""

    def __init__(self, shell: Any, controller: Controller) -> None:
        self.shell = shell
        self.controller = controller
        self.ghost = GhostText(
            controller.active_suggester, lambda: controller.mode is Mode.PYTHON, own_history=False
        )
        self.provider: LiveAutoSuggest | None = None
        self._original: Any = None

    def install(self) -> None:
        pt_app = getattr(self.shell, "pt_app", None)
        if pt_app is None or self.provider is not None:
            return
        self._original = self.shell.auto_suggest
        if isinstance(self._original, NavigableAutoSuggestFromHistory):
            self._original.disconnect()
        self.provider = LiveAutoSuggest(self.ghost, history=self._original is not None)
        self.shell.auto_suggest = pt_app.auto_suggest = self.provider
        self.provider.connect(pt_app)
        self.ghost.attach(pt_app.default_buffer)
        self.shell.events.register("pre_run_cell", self._pre_run_cell)

    def uninstall(self) -> None:
        provider, self.provider = self.provider, None
        if provider is None:
            return
        try:
            self.shell.events.unregister("pre_run_cell", self._pre_run_cell)
        except ValueError:
            pass
        self.ghost.detach()
        provider.disconnect()
        pt_app = getattr(self.shell, "pt_app", None)
        if self.shell.auto_suggest is provider:
            self.shell.auto_suggest = self._original
            if pt_app is not None:
                pt_app.auto_suggest = self._original
                if isinstance(self._original, NavigableAutoSuggestFromHistory):
                    self._original.connect(pt_app)
        self.controller.close()

    def _pre_run_cell(self, info: Any) -> None:
        """A cell is about to run: nothing pending, and the namespace no longer being read for facts."""
        self.ghost.quiet()
