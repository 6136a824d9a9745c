"""One proposal path: everything proposed to change the person's session lives here, from its panel to /undo.

A ``Proposal`` is code to run in the session (``kind="code"``) or a call of an outside tool that needs the
person's approval (``kind="tool"``: a name and arguments, not code). Its ``source`` is ``"assistant"`` (our
own model) or the name of an outside client (an MCP client such as "Claude Desktop"); the panel names an
outside source. Whatever its source, every proposal goes through the same steps, in ``Proposals`` only:

1. panel: the front end shows it (an ``ApprovalRequiredEvent`` carrying the proposal);
2. preview: code runs on a walled, forked copy of the session first, and what it would change is shown to
   the person; whoever proposed it is told only what the preview could not see (``Proposal.unseen``);
3. decide: the front end asks the person about the proposal itself (``FrontEnd.decide``: "run", "edit",
   "no", or "shown" where it cannot ask, as with piped input);
4. run: approved code runs as the person's own input, checkpointed for ``/undo`` (``Runtime.run_proposal``);
   an approved tool call runs through the proposal's ``call``;
5. journal: approved code is recorded for ``/save`` (``Journal.approve``);
6. undo: ``Proposals.undo`` takes back the last approved code and tells the assistant.

"edit" puts the code into the person's next input (``FrontEnd.set_next_input``). The next input they run
settles it: run unchanged, it is approved (steps 4 and 5); changed, it is their own input and the outcome
carries the code that ran; anything else (a question, a command, Ctrl-C) declines it. For a tool call "edit"
asks for new arguments instead (``FrontEnd.edit_arguments``).

Two ways in, for any source:

- ``decide(proposal) -> Outcome``, on the front end's own thread (the assistant's ``propose_code`` during a
  turn, a tool call of an outside server during a turn). It returns once the person has answered and what
  they approved has run; for "edit" it returns ``placed`` (the code waits in the next input).
- ``submit(proposal) -> Pending``, from any other thread (an MCP server's request). The proposal waits until
  the front end's prompt is idle: ``on_waiting`` callbacks wake the front end, which calls ``serve()`` on its
  own thread; a line being typed is never interrupted. The caller blocks in ``pending.wait(timeout)``: the
  timeout bounds the wait for an answer (a placed proposal still waits for its run); once the person has
  answered, the wait goes on until what they approved has finished. When no one answers in time the
  proposal is withdrawn: its panel closes (``FrontEnd.withdraw``), nothing of it can run any more, and the
  outcome is ``unanswered``. When the session ends (``close()``), proposals still queued are ``unanswered``
  and code still waiting in the input is ``declined``.

An outside agent's request, on the server's thread::

    pending = controller.proposals.submit(
        Proposal.of_code("df = df.dropna()", "Drop the empty rows.", source="Claude Desktop"))
    outcome = pending.wait(timeout=120.0)
    outcome.status       # "ran" | "edited" | "declined" | "unanswered" | "not_asked" | "failed"
    outcome.code         # the code that ran: the person's version when "edited"
    outcome.output       # what it printed, its value or its error (bounded; mask it before it leaves)
    outcome.preview      # the preview's summary of what it changed, as the person saw it
    outcome.observation  # all of it as one paragraph for a model, with what the preview could not see

A tool of an outside server that needs approval, during the assistant's turn::

    outcome = proposals.decide(Proposal.of_tool("github.create_issue", {"title": "…"}, call=run_it,
                                                source="github"))
    outcome.status, outcome.arguments, outcome.output   # "ran"/"edited"/"declined"…, as called, its result

The vocabulary (``Proposal``, ``Outcome``, ``Decision``, what a model is told) is ``pyaichat.proposal``, below
every proposer; this package is the service: ``service`` (``Proposals``), ``pending`` (a proposal on its way)
and ``outputs`` (the bounded output of a run). It is imported at start-up (the controller builds
the service), so it holds no dataclass and imports the agent's events, the preview and the records only when
a proposal arrives.
"""

from __future__ import annotations

from ..proposal import ASSISTANT, DECLINED, EDITING, NOT_ASKED, Decision, Outcome, Proposal, Status
from .pending import Pending
from .service import Proposals

# the vocabulary, as the proposers outside the core (``mcpserve``) and the tests have long imported it
__all__ = [
    "ASSISTANT",
    "DECLINED",
    "EDITING",
    "NOT_ASKED",
    "Decision",
    "Outcome",
    "Pending",
    "Proposal",
    "Proposals",
    "Status",
]
