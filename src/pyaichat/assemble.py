"""The one place a session is put together: a runtime (where the user's namespace lives, with the session's
``Settings``), a front end (what reads input and shows events), the assistant, and the controller that routes
between them.

Every entry point ends here: the command line's piped mode (``cli``), the terminal REPL (``repl.app``, once
its early prompt is drawn), a Jupyter kernel (``attach``) and the IPython extension. The runtime comes in
already made, since each place makes its own (a ``Session`` here, a kernel's, IPython's ``user_ns``); the
settings are the runtime's, and the controller is the one that changes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .agent.assistant import Assistant  # cheap: a question loads the agent's machinery
from .controller import Controller

if TYPE_CHECKING:
    from .agent.assistant import LLMFactory
    from .ports import FrontEnd, Serving
    from .runtime import Runtime


def assemble(runtime: Runtime, frontend: FrontEnd, *, llm_factory: LLMFactory | None = None) -> Controller:
    """The session over ``runtime``, shown by ``frontend``: its controller, holding its assistant and (with
    the first ``/mcp on``) its MCP service. ``llm_factory`` makes the model client (default: litellm's)."""
    assistant = Assistant(runtime.settings, runtime, llm_factory=llm_factory)
    return Controller(runtime, frontend, assistant=assistant, serving=_serving)


def _serving(ctrl: Controller) -> Serving:
    """The session's MCP service, over what the controller holds (the SDK's side starts with it)."""
    from .mcpserve.hosting import serve  # with the first /mcp on

    return serve(ctrl.runtime, ctrl.frontend, ctrl.gate, ctrl.proposals)
