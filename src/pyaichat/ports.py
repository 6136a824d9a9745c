"""The interface the session's core is written against, apart from what implements it: a front end (what
shows events and asks the person).

``FrontEnd`` declares every member a front end has; ``BaseFrontEnd`` gives the ones a front end may not
need their default (nothing to withdraw, no argument editor, no form to answer), so the core never asks
whether a front end has a member. The terminal (``repl.frontend.ReplFrontEnd``), piped input
(``piped.PlainFrontEnd``) and IPython (``ipython.frontend.IPythonFrontEnd``) derive from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .agent.events import Event, PageEvent
    from .mcptools.approval import Answer, Question
    from .proposal import Decision, Proposal


Place = Literal["repl", "ipython", "jupyter", "piped"]  # where a front end runs (``FrontEnd.place``)


class FrontEnd(Protocol):
    """What the shared core needs from a front end."""

    interactive: bool  # a person can be asked at a terminal (not piped input, not a notebook's kernel)
    remembers: bool  # keeps the session for --resume when the autosave setting is "auto" (not piped input)
    # where it runs: "repl", "ipython" (a terminal), "jupyter" (a kernel's front end: a notebook, jupyter
    # console, qtconsole) or "piped"; commands and hints are worded for it (``commands.wording``)
    place: Place
    where: str  # what this session is called to outside agents (MCP): "pyaichat REPL", "IPython in Jupyter"…

    @property
    def last_page(self) -> PageEvent | None:
        """The last long output shown, for ``/more`` to page (``None`` where there is no pager)."""
        ...

    def emit(self, event: Event) -> None:
        """Show ``event``."""
        ...

    def decide(self, proposal: Proposal) -> Decision:
        """Ask the person what to do with ``proposal``, its panel on screen ("shown" where no one can be
        asked)."""
        ...

    def set_next_input(self, code: str) -> None:
        """Put ``code`` into the next Python-mode input for the person to edit and run."""
        ...

    def edit_arguments(self, proposal: Proposal) -> dict[str, Any] | None:
        """A tool call's arguments, edited by the person (``None``: they gave up)."""
        ...

    def withdraw(self, call_id: str, code: str | None = None) -> None:
        """No one waits for that proposal any more: close its question (called from another thread); ``code``:
        it was placed in the next input, which drops it if the person has not changed it."""
        ...

    def answer_question(self, question: Question) -> Answer:
        """An MCP server's question (elicitation), its panel on screen: the person's answer."""
        ...


class BaseFrontEnd:
    """The defaults of ``FrontEnd``'s members a front end may not need."""

    interactive = False
    remembers = False
    place: Place = "piped"
    where = "pyaichat (piped input)"

    @property
    def last_page(self) -> PageEvent | None:  # no pager
        return None

    def set_next_input(self, code: str) -> None:  # nowhere to put it
        pass

    def edit_arguments(self, proposal: Proposal) -> dict[str, Any] | None:
        return None  # no editor: the call does not run

    def withdraw(self, call_id: str, code: str | None = None) -> None:  # it never blocks, places nothing
        pass

    def answer_question(self, question: Question) -> Answer:
        from .mcptools.approval import Answer  # only with a server's question

        return Answer("cancel")  # no one to fill in the form


if TYPE_CHECKING:  # the controller holds these; the type checker reads them (no class made at start-up)

    class Serving(Protocol):
        """Serving this session to outside agents over MCP (``mcpserve.service.McpService``, one per session,
        built by ``assemble`` with the first ``/mcp on``)."""

        url: str | None

        def start(self, host: str | None = None) -> str: ...

        def stop(self) -> str: ...

        def status(self) -> str: ...

        def token(self) -> str | None: ...

    class Undo(Protocol):
        """What the session can take back (``/undo``, ``/redo``, ``/checkpoints``): checkpoints of the whole
        process where pyaichat runs the REPL itself (``checkpoints``). Where it does not (IPython, a kernel)
        the controller has none, and ``/undo`` takes back the last approved proposal alone."""

        def undo(self, count: int) -> None:
            """Go back ``count`` inputs (whoever made them); says what happened, or why not."""
            ...

        def redo(self) -> None:
            """Back to where the person was before ``/undo``, while nothing new has run."""
            ...

        def report(self) -> str:
            """``/checkpoints``: what can be undone, what each input changed, what going back cannot undo."""
            ...

        def status(self) -> str | None:
            """A few words for the toolbar (how far back ``/undo`` can go), or ``None``."""
            ...
